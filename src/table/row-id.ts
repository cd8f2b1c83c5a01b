/**
 * `_row_id` as an Arrow column (protocol/row-id.ts has the contract): Int32,
 * never null, always the first column of a cached body.
 */
import { Field, Int32, RecordBatch, Schema, Struct, Table, Type, makeData, type Data, type Int } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';
import { assertCarriableSchema } from './carriable-types.js';
import { decodeDictionaries } from './decode-dictionaries.js';

/** The Arrow field of the row identifier: Int32, never null. */
export const ROW_ID_FIELD = new Field(ROW_ID, new Int32(), false);

/** Int32 data holding `start, start+1, ..., start+length-1`. */
export function rowIdData(start: number, length: number): Data<Int32> {
  const ids = new Int32Array(length);
  for (let i = 0; i < length; i++) ids[i] = start + i;
  return makeData({ type: new Int32(), length, nullCount: 0, data: ids });
}

/**
 * Returns `table` as a body: `_row_id` (Int32, 0..n-1) first, dictionary
 * columns decoded (decode-dictionaries.ts). An existing `_row_id` column is
 * replaced: ids are positions, never user data. Other column buffers are
 * shared, not copied.
 *
 * @throws S2SPError `S2SP_ERR_TABLE_UNSUPPORTED_TYPE` for a column no body can
 *   carry exactly (carriable-types.ts)
 */
export function withRowIds(input: Table): Table {
  assertCarriableSchema(input.schema);
  const table = decodeDictionaries(input);
  const fields = table.schema.fields.filter((f) => f.name !== ROW_ID);
  const schema = new Schema([ROW_ID_FIELD, ...fields], table.schema.metadata);
  const keep = table.schema.fields.map((f, i) => (f.name === ROW_ID ? -1 : i)).filter((i) => i >= 0);
  const batches: RecordBatch[] = [];
  let start = 0;
  for (const batch of table.batches) {
    const children = [rowIdData(start, batch.numRows), ...keep.map((i) => batch.data.children[i])];
    const data = makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children });
    batches.push(new RecordBatch(schema, data));
    start += batch.numRows;
  }
  if (batches.length === 0) return new Table(schema);
  return new Table(schema, batches);
}

/** True when `table` starts with an Int32 `_row_id` column (also as read from IPC, whose type is a plain Int). */
export function hasRowIds(table: Table): boolean {
  const first = table.schema.fields[0];
  if (first === undefined || first.name !== ROW_ID || first.type.typeId !== Type.Int) return false;
  const int = first.type as Int;
  return int.bitWidth === 32 && int.isSigned;
}
