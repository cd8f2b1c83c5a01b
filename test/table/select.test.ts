import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Int32, Table, tableFromArrays, tableFromJSON, type Field } from 'apache-arrow';
import { idRuns, projectColumns, selectRows, sortedUniqueIds } from '../../src/table/select.js';
import { hasRowIds, withRowIds } from '../../src/table/row-id.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { jsonBodyChunks } from '../../src/table/json-encoding.js';

type Row = Record<string, unknown>;

/** A body of `n` rows: `_row_id`, a number, a string and a nested value per row. */
function body(n: number): { rows: Row[]; table: Table } {
  const rows = Array.from({ length: n }, (_, i) => ({ n: i * 10, s: `row ${i}`, j: { i } }));
  return { rows, table: tableFromRows(rows) };
}

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

test('sortedUniqueIds sorts numerically and collapses duplicates', () => {
  const cases: Array<[number[], number[]]> = [
    [[], []],
    [[2, 0, 0], [0, 2]],
    [[10, 9, 100, 1], [1, 9, 10, 100]],
    [[5, 5, 5], [5]],
    [[3, 2, 1, 0], [0, 1, 2, 3]],
  ];
  for (const [input, expected] of cases) assert.deepEqual(sortedUniqueIds(input), expected, JSON.stringify(input));
});

test('idRuns splits ascending ids into consecutive runs', () => {
  assert.deepEqual(idRuns([]), []);
  assert.deepEqual(idRuns([0, 1, 2, 5, 7, 8]), [
    [0, 3],
    [5, 6],
    [7, 9],
  ]);
});

test('selectRows with runs and scattered ids returns the right values', () => {
  const { rows, table } = body(50);
  for (const ids of [[0], [49], [0, 1, 2, 3], [3, 4, 5, 20, 21, 40], [1, 3, 5, 7, 49], [...Array(50).keys()]]) {
    const selected = selectRows(table, ids);
    assert.equal(selected.numRows, ids.length);
    assert.deepEqual(
      rowsFromTable(selected),
      ids.map((i) => ({ _row_id: i, ...rows[i] })),
      JSON.stringify(ids),
    );
  }
});

test('selectRows(undefined) keeps every row', () => {
  const { table } = body(5);
  assert.equal(selectRows(table, undefined), table);
});

test('selectRows across batches keeps positions', () => {
  const table = withRowIds(multiBatch(30, 7));
  assert.equal(table.batches.length, 5);
  const ids = [0, 6, 7, 8, 13, 14, 27, 29];
  const selected = selectRows(table, ids);
  const expected = ids.map((i) => ({ _row_id: i, v: i / 2, s: `s${i}` }));
  assert.deepEqual(rowsFromTable(selected), expected);
  assert.deepEqual(JSON.parse([...jsonBodyChunks(selected)].join('')).body, expected);
});

test('projectColumns keeps _row_id first, in the order given, duplicates collapsed', () => {
  const { rows, table } = body(3);
  const cases: Array<[string[] | undefined, string[]]> = [
    [undefined, ['_row_id', 'n', 's', 'j']],
    [[], ['_row_id', 'n', 's', 'j']],
    [['s'], ['_row_id', 's']],
    [['j', 'n'], ['_row_id', 'j', 'n']],
    [['s', '_row_id', 's', 'n', 's'], ['_row_id', 's', 'n']],
    [['_row_id'], ['_row_id']],
  ];
  for (const [columns, expected] of cases) {
    const projected = projectColumns(table, columns);
    assert.deepEqual(names(projected), expected, JSON.stringify(columns));
    const want = rows.map((r, i) => Object.fromEntries(expected.map((c) => [c, c === '_row_id' ? i : r[c as keyof typeof r]])));
    assert.deepEqual(rowsFromTable(projected), want);
  }
});

test('select then project gives the JSON document of SPEC 3.1', () => {
  const { table } = body(6);
  const doc = JSON.parse([...jsonBodyChunks(projectColumns(selectRows(table, [1, 4, 5]), ['s']))].join(''));
  assert.deepEqual(doc, {
    body: [
      { _row_id: 1, s: 'row 1' },
      { _row_id: 4, s: 'row 4' },
      { _row_id: 5, s: 'row 5' },
    ],
    total_rows: 3,
    columns_returned: ['_row_id', 's'],
  });
});

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
  const { withRowIds } = await import('../../src/table/row-id.js');
  const { rowsFromTable } = await import('../../src/table/rows-from-table.js');
  const { sharedIpcFromTable } = await import('../../src/ipc/shared-body.js');
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
