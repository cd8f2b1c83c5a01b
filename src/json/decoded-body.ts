/**
 * What a data-plane answer decodes to, whatever wire format it came in, and
 * the error for one that does not: `S2SP_ERR_CONSUMER_RESPONSE_INVALID`,
 * built here so the JSON decoders (here) and the Arrow ones (consumer/)
 * word it alike.
 */
import type { Table } from 'apache-arrow';
import { S2SPError, type ErrorParams } from '../errors.js';

/** A decoded body, whatever wire format it came in. */
export interface DecodedBody {
  /** The rows, `_row_id` first, ids as the server sent them. */
  table: Table;
  /** `total_rows` as the server sent it (the row count when absent). */
  totalRows: number;
  /** `columns_returned`, or the table's column names when the server left it out. */
  columns: string[];
}

/**
 * `S2SP_ERR_CONSUMER_RESPONSE_INVALID`: a 2xx answer that is not a whole S2SP
 * body (not ours, malformed, or cut short), never to be read as fewer rows.
 * @param params what is wrong with it
 * @param cause the decoder's own error, if any
 */
export function responseInvalid(params: ErrorParams<'S2SP_ERR_CONSUMER_RESPONSE_INVALID'>, cause?: unknown): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_RESPONSE_INVALID', params, cause === undefined ? undefined : { cause });
}
