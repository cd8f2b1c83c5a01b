/**
 * Gives a table its `_row_id` column (protocol/row-id.ts has the contract): Int32,
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
  const schema = bodySchemaOf(table.schema);
  const batches: RecordBatch[] = [];
  let start = 0;
  for (const batch of table.batches) {
    batches.push(batchWithRowIds(batch, schema, start));
    start += batch.numRows;
  }
  if (batches.length === 0) return new Table(schema);
  return new Table(schema, batches);
}

/** The body schema of a (dictionary-free) schema: `_row_id` first, any `_row_id` of its own dropped. */
export function bodySchemaOf(schema: Schema): Schema {
  return new Schema([ROW_ID_FIELD, ...schema.fields.filter((f) => f.name !== ROW_ID)], schema.metadata);
}

/**
 * One (dictionary-free) batch as a batch of `bodySchema` (from
 * {@link bodySchemaOf} of its schema), its rows numbered from `start`.
 */
export function batchWithRowIds(batch: RecordBatch, bodySchema: Schema, start: number): RecordBatch {
  const children: Data[] = [rowIdData(start, batch.numRows)];
  batch.schema.fields.forEach((f, i) => {
    if (f.name !== ROW_ID) children.push(batch.data.children[i]);
  });
  const data = makeData({ type: new Struct(bodySchema.fields), length: batch.numRows, nullCount: 0, children });
  return new RecordBatch(bodySchema, data);
}

/** True when `table` starts with an Int32 `_row_id` column (also as read from IPC, whose type is a plain Int). */
export function hasRowIds(table: Table): boolean {
  const first = table.schema.fields[0];
  if (first === undefined || first.name !== ROW_ID || first.type.typeId !== Type.Int) return false;
  const int = first.type as Int;
  return int.bitWidth === 32 && int.isSigned;
}
