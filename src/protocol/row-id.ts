/**
 * `_row_id` (SPEC 1): the integer every row carries, 0..n-1 in the order the
 * tool returned the rows. It is the first key of every row we emit and the
 * first field (Int32) of every Arrow body.
 */

/** The name of the row identifier column. */
export const ROW_ID = '_row_id';

/** The largest `_row_id`: ids travel as Arrow Int32. */
export const MAX_ROW_ID = 0x7fffffff;

/** True when `value` is a valid `_row_id` (an integer in [0, MAX_ROW_ID]). */
export function isRowId(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_ROW_ID;
}
