/**
 * What a store holds: a body table with `_row_id` (Int32, 0..n-1 in row
 * order) as its first column and no dictionary columns. Every store's `put`
 * passes what it is given through {@link bodyTableOf}, so an embedder calling
 * `store.put` directly gets the same guarantees as a resource tool.
 */
import { Precision, Type, type Float, type Table } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';
import { assertCarriableSchema } from './carriable-types.js';
import { hasDictionaries } from './decode-dictionaries.js';
import { hasRowIds, withRowIds } from './with-row-ids.js';

/**
 * Input table -> its body table. A resource tool that returns the same Table
 * on every call then hands the store the same body object every time, which
 * the stores recognise by identity (no second encoding). Weak: the memo never
 * keeps a table alive.
 */
const bodies = new WeakMap<Table, Table>();

/**
 * `table` as a body: `_row_id` first (added when missing), dictionary columns
 * decoded. Column buffers are shared, not copied (decoded dictionaries aside);
 * a table that already is a body is returned as is.
 * @throws S2SPError `S2SP_ERR_TABLE_INVALID` when a `_row_id` column is there but is not 0..n-1 in row order;
 *   `S2SP_ERR_TABLE_UNSUPPORTED_TYPE` for a column no body can carry exactly (carriable-types.ts)
 */
export function bodyTableOf(table: Table): Table {
  const known = bodies.get(table);
  if (known !== undefined) return known;
  // Here too, not only in withRowIds: a table that already is a body skips that.
  assertCarriableSchema(table.schema);
  const at = table.schema.fields.findIndex((f) => f.name === ROW_ID);
  if (at >= 0) checkPositional(table, at);
  const body = at === 0 && hasRowIds(table) && !hasDictionaries(table.schema) ? table : withRowIds(table);
  bodies.set(table, body);
  bodies.set(body, body);
  return body;
}

/**
 * Refuses a `_row_id` column whose values are not the row positions (ids are
 * positions, never user data).
 * @param at the column's index
 * @param start the position of the table's first row (a batch of a stream is checked on its own)
 */
export function checkPositional(table: Table, at: number, start = 0): void {
  const type = table.schema.fields[at].type;
  if (!isNumberType(type.typeId) || (type.typeId === Type.Float && (type as Float).precision === Precision.HALF)) {
    throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'rowIdNotNumbers', type: String(type) });
  }
  let row = start;
  for (const batch of table.batches) {
    const column = batch.getChildAt(at)!;
    if (column.nullCount > 0) {
      throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'rowIdNulls' });
    }
    // toArray is a view for a single-chunk primitive column: the check copies nothing.
    const values = column.toArray() as ArrayLike<number | bigint>;
    for (let i = 0; i < values.length; i++, row++) {
      if (Number(values[i]) !== row) {
        throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'rowIdNotPositional', row, has: Number(values[i]) });
      }
    }
  }
}

/** Integer or float columns (a table read from JSON often holds ids as doubles); Float16 is left out: its values are raw bits. */
function isNumberType(typeId: Type): boolean {
  return (
    typeId === Type.Int ||
    typeId === Type.Int8 ||
    typeId === Type.Int16 ||
    typeId === Type.Int32 ||
    typeId === Type.Int64 ||
    typeId === Type.Uint8 ||
    typeId === Type.Uint16 ||
    typeId === Type.Uint32 ||
    typeId === Type.Uint64 ||
    typeId === Type.Float ||
    typeId === Type.Float32 ||
    typeId === Type.Float64
  );
}
