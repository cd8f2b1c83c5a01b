/**
 * Decodes the data plane's JSON answer (SPEC 3.2) into an Arrow Table:
 *
 *   {"body":[{"_row_id":0,...},...],"total_rows":k,"columns_returned":[...]}
 *
 * The Python reference sends the same document without `columns_returned`,
 * so that key is optional. Everything else is checked, because a document
 * that is cut short or is not ours must fail the transfer rather than turn
 * into fewer rows (DESIGN.md, "Truncation").
 *
 * Numbers are read exactly (exact-json.ts): an integer beyond 2^53 becomes an
 * Int64 (or UInt64) column, not a rounded double, and a column the server
 * wrote as floats (`2.0`) stays Float64. Bare NaN/Infinity, which Python's
 * `json.dumps` writes, are read as those floats.
 */
import type { Table } from 'apache-arrow';
import { S2SPError, isS2SPError } from '../errors.js';
import { ROW_ID, isRowId } from '../protocol/row-id.js';
import { parseJsonExact } from './exact-json.js';
import { tableFromRows } from '../table/table-from-rows.js';
import { responseInvalid as invalid, type DecodedBody } from './decoded-body.js';

/**
 * Decodes a complete JSON response body.
 *
 * @param bytes the response body, UTF-8
 * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` when it is not JSON, is cut
 *   short, or is not an object with a `body` array of rows carrying integer `_row_id`s;
 *   `S2SP_ERR_CONSUMER_BODY_TOO_LARGE` when it is too long for one JS string
 */
export function bodyFromJson(bytes: Uint8Array): DecodedBody {
  const doc = parseDocument(bytes);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw invalid({ problem: 'notObject' });
  }
  const { body, total_rows: totalRows, columns_returned: columnsReturned } = doc as Record<string, unknown>;
  if (!Array.isArray(body)) throw invalid({ problem: 'noBody' });
  checkRows(body);
  if (totalRows !== undefined && !(Number.isInteger(totalRows) && (totalRows as number) >= 0)) {
    throw invalid({ problem: 'badTotalRows' });
  }
  if (columnsReturned !== undefined && !(Array.isArray(columnsReturned) && columnsReturned.every((c) => typeof c === 'string'))) {
    throw invalid({ problem: 'badColumnsReturned' });
  }
  let table: Table;
  try {
    table = tableFromRows(body, { preserveRowIds: true });
  } catch (error) {
    if (isS2SPError(error, 'S2SP_ERR_TABLE_INVALID')) throw invalid({ problem: 'badRows', reason: (error as Error).message }, error);
    throw error;
  }
  return {
    table,
    totalRows: (totalRows as number | undefined) ?? body.length,
    columns: (columnsReturned as string[] | undefined) ?? table.schema.fields.map((f) => f.name),
  };
}

function parseDocument(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  } catch (error) {
    // ERR_STRING_TOO_LONG: V8 strings stop near 512 MiB.
    throw new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'jsonTooLong', bytes: bytes.byteLength }, { cause: error });
  }
  try {
    return parseJsonExact(text, { wholeFloats: true });
  } catch (error) {
    throw invalid({ problem: text.length === 0 ? 'empty' : 'notJson' }, error);
  }
}

/** Every row a plain object with a unique integer `_row_id` in Int32 range. */
function checkRows(body: unknown[]): void {
  const seen = new Set<number>();
  for (let i = 0; i < body.length; i++) {
    const row = body[i];
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw invalid({ problem: 'rowNotObject', index: i });
    }
    const id = (row as Record<string, unknown>)[ROW_ID];
    if (!isRowId(id)) {
      throw invalid({ problem: 'rowNoRowId', index: i });
    }
    if (seen.has(id as number)) throw invalid({ problem: 'duplicateRowId', id: id as number });
    seen.add(id as number);
  }
}
