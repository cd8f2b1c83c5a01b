import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Field, Int32, List, Struct, Table, Utf8, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { canTake, takeRows } from '../../src/table/take-rows.js';
import { chunkBatches } from '../../src/table/row-chunks.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { allTypes, exactCells, oracleRows } from '../support/all-types-table.js';

/** takeRows must match both oracles, keep the schema, count nulls right, and survive IPC. */
function assertTakeMatches(table: Table, ids: number[], label: string): void {
  assert.ok(canTake(table), `${label}: canTake`);
  const batch = takeRows(table, Int32Array.from(ids));
  assert.equal(batch.numRows, ids.length, label);
  assert.deepEqual(
    batch.schema.fields.map((f) => [f.name, String(f.type)]),
    table.schema.fields.map((f) => [f.name, String(f.type)]),
    label,
  );
  const taken = new Table([batch]);
  const expected = oracleRows(table, ids);
  assert.deepEqual(rowsFromTable(taken), expected, `${label}: rows`);
  assert.deepEqual(
    exactCells(
      taken,
      ids.map((_, i) => i),
    ),
    exactCells(table, ids),
    `${label}: exact cells`,
  );
  batch.schema.fields.forEach((f, c) => {
    const nulls = expected.filter((row) => row[f.name] === null).length;
    assert.equal(batch.data.children[c].nullCount, nulls, `${label}: nullCount of ${f.name}`);
  });
  const roundTrip = tableFromIPC(tableToIPC(taken, 'stream'));
  assert.deepEqual(
    exactCells(
      roundTrip,
      ids.map((_, i) => i),
    ),
    exactCells(table, ids),
    `${label}: after IPC`,
  );
}

/** Deterministic pseudo-random ids (with duplicates, any order). */
function scattered(count: number, below: number, seed: number): number[] {
  let x = seed;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % below;
  });
}

function idSets(n: number): Array<[string, number[]]> {
  return [
    ['every row', Array.from({ length: n }, (_, i) => i)],
    ['reversed', Array.from({ length: n }, (_, i) => n - 1 - i)],
    ['scattered with duplicates', scattered(Math.max(1, Math.floor(n / 2)), n, 7)],
    ['first and last', [0, n - 1]],
    ['one row', [Math.floor(n / 2)]],
    ['none', []],
  ];
}

// ---- tests ----

test('takeRows equals the row-by-row oracle for every supported type, with nulls everywhere', () => {
  for (const nullEvery of [undefined, 2, 3, 7]) {
    const table = allTypes(45, 0, nullEvery);
    for (const [name, ids] of idSets(table.numRows)) assertTakeMatches(table, ids, `nullEvery ${nullEvery}, ${name}`);
  }
});

test('takeRows with every value null', () => {
  const table = allTypes(20, 0, 1);
  assert.ok(rowsFromTable(table).every((row) => Object.values(row).every((v) => v === null)));
  for (const [name, ids] of idSets(table.numRows)) assertTakeMatches(table, ids, name);
});

test('takeRows over a table of several RecordBatches (some with nulls, some without)', () => {
  const parts = [allTypes(13, 0), allTypes(1, 13, 2), allTypes(30, 14, 4), allTypes(9, 44), allTypes(17, 53, 3)];
  const table = new Table(parts.flatMap((p) => p.batches));
  assert.equal(table.batches.length, 5);
  assert.equal(table.numRows, 70);
  for (const [name, ids] of idSets(table.numRows)) assertTakeMatches(table, ids, `multi-batch, ${name}`);
  // Ids on both sides of every batch boundary.
  assertTakeMatches(table, [12, 13, 14, 43, 44, 52, 53, 69, 0], 'batch boundaries');
});

test('takeRows over sliced tables (non-zero offsets in values, bitmaps and offsets)', () => {
  const whole = allTypes(90, 0, 3);
  const sliced = whole.slice(5, 77);
  assert.ok(
    sliced.batches[0].data.children.every((d) => d.offset === 5),
    'the slice keeps offsets',
  );
  for (const [name, ids] of idSets(sliced.numRows)) assertTakeMatches(sliced, ids, `slice, ${name}`);

  // Batches that are slices with different odd offsets, of differently built batches.
  const other = allTypes(60, 100, 4);
  const mixed = new Table([...whole.slice(3, 20).batches, ...other.slice(11, 50).batches, ...whole.slice(61, 90).batches]);
  assert.equal(mixed.batches.length, 3);
  assert.deepEqual(
    mixed.batches.map((b) => b.data.children[0].offset),
    [3, 11, 61],
  );
  for (const [name, ids] of idSets(mixed.numRows)) assertTakeMatches(mixed, ids, `sliced batches, ${name}`);
});

test('canTake is false for a List or a Struct column', () => {
  const flat = new Table({ a: vectorFromArray([1, 2], new Int32()) });
  assert.equal(canTake(flat), true);
  const list = new Table({
    a: vectorFromArray([1, 2], new Int32()),
    l: vectorFromArray([[1], [2, 3]], new List(new Field('item', new Int32(), true))),
  });
  assert.equal(canTake(list), false);
  const struct = new Table({
    a: vectorFromArray([1, 2], new Int32()),
    s: vectorFromArray([{ x: 1 }, { x: 2 }], new Struct([new Field('x', new Int32(), true)])),
  });
  assert.equal(canTake(struct), false);
  assert.equal(canTake(allTypes(3)), true);
});

test('chunkBatches falls back to slices for List and Struct columns, values still right', () => {
  const n = 50;
  const rows = Array.from({ length: n }, (_, i) => i);
  const table = new Table({
    a: vectorFromArray(rows, new Int32()),
    l: vectorFromArray(
      rows.map((i) => (i % 4 === 0 ? null : Array.from({ length: i % 3 }, (_, k) => i * 10 + k))),
      new List(new Field('item', new Int32(), true)),
    ),
    s: vectorFromArray(
      rows.map((i) => (i % 5 === 0 ? null : { x: i, y: `y${i}` })),
      new Struct([new Field('x', new Int32(), true), new Field('y', new Utf8(), true)]),
    ),
  });
  const ids = [1, 3, 4, 9, 17, 30, 31, 49];
  const batches = chunkBatches(table, { ids: Int32Array.from(ids) });
  // No gather: one slice per run of consecutive ids.
  assert.equal(batches.length, 6);
  assert.deepEqual(rowsFromTable(new Table(batches)), oracleRows(table, ids));
  assert.deepEqual(rowsFromTable(new Table(batches))[4], { a: 17, l: [170, 171], s: { x: 17, y: 'y17' } });
  assert.deepEqual(rowsFromTable(new Table(batches))[0], { a: 1, l: [10], s: { x: 1, y: 'y1' } });
});

test('chunkBatches gathers short runs into one batch and slices long runs', () => {
  const table = new Table([...allTypes(40, 0, 3).batches, ...allTypes(40, 40, 5).batches]);
  const short = [0, 2, 5, 39, 40, 41, 70];
  const gathered = chunkBatches(table, { ids: Int32Array.from(short) });
  assert.equal(gathered.length, 1, 'scattered ids become one gathered batch');
  assert.deepEqual(rowsFromTable(new Table(gathered)), oracleRows(table, short));

  // Runs [25, 55) (crossing the batch boundary at 40) and [60, 80): mean run length 25.
  const long = [...Array.from({ length: 30 }, (_, i) => i + 25), ...Array.from({ length: 20 }, (_, i) => i + 60)];
  const sliced = chunkBatches(table, { ids: Int32Array.from(long) });
  assert.equal(sliced.length, 3, 'runs of mean length >= 16 are sliced, one slice per run and batch');
  assert.deepEqual(rowsFromTable(new Table(sliced)), oracleRows(table, long));
});
