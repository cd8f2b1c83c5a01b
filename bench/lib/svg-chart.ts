/**
 * A horizontal grouped bar chart as a standalone SVG string, written by hand
 * (no chart library): one group of bars per case, one bar per series, the
 * median as the bar, min-max as a whisker, the value printed after the bar.
 */

/** One series (a colour in the legend). */
export interface Series {
  name: string;
  color: string;
}

/** One bar. */
export interface Bar {
  series: string;
  value: number;
  min?: number;
  max?: number;
}

/** What to draw. */
export interface BarChart {
  title: string;
  subtitle?: string;
  /** Axis label, e.g. "seconds (median; whisker: min-max)". */
  axis: string;
  series: Series[];
  groups: Array<{ label: string; bars: Bar[] }>;
  /** Formats a value for its label. */
  format: (value: number) => string;
  /** Formats an axis tick (default: `format`); gets the tick step too. */
  tickFormat?: (value: number, step: number) => string;
}

const WIDTH = 920;
const LABEL_WIDTH = 190;
const RIGHT_PAD = 150;
const BAR_HEIGHT = 16;
const BAR_GAP = 4;
const GROUP_GAP = 16;
const TOP = 84;

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A "nice" tick step for an axis up to `max`, about 6 ticks. */
function tickStep(max: number): number {
  const raw = max / 6;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/** Renders the chart. */
export function barChartSvg(chart: BarChart): string {
  const plotWidth = WIDTH - LABEL_WIDTH - RIGHT_PAD;
  const maxValue = Math.max(...chart.groups.flatMap((g) => g.bars.map((b) => Math.max(b.value, b.max ?? 0))));
  const step = tickStep(maxValue);
  const axisMax = Math.ceil(maxValue / step) * step;
  const x = (v: number) => LABEL_WIDTH + (v / axisMax) * plotWidth;
  const color = new Map(chart.series.map((s) => [s.name, s.color]));

  const body: string[] = [];
  let y = TOP;
  for (const group of chart.groups) {
    const groupHeight = group.bars.length * (BAR_HEIGHT + BAR_GAP) - BAR_GAP;
    body.push(`<text x="${LABEL_WIDTH - 10}" y="${y + groupHeight / 2 + 4}" text-anchor="end" class="group">${escape(group.label)}</text>`);
    for (const bar of group.bars) {
      const width = Math.max(1, x(bar.value) - LABEL_WIDTH);
      body.push(
        `<rect x="${LABEL_WIDTH}" y="${y}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="${color.get(bar.series) ?? '#999'}"><title>${escape(`${group.label}, ${bar.series}: ${chart.format(bar.value)}`)}</title></rect>`,
      );
      if (bar.min !== undefined && bar.max !== undefined && bar.max > bar.min) {
        const cy = y + BAR_HEIGHT / 2;
        body.push(
          `<path d="M${x(bar.min).toFixed(1)} ${cy}H${x(bar.max).toFixed(1)}M${x(bar.min).toFixed(1)} ${cy - 4}V${cy + 4}M${x(bar.max).toFixed(1)} ${cy - 4}V${cy + 4}" class="whisker"/>`,
        );
      }
      const labelAt = Math.max(x(bar.value), x(bar.max ?? bar.value)) + 6;
      body.push(`<text x="${labelAt.toFixed(1)}" y="${y + BAR_HEIGHT - 4}" class="value">${escape(`${bar.series} ${chart.format(bar.value)}`)}</text>`);
      y += BAR_HEIGHT + BAR_GAP;
    }
    y += GROUP_GAP;
  }
  const plotBottom = y - GROUP_GAP + 6;

  const grid: string[] = [];
  for (let v = 0; v <= axisMax + step / 1000; v += step) {
    const gx = x(v).toFixed(1);
    grid.push(`<line x1="${gx}" y1="${TOP - 6}" x2="${gx}" y2="${plotBottom}" class="grid"/>`);
    const tick = chart.tickFormat ? chart.tickFormat(v, step) : chart.format(v);
    grid.push(`<text x="${gx}" y="${plotBottom + 16}" text-anchor="middle" class="tick">${escape(tick)}</text>`);
  }

  const legend: string[] = [];
  let lx = LABEL_WIDTH;
  for (const s of chart.series) {
    legend.push(`<rect x="${lx}" y="52" width="12" height="12" fill="${s.color}"/>`);
    legend.push(`<text x="${lx + 17}" y="62" class="legend">${escape(s.name)}</text>`);
    lx += 30 + s.name.length * 7;
  }

  const height = plotBottom + 46;
  return (
    [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
      '<style>.title{font-size:16px;font-weight:bold}.subtitle{font-size:12px;fill:#555}.group{font-size:12px}.value{font-size:11px;fill:#222}.tick{font-size:11px;fill:#555}.legend{font-size:12px}.axis{font-size:12px;fill:#333}.grid{stroke:#e3e3e3;stroke-width:1}.whisker{stroke:#222;stroke-width:1;fill:none}</style>',
      `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
      `<text x="16" y="24" class="title">${escape(chart.title)}</text>`,
      chart.subtitle ? `<text x="16" y="42" class="subtitle">${escape(chart.subtitle)}</text>` : '',
      ...legend,
      ...grid,
      ...body,
      `<text x="${LABEL_WIDTH + plotWidth / 2}" y="${plotBottom + 36}" text-anchor="middle" class="axis">${escape(chart.axis)}</text>`,
      '</svg>',
    ]
      .filter((line) => line !== '')
      .join('\n') + '\n'
  );
}
