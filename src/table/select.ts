/**
 * Row selection and column projection over a cached body. Neither copies
 * column buffers: projection picks children, and each run of consecutive row
 * ids becomes one zero-copy slice. Our bodies store `_row_id` = position, so an
 * id is also a row index.
 */
import { RecordBatch, Schema, Struct, Table, makeData } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';

/** Lists up to this long are sorted by insertion in a plain array: no typed array to allocate (a small fetch's ids). */
const INSERTION_SORT_MAX = 64;

/** Sorts ids ascending and drops duplicates (the reference collapses them). */
export function sortedUniqueIds(ids: readonly number[]): number[] {
  const n = ids.length;
  let sorted: ArrayLike<number>;
  if (n <= INSERTION_SORT_MAX) {
    const small = ids.slice();
    for (let i = 1; i < n; i++) {
      const v = small[i];
      let j = i - 1;
      for (; j >= 0 && small[j] > v; j--) small[j + 1] = small[j];
      small[j + 1] = v;
    }
    sorted = small;
  } else sorted = new Int32Array(ids).sort();
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) out.push(sorted[i]);
  return out;
}

/** Consecutive runs `[start, end)` of an ascending, duplicate-free id list. */
export function idRuns(sortedIds: ArrayLike<number>): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let i = 0;
  while (i < sortedIds.length) {
    const start = sortedIds[i];
    let end = start + 1;
    while (i + 1 < sortedIds.length && sortedIds[i + 1] === end) {
      i++;
      end++;
    }
    runs.push([start, end]);
    i++;
  }
  return runs;
}

/**
 * Keeps `_row_id` first, then `columns` in the order given (duplicates
 * collapsed). Empty or `undefined` keeps every column.
 */
export function projectColumns(table: Table, columns: readonly string[] | undefined): Table {
  if (columns === undefined || columns.length === 0) return table;
  const names = [ROW_ID, ...new Set(columns.filter((c) => c !== ROW_ID))];
  const indices = names.map((name) => table.schema.fields.findIndex((f) => f.name === name));
  const schema = new Schema(
    indices.map((i) => table.schema.fields[i]),
    table.schema.metadata,
  );
  const batches = table.batches.map((batch) => {
    const children = indices.map((i) => batch.data.children[i]);
    return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children }));
  });
  return new Table(schema, batches);
}
