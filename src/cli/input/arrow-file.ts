/**
 * Arrow IPC bytes (file or stream format, Feather v2 included) -> a Table
 * with `_row_id` first.
 *
 * arrow-js is forgiving in ways a file reader must not be: it returns an
 * empty table for empty or junk input that happens to parse, and it accepts
 * a stream cut off on a message boundary (no end-of-stream marker) as a
 * shorter table. So the framing is checked here first, and a truncated file
 * is an error, never fewer rows.
 *
 * Layouts checked:
 *   file:   "ARROW1" 00 00 | stream messages | footer | int32 footer len | "ARROW1"
 *   stream: FF FF FF FF int32 len | message ... | FF FF FF FF 00 00 00 00 (EOS)
 */
import type { Table } from 'apache-arrow';
import { S2SPError, isS2SPError, type ErrorParams } from '../../errors.js';
import { withRowIds } from '../../table/with-row-ids.js';
import { checkedTable, decompressionBudget } from '../../ipc/decode/checked-batch.js';
import { outlineIpcFile } from '../../ipc/decode/file-walk.js';
import { IpcStreamError, outlineIpcStream, type StreamOutline } from '../../ipc/decode/stream-walk.js';
import { ARROW_FILE_MAGIC, startsWithContinuation } from '../../protocol/arrow-framing.js';
import { startsWithBytes } from './table-file-format.js';

/** `FEA1`: the magic of Feather v1, a pre-Arrow-IPC format arrow-js cannot read. */
const FEATHER_V1_MAGIC = Uint8Array.from([0x46, 0x45, 0x41, 0x31]);

/**
 * What an input's compressed buffers may decompress to: no limit beyond
 * the declared lengths, which must match the columns. An input file is the
 * operator's own, and the table it holds is kept in memory whole anyway.
 */
const INPUT_DECOMPRESSED_MAX_BYTES = Number.MAX_SAFE_INTEGER;

/** Which IPC framing the bytes use. */
export type ArrowIpcKind = 'file' | 'stream';

/**
 * Reads Arrow IPC bytes (file or stream format) into a Table with `_row_id`
 * (Int32, 0..n-1) first; an existing `_row_id` column is replaced. Column
 * buffers are views into `bytes`, not copies, unless compressed.
 *
 * @param bytes the whole file; 8-byte aligned avoids a copy inside arrow-js
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` when the bytes are not a
 *   complete Arrow IPC file or stream, hold a batch whose buffers do not
 *   match its header (naming the column), or hold no columns
 */
export function tableFromArrowBytes(bytes: Uint8Array): Table {
  const table = checkedInputTable(bytes, arrowIpcKind(bytes));
  if (table.schema.fields.length === 0) {
    throw unreadable({ problem: 'arrowNoColumns' });
  }
  return withRowIds(table);
}

/**
 * Arrow IPC bytes read from an input (a file, or what a Parquet reader
 * made of one), every batch checked against its schema before arrow-js
 * decodes it (ipc/decode/checked-batch.ts).
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE`, `S2SP_ERR_CODEC_UNAVAILABLE`
 */
export function checkedInputTable(bytes: Uint8Array, kind: ArrowIpcKind): Table {
  try {
    const outline: StreamOutline = kind === 'file' ? outlineIpcFile(bytes) : outlineIpcStream(bytes);
    return checkedTable(outline, decompressionBudget(INPUT_DECOMPRESSED_MAX_BYTES));
  } catch (err) {
    if (isS2SPError(err)) throw err;
    if (err instanceof IpcStreamError) throw unreadableStream(err);
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'arrowReaderFailed', reason: messageOf(err) }, { cause: err });
  }
}

/** The input error for what the ipc/ layer refused. */
function unreadableStream(error: IpcStreamError): S2SPError {
  switch (error.kind) {
    case 'truncated':
      return unreadable({ problem: 'arrowStreamTruncated', reason: error.message });
    case 'invalid':
      return unreadable({ problem: 'arrowBatchInvalid', column: error.column, reason: error.message });
    case 'oversized':
      return unreadable({ problem: 'arrowTooLarge', reason: error.message });
    default:
      return unreadable({ problem: 'arrowStreamMalformed', reason: error.message });
  }
}

/**
 * Names the IPC framing of `bytes` after checking both ends of it.
 *
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` for empty input, Feather v1,
 *   an unknown signature, a file without its closing magic, or a stream
 *   without its end-of-stream marker
 */
export function arrowIpcKind(bytes: Uint8Array): ArrowIpcKind {
  if (bytes.length === 0) throw unreadable({ problem: 'emptyFile' });
  if (startsWithBytes(bytes, ARROW_FILE_MAGIC)) {
    if (!startsWithBytes(bytes, ARROW_FILE_MAGIC, bytes.length - ARROW_FILE_MAGIC.length) || bytes.length < 12) {
      throw unreadable({ problem: 'arrowFileTruncated' });
    }
    return 'file';
  }
  if (startsWithContinuation(bytes)) {
    try {
      outlineIpcStream(bytes);
    } catch (error) {
      if (!(error instanceof IpcStreamError)) throw error;
      throw unreadableStream(error);
    }
    return 'stream';
  }
  if (startsWithBytes(bytes, FEATHER_V1_MAGIC)) {
    throw unreadable({ problem: 'featherV1' });
  }
  // Streams written before Arrow 0.15 lack the continuation marker; they
  // are rare enough now that we name them rather than guess at them.
  throw unreadable({ problem: 'notArrow' });
}

function unreadable(params: ErrorParams<'S2SP_ERR_INPUT_UNREADABLE'>): S2SPError {
  return new S2SPError('S2SP_ERR_INPUT_UNREADABLE', params);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
