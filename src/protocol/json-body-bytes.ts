/**
 * The literal bytes of the data plane's JSON document (SPEC 3.2), as our
 * writers emit it:
 *
 *   {"body":[{"_row_id":0,...},{"_row_id":1,...}],"total_rows":k,"columns_returned":[...]}
 *
 * Writers use these bytes; readers must not: any valid JSON spacing is the
 * same document (the Python reference writes `json.dumps` output, spaces
 * after `:` and `,`), so decoders follow the JSON grammar and use only the
 * key names.
 */

/** The key holding the rows. */
export const BODY_KEY = 'body';
/** The key holding the row count of the whole answer. */
export const TOTAL_ROWS_KEY = 'total_rows';
/** The key holding the names of the columns returned (the Python reference omits it). */
export const COLUMNS_RETURNED_KEY = 'columns_returned';

/** The document's opening, up to its first row. */
export const JSON_BODY_OPEN = Buffer.from(`{"${BODY_KEY}":[`);
/** What our writers put between two rows (one byte: a comma). */
export const JSON_ROW_SEPARATOR = 0x2c;

/** The document's closing after its last row: `],"total_rows":k,"columns_returned":[...]}`. */
export function jsonBodyClose(totalRows: number, columns: readonly string[]): string {
  const { head, tail } = jsonBodyCloseParts(columns);
  return `${head}${totalRows}${tail}`;
}

/** The closing's two parts around the row count, which depend on the columns only (a writer can keep them per projection). */
export function jsonBodyCloseParts(columns: readonly string[]): { head: string; tail: string } {
  return { head: `],"${TOTAL_ROWS_KEY}":`, tail: `,"${COLUMNS_RETURNED_KEY}":${JSON.stringify(columns)}}` };
}
