import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Int32, Table, tableFromArrays, tableFromJSON, type Field } from 'apache-arrow';
import { hasRowIds, withRowIds } from '../../src/table/with-row-ids.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';

function names(table: Table): string[] {
  return table.schema.fields.map((f: Field) => f.name);
}

/** A table of `n` rows (`v` = i/2, `s` = "s<i>", dictionary-encoded) split into batches of `batchSize` rows. */
function multiBatch(n: number, batchSize: number): Table {
  const ids = Array.from({ length: n }, (_, i) => i);
  const whole = tableFromArrays({ v: Float64Array.from(ids, (i) => i / 2), s: ids.map((i) => `s${i}`) });
  const batches = [];
  for (let start = 0; start < n; start += batchSize) batches.push(...whole.slice(start, start + batchSize).batches);
  return new Table(whole.schema, batches);
}

test('withRowIds prepends Int32 ids that continue across batches', () => {
  const table = withRowIds(multiBatch(20, 6));
  assert.ok(hasRowIds(table));
  assert.equal(table.batches.length, 4);
  assert.deepEqual(names(table), ['_row_id', 'v', 's']);
  assert.ok(table.schema.fields[0].type instanceof Int32);
  assert.equal(table.schema.fields[0].nullable, false);
  assert.deepEqual(
    rowsFromTable(table),
    Array.from({ length: 20 }, (_, i) => ({ _row_id: i, v: i / 2, s: `s${i}` })),
  );
});

test('withRowIds replaces an existing _row_id column, wherever it is', () => {
  const fromJson = tableFromJSON([
    { a: 'x', _row_id: 100 },
    { a: 'y', _row_id: 7 },
  ]);
  const table = withRowIds(fromJson);
  assert.deepEqual(names(table), ['_row_id', 'a']);
  assert.deepEqual(rowsFromTable(table), [
    { _row_id: 0, a: 'x' },
    { _row_id: 1, a: 'y' },
  ]);
});

test('withRowIds of an empty table keeps the schema', () => {
  const table = withRowIds(new Table(tableFromArrays({ a: new Int32Array(0) }).schema));
  assert.equal(table.numRows, 0);
  assert.deepEqual(names(table), ['_row_id', 'a']);
});

test('hasRowIds is false for tables without a leading Int32 _row_id', () => {
  assert.equal(hasRowIds(tableFromArrays({ a: [1] })), false);
  assert.equal(hasRowIds(tableFromArrays({ a: [1], _row_id: new Int32Array([0]) })), false);
  assert.equal(hasRowIds(tableFromArrays({ _row_id: Float64Array.from([0]) })), false);
});

test('withRowIds decodes dictionary columns, so chunks can be encoded on their own', async () => {
  const { Table: ArrowTable, vectorFromArray, Dictionary, Utf8, Int32, tableFromIPC, Type } = await import('apache-arrow');
  const { withRowIds } = await import('../../src/table/with-row-ids.js');
  const { rowsFromTable } = await import('../../src/table/rows-from-table.js');
  const { sharedIpcFromTable } = await import('../support/shared-ipc.js');
  const input = new ArrowTable({
    d: vectorFromArray(['a', 'b', null, 'a'], new Dictionary(new Utf8(), new Int32())),
    x: vectorFromArray(Int32Array.from([1, 2, 3, 4])),
  });
  const body = withRowIds(input);
  assert.equal(body.schema.fields[1].type.typeId, Type.Utf8);
  assert.deepEqual(rowsFromTable(tableFromIPC(sharedIpcFromTable(body))), [
    { _row_id: 0, d: 'a', x: 1 },
    { _row_id: 1, d: 'b', x: 2 },
    { _row_id: 2, d: null, x: 3 },
    { _row_id: 3, d: 'a', x: 4 },
  ]);
});
