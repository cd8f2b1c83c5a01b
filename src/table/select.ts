/**
 * Row selection and column projection over a cached body. Neither copies
 * column buffers: projection picks children, and each run of consecutive row
 * ids becomes one zero-copy slice. Our bodies store `_row_id` = position, so an
 * id is also a row index.
 */
import { RecordBatch, Schema, Struct, Table, makeData } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';

/** Sorts ids ascending and drops duplicates (the reference collapses them). */
export function sortedUniqueIds(ids: readonly number[]): number[] {
  const sorted = Int32Array.from(ids).sort();
  const out: number[] = [];
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) out.push(sorted[i]);
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
