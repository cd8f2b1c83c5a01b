import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarizeRows } from '../../src/cli/summarize-rows.js';
import { readTableFile } from '../../src/cli/input/read-table-file.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { vegaData } from './input/fixtures.js';

describe('summarizeRows', () => {
  test('no rows, no columns', () => {
    assert.deepEqual(summarizeRows([]), { row_count: 0, columns: {} });
  });

  test('number columns get count, nulls, min, max, mean', () => {
    const summary = summarizeRows([{ v: 3 }, { v: -1 }, { v: null }, { v: 10 }, {}]);
    assert.deepEqual(summary, {
      row_count: 5,
      columns: { v: { count: 3, nulls: 2, type: 'number', min: -1, max: 10, mean: 4 } },
    });
  });

  test('_row_id is skipped', () => {
    const summary = summarizeRows([
      { _row_id: 0, a: 1 },
      { _row_id: 1, a: 2 },
    ]);
    assert.deepEqual(Object.keys(summary.columns), ['a']);
  });

  test('columns appear in first-seen order; a key missing from a row counts as null', () => {
    const summary = summarizeRows([{ b: 'x' }, { a: 1, b: 'y' }, { c: true }]);
    assert.deepEqual(Object.keys(summary.columns), ['b', 'a', 'c']);
    assert.equal(summary.columns.a.nulls, 2);
    assert.equal(summary.columns.b.nulls, 1);
    assert.equal(summary.columns.c.count, 1);
  });

  test('string columns list the most frequent values, ties by first appearance', () => {
    const values = ['b', 'a', 'c', 'a', 'b', 'd', 'e', 'f', 'f', 'f'];
    const summary = summarizeRows(values.map((s) => ({ s })));
    assert.deepEqual(summary.columns.s, {
      count: 10,
      nulls: 0,
      type: 'string',
      top: [
        { value: 'f', count: 3 },
        { value: 'b', count: 2 },
        { value: 'a', count: 2 },
        { value: 'c', count: 1 },
        { value: 'd', count: 1 },
      ],
    });
  });

  test('a frequent value seen last still makes the top list', () => {
    const rows = ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'late', 'late'].map((s) => ({ s }));
    const top = summarizeRows(rows).columns.s.top!;
    assert.equal(top.length, 5);
    assert.deepEqual(top[0], { value: 'late', count: 2 });
    assert.deepEqual(
      top.slice(1).map((t) => t.value),
      ['u1', 'u2', 'u3', 'u4'],
    );
  });

  test('boolean columns get a top list of booleans and no numeric stats', () => {
    const summary = summarizeRows([{ b: false }, { b: true }, { b: true }]);
    assert.deepEqual(summary.columns.b, {
      count: 3,
      nulls: 0,
      type: 'boolean',
      top: [
        { value: true, count: 2 },
        { value: false, count: 1 },
      ],
    });
  });

  test('mixed kinds and objects are mixed, with no stats; all-null is null', () => {
    const summary = summarizeRows([
      { m: 1, o: { x: 1 }, n: null, s: 'a' },
      { m: 'one', o: [1], n: null, s: 2 },
    ]);
    assert.deepEqual(summary.columns.m, { count: 2, nulls: 0, type: 'mixed' });
    assert.deepEqual(summary.columns.o, { count: 2, nulls: 0, type: 'mixed' });
    assert.deepEqual(summary.columns.n, { count: 0, nulls: 2, type: 'null' });
    assert.deepEqual(summary.columns.s, { count: 2, nulls: 0, type: 'mixed' });
  });

  test('bigints count as numbers; NaN counts but stays out of min/max/mean', () => {
    const summary = summarizeRows([{ v: 5n }, { v: Number.NaN }, { v: 1 }]);
    assert.deepEqual(summary.columns.v, { count: 3, nulls: 0, type: 'number', min: 1, max: 5, mean: 3 });
    assert.deepEqual(summarizeRows([{ v: Number.NaN }]).columns.v, { count: 1, nulls: 0, type: 'number' });
  });

  // A naive running sum loses the 1 next to 1e16.
  test('the mean is compensated against cancellation', () => {
    const summary = summarizeRows([{ v: 1e16 }, { v: 1 }, { v: -1e16 }]);
    assert.equal(summary.columns.v.mean, 1 / 3);
  });

  test('a column named __proto__ is an ordinary entry', () => {
    const row: Record<string, unknown> = {};
    Object.defineProperty(row, '__proto__', { value: 'x', enumerable: true, writable: true, configurable: true });
    const summary = summarizeRows([row]);
    assert.equal(Object.getPrototypeOf(summary.columns), Object.prototype);
    assert.deepEqual(Object.keys(summary.columns), ['__proto__']);
    assert.equal(JSON.parse(JSON.stringify(summary)).columns.__proto__.count, 1);
  });

  test('the same rows always give the same JSON', () => {
    const rows = [
      { a: 'x', b: 1 },
      { a: 'y', b: 2 },
      { a: 'x', b: null },
    ];
    assert.equal(JSON.stringify(summarizeRows(rows)), JSON.stringify(summarizeRows(rows.map((r) => ({ ...r })))));
  });

  test('seattle-weather.csv read through readTableFile and rowsFromTable', async () => {
    const { table } = await readTableFile(vegaData('seattle-weather.csv'));
    const summary = summarizeRows(rowsFromTable(table));
    assert.equal(summary.row_count, 1461);
    assert.deepEqual(Object.keys(summary.columns), ['date', 'precipitation', 'temp_max', 'temp_min', 'wind', 'weather']);
    assert.deepEqual(summary.columns.weather.top, [
      { value: 'rain', count: 641 },
      { value: 'sun', count: 640 },
      { value: 'fog', count: 101 },
      { value: 'drizzle', count: 53 },
      { value: 'snow', count: 26 },
    ]);
    const tempMax = summary.columns.temp_max;
    assert.equal(tempMax.type, 'number');
    assert.equal(tempMax.min, -1.6);
    assert.equal(tempMax.max, 35.6);
    assert.ok(Math.abs(tempMax.mean! - 16.439) < 0.001);
  });
});
