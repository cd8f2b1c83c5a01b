/**
 * A chart of merged rows for people, drawn by a real charting library: a
 * Vega-Lite spec, compiled to Vega, rendered headless to SVG by a Vega View
 * (renderer 'none', text measured by Vega's estimate, so no canvas package),
 * then rasterised to PNG by resvg. For the earthquakes that is a magnitude
 * histogram and a longitude/latitude map over the world's countries; other
 * tables get a histogram of their first numeric column, and a map when they
 * have coordinates.
 *
 * vega, vega-lite and @resvg/resvg-js are optional packages
 * (optional-package.ts), imported on first use.
 */
import { readFile } from 'node:fs/promises';
import type { TopLevelSpec } from 'vega-lite';
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';
import type { Row } from '../table/rows-from-table.js';
import { vegaDatasetPath } from './default-dataset.js';
import { importOptional } from '../optional-package.js';

/** A rendered chart. */
export interface RowsChart {
  /** PNG bytes. */
  png: Uint8Array;
  /** Pixels, as the SVG declared them (rendered at scale 1). */
  width: number;
  height: number;
}

type HConcatSpec = Extract<TopLevelSpec, { hconcat: unknown }>;
type Panel = HConcatSpec['hconcat'][number];
type LayerPanel = Extract<Panel, { layer: unknown }>;
type MapLayer = LayerPanel['layer'][number];

/** Rows drawn at most; above it every k-th row is drawn, and the title says so. */
export const CHART_MAX_ROWS = 10_000;

// First match wins. Names are compared lower-cased.
const HISTOGRAM_PREFERRED = ['mag', 'magnitude'];
const LONGITUDE_NAMES = ['longitude', 'lon', 'lng', 'long'];
const LATITUDE_NAMES = ['latitude', 'lat'];
const COLOR_NAMES = ['depth'];
// SVG font-family lists fall through to what the machine has; resvg honours them.
const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';

/**
 * Numeric columns the chart leaves out, and why: `name` for a name Vega
 * cannot take as a title (a member of Object.prototype such as
 * `constructor` or `toString`: Vega looks titles up in plain objects and
 * fails with "Operator not defined", drawing an empty panel), `range` for
 * values too close together to bin (Vega's binning never ends on a span
 * below the smallest normal double).
 */
export interface LeftOutColumn {
  column: string;
  reason: 'name' | 'range';
}

/** The smallest positive normal double: a histogram's span must be at least this. */
const MIN_BINNABLE_SPAN = 2 ** -1022;

/** Options of {@link chartSpecFromRows}. */
export interface ChartSpecOptions {
  /** A TopoJSON topology with a `countries` object, drawn under the map (none: points only). */
  world?: object;
}

/**
 * The Vega-Lite spec charting `rows`, or undefined when they hold no numeric
 * column it can draw. Column values are copied under fixed internal names,
 * so column names with dots or brackets need no escaping; names Vega cannot
 * take as titles, and histograms it cannot bin, are left out and listed in
 * `leftOut` when given.
 */
export function chartSpecFromRows(rows: readonly Row[], options: ChartSpecOptions = {}, leftOut: LeftOutColumn[] = []): TopLevelSpec | undefined {
  const numeric: string[] = [];
  for (const column of numericColumns(rows)) {
    if (isObjectMember(column)) leftOut.push({ column, reason: 'name' });
    else numeric.push(column);
  }
  const pick = (names: readonly string[]) => numeric.find((c) => names.includes(c.toLowerCase()));
  const lon = pick(LONGITUDE_NAMES);
  const lat = pick(LATITUDE_NAMES);
  const hasMap = lon !== undefined && lat !== undefined;
  const coordinates = new Set([lon, lat]);
  let measure = pick(HISTOGRAM_PREFERRED) ?? numeric.find((c) => !coordinates.has(c));
  if (measure !== undefined && !binnable(rows, measure)) {
    leftOut.push({ column: measure, reason: 'range' });
    measure = undefined;
  }
  if (measure === undefined && !hasMap) return undefined;
  const color = pick(COLOR_NAMES);

  const step = Math.max(1, Math.ceil(rows.length / CHART_MAX_ROWS));
  const values: Record<string, unknown>[] = [];
  for (let i = 0; i < rows.length; i += step) {
    const row = rows[i];
    values.push({
      value: measure === undefined ? null : finiteOrNull(row[measure]),
      lon: lon === undefined ? null : finiteOrNull(row[lon]),
      lat: lat === undefined ? null : finiteOrNull(row[lat]),
      color: color === undefined ? null : finiteOrNull(row[color]),
    });
  }
  const shown = step === 1 ? '' : ` (1 row in ${step} drawn)`;
  const panels: Panel[] = [];
  if (measure !== undefined) {
    panels.push({
      width: 300,
      height: 260,
      title: `Histogram of ${measure}`,
      data: { values },
      transform: [{ filter: 'isValid(datum.value)' }],
      mark: { type: 'bar', color: '#4c78a8', stroke: 'white', strokeWidth: 0.5 },
      encoding: {
        x: { field: 'value', type: 'quantitative', bin: { maxbins: 24 }, title: measure },
        y: { aggregate: 'count', type: 'quantitative', title: 'rows' },
      },
    });
  }
  if (hasMap) {
    const layers: MapLayer[] = [];
    if (options.world !== undefined) {
      layers.push({
        data: { values: options.world, format: { type: 'topojson', feature: 'countries' } },
        mark: { type: 'geoshape', fill: '#e6e6e6', stroke: 'white', strokeWidth: 0.5 },
      });
    }
    layers.push({
      data: { values },
      transform: [{ filter: 'isValid(datum.lon) && isValid(datum.lat) && abs(datum.lat) <= 90 && abs(datum.lon) <= 180' }],
      mark: { type: 'circle', opacity: 0.75, stroke: '#333333', strokeWidth: 0.4, color: '#d62728' },
      encoding: {
        longitude: { field: 'lon', type: 'quantitative' },
        latitude: { field: 'lat', type: 'quantitative' },
        ...(measure === undefined ? {} : { size: { field: 'value', type: 'quantitative', title: measure, scale: { zero: false, range: [15, 220] } } }),
        ...(color === undefined ? {} : { color: { field: 'color', type: 'quantitative', title: color, scale: { scheme: 'viridis' } } }),
      },
    });
    panels.push({ width: 520, height: 260, title: `${lon} / ${lat}`, projection: { type: 'equalEarth' }, layer: layers });
  }
  const spec: HConcatSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: `${rows.length.toLocaleString('en-US')} rows${shown}`, anchor: 'start' },
    config: { font: FONT, view: { stroke: null }, legend: { orient: 'right' } },
    background: 'white',
    padding: 12,
    hconcat: panels,
    resolve: { scale: { size: 'independent', color: 'independent' } },
  };
  return spec;
}

/**
 * Renders a Vega-Lite spec to SVG with a headless Vega View. Vega logs most
 * dataflow errors instead of throwing them and draws what is left; here an
 * error it logs fails the chart, rather than a half-drawn picture and a
 * stack in the log.
 * @throws S2SPError `S2SP_ERR_CHART_UNDRAWABLE`, `S2SP_ERR_CLI_PACKAGE_MISSING`
 */
export async function svgFromChartSpec(spec: TopLevelSpec): Promise<string> {
  const vegaLite = await importOptional<typeof import('vega-lite')>('vega-lite');
  const vega = await importOptional<typeof import('vega')>('vega');
  const errors: unknown[] = [];
  const logger = vega.logger(vega.Error);
  logger.error = (...args: readonly unknown[]) => {
    errors.push(args.at(-1));
    return logger;
  };
  return undrawable(async () => {
    const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none', logger });
    try {
      const svg = await view.toSVG();
      if (errors.length > 0) throw errors[0];
      return svg;
    } finally {
      view.finalize();
    }
  });
}

/** Rasterises an SVG at scale 1 on white. @throws S2SPError `S2SP_ERR_CHART_UNDRAWABLE`, `S2SP_ERR_CLI_PACKAGE_MISSING` */
export async function pngFromSvg(svg: string): Promise<RowsChart> {
  const { Resvg } = await importOptional<typeof import('@resvg/resvg-js')>('@resvg/resvg-js');
  return undrawable(async () => {
    const rendered = new Resvg(svg, { background: 'white', font: { loadSystemFonts: true } }).render();
    return { png: rendered.asPng(), width: rendered.width, height: rendered.height };
  });
}

/** Runs a drawing step, turning what Vega or resvg throws into our error. */
async function undrawable<T>(draw: () => Promise<T>): Promise<T> {
  try {
    return await draw();
  } catch (error) {
    throw new S2SPError('S2SP_ERR_CHART_UNDRAWABLE', { reason: error instanceof Error ? error.message : String(error) }, { cause: error });
  }
}

/** What {@link chartRows} drew, and which numeric columns it left out. */
export interface ChartOfRows {
  /** The chart; undefined when nothing could be charted. */
  chart: RowsChart | undefined;
  leftOut: LeftOutColumn[];
}

/**
 * Charts `rows` as a PNG; no chart when there is nothing to chart.
 * @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` when vega, vega-lite or @resvg/resvg-js is
 *   not installed; `S2SP_ERR_CHART_UNDRAWABLE` when Vega or resvg fails on these rows
 */
export async function chartRows(rows: readonly Row[]): Promise<ChartOfRows> {
  const leftOut: LeftOutColumn[] = [];
  const spec = chartSpecFromRows(rows, { world: await worldTopology() }, leftOut);
  if (spec === undefined) return { chart: undefined, leftOut };
  return { chart: await pngFromSvg(await svgFromChartSpec(spec)), leftOut };
}

let world: Promise<object | undefined> | undefined;

/** The world's countries from vega-datasets, read once; undefined (a map without countries) when it cannot be read. */
function worldTopology(): Promise<object | undefined> {
  world ??= (async () => {
    try {
      const parsed: unknown = JSON.parse(await readFile(vegaDatasetPath('world-110m.json'), 'utf8'));
      return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
    } catch {
      return undefined;
    }
  })();
  return world;
}

/** Columns (not `_row_id`) holding at least one number and nothing else but nulls, in first-seen order; looks at the first rows only. */
function numericColumns(rows: readonly Row[]): string[] {
  // true: only numbers so far; false: something else seen; absent: nulls only.
  const numeric = new Map<string, boolean>();
  const sample = Math.min(rows.length, 1000);
  for (let i = 0; i < sample; i++) {
    const row = rows[i];
    for (const key of Object.keys(row)) {
      const value = row[key];
      if (key === ROW_ID || value === null || value === undefined) continue;
      const isNumber = typeof value === 'number' && Number.isFinite(value);
      numeric.set(key, isNumber && numeric.get(key) !== false);
    }
  }
  return [...numeric].filter(([, ok]) => ok).map(([key]) => key);
}

/** True for the names of Object.prototype's members (`constructor`, `toString`, `__proto__`...), which Vega cannot take as titles. */
function isObjectMember(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(Object.prototype, name);
}

/** False when the finite values of `column` span a range above zero but too small for Vega to bin. */
function binnable(rows: readonly Row[], column: string): boolean {
  let min = Infinity;
  let max = -Infinity;
  for (const row of rows) {
    const value = finiteOrNull(row[column]);
    if (value === null) continue;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const span = max - min;
  return !(span > 0 && span < MIN_BINNABLE_SPAN);
}

function finiteOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
