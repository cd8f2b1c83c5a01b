import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Table } from 'apache-arrow';
import { DEFAULT_CHUNK_ROWS, chunkBatches, chunkLength, planChunks, type RowChunk } from '../../src/table/row-chunks.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { allTypes, oracleRows } from '../support/all-types-table.js';

/** A chunk as plain data, for deepEqual: `{ range: [start, end] }` or `{ ids: [...] }`. */
function plain(chunk: RowChunk): { range: [number, number] } | { ids: number[] } {
  if ('ids' in chunk) {
    assert.ok(chunk.ids instanceof Int32Array, 'scattered ids travel as an Int32Array');
    return { ids: Array.from(chunk.ids) };
  }
  return { range: [chunk.start, chunk.end] };
}

const r = (start: number, end: number) => ({ range: [start, end] as [number, number] });
const ids = (...list: number[]) => ({ ids: list });

/** The positions a chunk covers, in order. */
function positions(chunk: RowChunk): number[] {
  if ('ids' in chunk) return Array.from(chunk.ids);
  return Array.from({ length: chunk.end - chunk.start }, (_, i) => chunk.start + i);
}

const range = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);

test('planChunks over every row: ranges of chunkRows, the last one shorter', () => {
  assert.deepEqual(planChunks(10, undefined, 4).map(plain), [r(0, 4), r(4, 8), r(8, 10)]);
  assert.deepEqual(planChunks(8, undefined, 4).map(plain), [r(0, 4), r(4, 8)]);
  assert.deepEqual(planChunks(3, undefined, 4).map(plain), [r(0, 3)]);
  assert.deepEqual(planChunks(1, undefined, 1).map(plain), [r(0, 1)]);
  assert.deepEqual(planChunks(0, undefined, 4), []);
});

test('planChunks defaults to DEFAULT_CHUNK_ROWS rows per chunk', () => {
  assert.equal(DEFAULT_CHUNK_ROWS, 65_536);
  const chunks = planChunks(2 * DEFAULT_CHUNK_ROWS + 1, undefined);
  assert.deepEqual(chunks.map(plain), [
    r(0, DEFAULT_CHUNK_ROWS),
    r(DEFAULT_CHUNK_ROWS, 2 * DEFAULT_CHUNK_ROWS),
    r(2 * DEFAULT_CHUNK_ROWS, 2 * DEFAULT_CHUNK_ROWS + 1),
  ]);
});

test('planChunks: a contiguous group of ids becomes a range', () => {
  assert.deepEqual(planChunks(100, [5, 6, 7, 8, 9], 10).map(plain), [r(5, 10)]);
  assert.deepEqual(planChunks(100, range(0, 8).concat(range(20, 28)), 8).map(plain), [r(0, 8), r(20, 28)]);
  // Split at every 5 ids: [0..4] range, [5,6,7,20,21] scattered, [22..26] range, [27] range.
  assert.deepEqual(planChunks(100, range(0, 8).concat(range(20, 28)), 5).map(plain), [r(0, 5), ids(5, 6, 7, 20, 21), r(22, 27), r(27, 28)]);
  assert.deepEqual(planChunks(100, [99], 10).map(plain), [r(99, 100)]);
});

test('planChunks: scattered ids stay a list of ids', () => {
  assert.deepEqual(planChunks(10, [1, 3, 5], 10).map(plain), [ids(1, 3, 5)]);
  assert.deepEqual(planChunks(10, [0, 2, 4, 6, 8, 9], 2).map(plain), [ids(0, 2), ids(4, 6), r(8, 10)]);
  assert.deepEqual(planChunks(10, [0, 9], 10).map(plain), [ids(0, 9)]);
});

test('planChunks: an empty selection has no chunks', () => {
  assert.deepEqual(planChunks(10, [], 4), []);
});

test('planChunks covers exactly the selection, in order, within chunkRows (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }),
      fc.integer({ min: 1, max: 40 }),
      fc.array(fc.nat(), { maxLength: 200 }),
      fc.boolean(),
      (totalRows, chunkRows, raw, everyRow) => {
        const sortedIds = everyRow ? undefined : [...new Set(raw.map((x) => x % totalRows))].sort((a, b) => a - b);
        const chunks = planChunks(totalRows, sortedIds, chunkRows);
        const expected = sortedIds ?? range(0, totalRows);
        assert.deepEqual(chunks.flatMap(positions), expected);
        let sum = 0;
        for (const chunk of chunks) {
          const n = chunkLength(chunk);
          sum += n;
          assert.ok(n >= 1 && n <= chunkRows, `chunk of ${n} rows`);
          if ('ids' in chunk) {
            assert.equal(n, chunk.ids.length);
            assert.notEqual(chunk.ids[n - 1] - chunk.ids[0] + 1, n, 'a contiguous group must be a range');
          }
        }
        assert.equal(sum, expected.length);
        // Every chunk but the last is full.
        for (const chunk of chunks.slice(0, -1)) assert.equal(chunkLength(chunk), chunkRows);
      },
    ),
    { numRuns: 300 },
  );
});

test('chunkLength of ranges and id lists', () => {
  assert.equal(chunkLength({ start: 3, end: 10 }), 7);
  assert.equal(chunkLength({ start: 3, end: 3 }), 0);
  assert.equal(chunkLength({ ids: Int32Array.of(1, 5, 9) }), 3);
});

test('chunkBatches: a range is zero-copy slices, across batch boundaries', () => {
  const table = new Table([...allTypes(30, 0, 3).batches, ...allTypes(25, 30, 4).batches, ...allTypes(20, 55).batches]);
  const batches = chunkBatches(table, { start: 20, end: 60 });
  assert.deepEqual(
    batches.map((b) => b.numRows),
    [10, 25, 5],
  );
  assert.deepEqual(rowsFromTable(new Table(batches)), oracleRows(table, range(20, 60)));
  // A slice shares the table's buffers: the Int32 column of the first slice views batch 0's values.
  const i32 = table.schema.fields.findIndex((f) => f.name === 'i32');
  assert.equal(batches[0].data.children[i32].values.buffer, table.batches[0].data.children[i32].values.buffer);
  assert.deepEqual(
    chunkBatches(table, { start: 0, end: table.numRows }).map((b) => b.numRows),
    [30, 25, 20],
  );
});

test('chunkBatches: scattered ids (short runs) are gathered, long runs sliced; rows stay ascending', () => {
  const rows = Array.from({ length: 500 }, (_, i) => ({ n: i * 3, s: `s${i}`, j: i % 2 ? [i] : { i } }));
  const table = tableFromRows(rows);
  const expected = (ids: number[]) => ids.map((i) => ({ _row_id: i, ...rows[i] }));

  const scattered = [2, 3, 17, 200, 201, 202, 499];
  const gathered = chunkBatches(table, { ids: Int32Array.from(scattered) });
  assert.equal(gathered.length, 1);
  assert.deepEqual(rowsFromTable(new Table(gathered)), expected(scattered));

  const runs = range(10, 60).concat(range(100, 180));
  const sliced = chunkBatches(table, { ids: Int32Array.from(runs) });
  assert.deepEqual(
    sliced.map((b) => b.numRows),
    [50, 80],
  );
  assert.deepEqual(rowsFromTable(new Table(sliced)), expected(runs));
});

test('chunks of a plan, encoded one by one, give back the whole selection', () => {
  const table = new Table([...allTypes(40, 0, 5).batches, ...allTypes(40, 40, 2).batches]);
  for (const sortedIds of [undefined, [0, 1, 2, 3, 10, 39, 40, 41, 79], range(5, 75)]) {
    const chunks = planChunks(table.numRows, sortedIds, 7);
    const got = chunks.flatMap((chunk) => rowsFromTable(new Table(table.schema, chunkBatches(table, chunk))));
    assert.deepEqual(got, oracleRows(table, sortedIds ?? range(0, table.numRows)));
  }
});
