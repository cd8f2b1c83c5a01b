/**
 * Arrow Table to plain row objects (`_row_id` first when present), for code
 * that wants rows rather than columns: consumer handlers, abstracts.
 */
import type { Table } from 'apache-arrow';
import { valueReader, type ValueReader } from './column-readers.js';

/** A row as user code sees it. */
export type Row = Record<string, unknown>;

/** Converts every row of `table` to a plain object; missing values are null. */
export function rowsFromTable(table: Table): Row[] {
  const fields = table.schema.fields;
  const names = fields.map((f) => f.name);
  const out: Row[] = new Array(table.numRows);
  let r = 0;
  for (const batch of table.batches) {
    const readers: ValueReader[] = fields.map((f, c) => valueReader(f, batch.data.children[c]));
    for (let i = 0; i < batch.numRows; i++) {
      const row: Row = {};
      for (let c = 0; c < readers.length; c++) row[names[c]] = readers[c](i);
      out[r++] = row;
    }
  }
  return out;
}
