import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Field, Table } from 'apache-arrow';
import { idRuns, projectColumns, sortedUniqueIds } from '../../src/table/select.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';

type Row = Record<string, unknown>;

/** A body of `n` rows: `_row_id`, a number, a string and a nested value per row. */
function body(n: number): { rows: Row[]; table: Table } {
  const rows = Array.from({ length: n }, (_, i) => ({ n: i * 10, s: `row ${i}`, j: { i } }));
  return { rows, table: tableFromRows(rows) };
}

function names(table: Table): string[] {
  return table.schema.fields.map((f: Field) => f.name);
}

test('sortedUniqueIds sorts numerically and collapses duplicates', () => {
  const cases: Array<[number[], number[]]> = [
    [[], []],
    [
      [2, 0, 0],
      [0, 2],
    ],
    [
      [10, 9, 100, 1],
      [1, 9, 10, 100],
    ],
    [[5, 5, 5], [5]],
    [
      [3, 2, 1, 0],
      [0, 1, 2, 3],
    ],
  ];
  for (const [input, expected] of cases) assert.deepEqual(sortedUniqueIds(input), expected, JSON.stringify(input));
});

test('sortedUniqueIds: short lists (sorted by insertion) and long ones (typed sort) give the same order', () => {
  let seed = 7;
  const next = () => (seed = (seed * 48271) % 2147483647) % 500;
  for (const length of [1, 2, 63, 64, 65, 300]) {
    const ids = Array.from({ length }, next);
    const expected = [...new Set(ids)].sort((a, b) => a - b);
    assert.deepEqual(sortedUniqueIds(ids), expected, `length ${length}`);
    assert.deepEqual(sortedUniqueIds(expected), expected, `length ${length}, already sorted`);
  }
});

test('idRuns splits ascending ids into consecutive runs', () => {
  assert.deepEqual(idRuns([]), []);
  assert.deepEqual(idRuns([0, 1, 2, 5, 7, 8]), [
    [0, 3],
    [5, 6],
    [7, 9],
  ]);
});

test('projectColumns keeps _row_id first, in the order given, duplicates collapsed', () => {
  const { rows, table } = body(3);
  const cases: Array<[string[] | undefined, string[]]> = [
    [undefined, ['_row_id', 'n', 's', 'j']],
    [[], ['_row_id', 'n', 's', 'j']],
    [['s'], ['_row_id', 's']],
    [
      ['j', 'n'],
      ['_row_id', 'j', 'n'],
    ],
    [
      ['s', '_row_id', 's', 'n', 's'],
      ['_row_id', 's', 'n'],
    ],
    [['_row_id'], ['_row_id']],
  ];
  for (const [columns, expected] of cases) {
    const projected = projectColumns(table, columns);
    assert.deepEqual(names(projected), expected, JSON.stringify(columns));
    const want = rows.map((r, i) => Object.fromEntries(expected.map((c) => [c, c === '_row_id' ? i : r[c as keyof typeof r]])));
    assert.deepEqual(rowsFromTable(projected), want);
  }
});
