/**
 * Arrow Table to plain row objects (`_row_id` first when present), for code
 * that wants rows rather than columns: consumer handlers, abstracts.
 */
import type { Table } from 'apache-arrow';
import { valueReader } from '../json/column-codec.js';
import type { ValueReader } from '../json/json-codec.js';

/** A row as user code sees it. */
export type Row = Record<string, unknown>;

/** Converts every row of `table` to a plain object; missing values are null. */
export function rowsFromTable(table: Table): Row[] {
  const fields = table.schema.fields;
  const names = fields.map((f) => f.name);
  // `row.__proto__ = v` would set the prototype instead of a key: a column of
  // that name (legal in JSON) is defined as an own property instead.
  const protoColumn = names.indexOf('__proto__');
  const out: Row[] = new Array(table.numRows);
  let r = 0;
  for (const batch of table.batches) {
    // An empty table from arrow-js may hold Vectors where Data belongs; nothing to read anyway.
    if (batch.numRows === 0) continue;
    const readers: ValueReader[] = fields.map((f, c) => valueReader(f, batch.data.children[c]));
    for (let i = 0; i < batch.numRows; i++) {
      const row: Row = {};
      for (let c = 0; c < readers.length; c++) {
        if (c === protoColumn) defineOwn(row, names[c], readers[c](i));
        else row[names[c]] = readers[c](i);
      }
      out[r++] = row;
    }
  }
  return out;
}

function defineOwn(row: Row, key: string, value: unknown): void {
  Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true });
}
