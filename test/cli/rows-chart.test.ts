/**
 * The chart summarize_rows draws: which panels a table gets, and a PNG that
 * decodes to the size its SVG declared, with the histogram's bars and the
 * map's countries in it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHART_MAX_ROWS, chartRows, chartSpecFromRows, pngFromSvg, svgFromChartSpec } from '../../src/cli/rows-chart.js';
import { decodePng, inkShare, pngSize, type DecodedPng } from '../support/png.js';
import { codeOf } from '../support/code-of.js';

/** Earthquake-like rows, deterministic: magnitudes 4..6.5, spread over the globe. */
function quakes(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    _row_id: i,
    mag: 4 + ((i * 7) % 26) / 10,
    place: `place ${i}`,
    longitude: -170 + ((i * 37) % 340),
    latitude: -60 + ((i * 23) % 130),
    depth: (i * 13) % 600,
  }));
}

/** Pixels of exactly this colour. */
function pixelsOf(png: DecodedPng, [r, g, b]: [number, number, number]): number {
  let n = 0;
  for (let o = 0; o < png.pixels.length; o += png.channels) {
    if (png.pixels[o] === r && png.pixels[o + 1] === g && png.pixels[o + 2] === b) n++;
  }
  return n;
}

function svgSize(svg: string): { width: number; height: number } {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
  return { width: Number(/\bwidth="([\d.]+)"/.exec(root)?.[1]), height: Number(/\bheight="([\d.]+)"/.exec(root)?.[1]) };
}

test('earthquakes get a magnitude histogram and a longitude/latitude map over the countries', async () => {
  const rows = quakes(128);
  const spec = chartSpecFromRows(rows, { world: { type: 'Topology', objects: {}, arcs: [] } }) as any;
  assert.equal(spec.hconcat.length, 2);
  assert.equal(spec.hconcat[0].encoding.x.title, 'mag');
  assert.equal(spec.hconcat[0].encoding.x.bin.maxbins, 24);
  const map = spec.hconcat[1];
  assert.equal(map.layer.length, 2, 'countries, then the points');
  assert.equal(map.layer[0].mark.type, 'geoshape');
  assert.deepEqual(Object.keys(map.layer[1].encoding), ['longitude', 'latitude', 'size', 'color']);
  assert.equal(map.layer[1].encoding.color.title, 'depth');
});

test('the PNG decodes to the size its SVG declared, with bars and countries drawn', async () => {
  const { chart } = await chartRows(quakes(128));
  assert.ok(chart);
  const png = decodePng(chart.png);
  assert.deepEqual({ width: png.width, height: png.height }, { width: chart.width, height: chart.height });
  // Two panels side by side: wider than tall, and big enough to read.
  assert.ok(png.width > 800 && png.width < 1400, `width ${png.width}`);
  assert.ok(png.height > 300 && png.height < 600, `height ${png.height}`);
  assert.ok(inkShare(png) > 0.05, `ink ${inkShare(png)}`);
  assert.ok(pixelsOf(png, [0x4c, 0x78, 0xa8]) > 5000, 'histogram bars (#4c78a8)');
  assert.ok(pixelsOf(png, [0xe6, 0xe6, 0xe6]) > 5000, 'countries (#e6e6e6) from vega-datasets world-110m');
});

test('rendering is 1:1: the PNG is as large as the SVG', async () => {
  const svg = await svgFromChartSpec(chartSpecFromRows(quakes(10))!);
  const { png } = await pngFromSvg(svg);
  assert.deepEqual(pngSize(png), svgSize(svg));
});

test('a table without coordinates gets the histogram of its first numeric column only', async () => {
  const rows = [
    { _row_id: 0, name: 'a', price: 3, qty: 1 },
    { _row_id: 1, name: 'b', price: null, qty: 2 },
    { _row_id: 2, name: 'c', price: 7.5, qty: 2 },
  ];
  const spec = chartSpecFromRows(rows) as any;
  assert.equal(spec.hconcat.length, 1);
  assert.equal(spec.hconcat[0].encoding.x.title, 'price');
  const { chart } = await chartRows(rows);
  assert.ok(chart);
  const png = decodePng(chart.png);
  assert.ok(png.width < 500, `one panel is narrow: ${png.width}`);
  assert.ok(inkShare(png) > 0.02);
});

test('nothing numeric, nothing to chart; a mixed column is not numeric', async () => {
  assert.deepEqual(await chartRows([{ _row_id: 0, a: 'x', b: true }]), { chart: undefined, leftOut: [] });
  assert.deepEqual(await chartRows([]), { chart: undefined, leftOut: [] });
  assert.equal(
    chartSpecFromRows([
      { _row_id: 0, a: 1 },
      { _row_id: 1, a: 'two' },
    ]),
    undefined,
  );
});

test('above CHART_MAX_ROWS 1 row in k is drawn and the title says so', () => {
  const rows = quakes(CHART_MAX_ROWS * 2 + 1);
  const spec = chartSpecFromRows(rows) as any;
  assert.ok(spec.hconcat[0].data.values.length <= CHART_MAX_ROWS);
  assert.match(spec.title.text, /^20,001 rows \(1 row in 3 drawn\)$/);
});

test('columns named like Object.prototype members (Vega failed on them: "Operator not defined: undefined") are left out and listed', async () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
  const rows = Array.from({ length: 20 }, (_, i) => {
    const row: Record<string, unknown> = { _row_id: i };
    for (const name of names) Object.defineProperty(row, name, { value: i * 1.5, enumerable: true, writable: true, configurable: true });
    row['a.b'] = i;
    return row;
  });
  const { chart, leftOut } = await chartRows(rows);
  assert.deepEqual(
    leftOut,
    names.map((column) => ({ column, reason: 'name' })),
  );
  assert.ok(chart, 'the other numeric column is drawn');
  assert.ok(pixelsOf(decodePng(chart.png), [0x4c, 0x78, 0xa8]) > 2000, 'histogram bars (#4c78a8)');
  assert.deepEqual(await chartRows(rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k === '_row_id' || k === 'toString')))), {
    chart: undefined,
    leftOut: [{ column: 'toString', reason: 'name' }],
  });
});

test("a column whose values span less than the smallest normal double is left out instead of hanging Vega's binning", { timeout: 60_000 }, async () => {
  const { chart, leftOut } = await chartRows([
    { _row_id: 0, x: 0 },
    { _row_id: 1, x: 5e-324 },
  ]);
  assert.equal(chart, undefined);
  assert.deepEqual(leftOut, [{ column: 'x', reason: 'range' }]);
});

test('what Vega or resvg cannot draw is S2SP_ERR_CHART_UNDRAWABLE, never another error', async () => {
  // A map whose one point is off the globe, sized by a column of one tiny value: resvg got an SVG of NaN size.
  const rows = [{ _row_id: 0, lon: 1e-300, lat: 1e308, '': 1e-300 }];
  assert.equal(await codeOf(chartRows(rows)), 'S2SP_ERR_CHART_UNDRAWABLE');
});
