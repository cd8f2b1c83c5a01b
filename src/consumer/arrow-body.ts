/**
 * Decodes the data plane's Arrow answer (SPEC 3.2): an Arrow IPC stream whose
 * first field is `_row_id`, its buffers optionally LZ4_FRAME- or
 * ZSTD-compressed (DESIGN.md, "Compression").
 *
 * Order matters: the stream's framing is walked first (ipc-stream-walk.ts),
 * so a body cut short fails before arrow-js, which would read it as fewer
 * rows, ever sees it; then the schema is checked, so a foreign stream fails
 * before anything is decompressed; then every batch is checked and
 * decompressed within `maxBytes` (ipc/decode/checked-batch.ts), and arrow-js
 * decodes. Uncompressed columns are views of the response bytes, not copies.
 */
import { DataType, type CompressionType, type Schema, type Table } from 'apache-arrow';
import { S2SPError, isS2SPError } from '../errors.js';
import { checkedTable, decompressionBudget } from '../ipc/decode/checked-batch.js';
import { ipcCodecOfCompressionType } from '../ipc/compression/codec-registry.js';
import type { IpcCodec } from '../protocol/media-types.js';
import { MAX_ROW_ID, ROW_ID } from '../protocol/row-id.js';
import { responseInvalid as invalid } from './http-failure.js';
import { IpcStreamError, outlineIpcStream, type StreamOutline } from '../ipc/decode/stream-walk.js';
import type { DecodedBody } from './json-body.js';

/** A decoded Arrow body. */
export interface ArrowBody extends DecodedBody {
  /** True when any batch of the stream used buffer compression. */
  compressed: boolean;
  /** The codec of the first compressed batch (ours: lz4, zstd), when there is one. */
  codec?: IpcCodec;
}

/**
 * Decodes a complete Arrow IPC stream response body.
 *
 * Arrow carries no `total_rows`, so `totalRows` is the row count and
 * `columns` the schema's field names.
 *
 * @param bytes the response body; 8-byte aligned avoids a copy of each message body
 * @param maxBytes the most bytes its buffers may decompress to, all together
 * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` when the stream is cut short
 *   (mid-message, or at a message boundary without the end-of-stream marker), is not
 *   Arrow IPC, holds a batch whose buffers do not match its header, or does not start
 *   with an integer `_row_id` holding unique ids; `S2SP_ERR_CONSUMER_BODY_TOO_LARGE`
 *   when its buffers declare more than `maxBytes` decompressed; `S2SP_ERR_CODEC_UNAVAILABLE`
 *   when it is compressed with a codec this platform lacks
 */
export function bodyFromArrow(bytes: Uint8Array, maxBytes: number): ArrowBody {
  const outline = completeOutline(bytes);
  checkRowIdField(outline.schema);
  let table: Table;
  try {
    table = checkedTable(outline, decompressionBudget(maxBytes));
  } catch (error) {
    if (isS2SPError(error)) throw error;
    if (error instanceof IpcStreamError) throw arrowStreamFailure(error, maxBytes);
    throw invalid({ problem: 'arrowUndecodable', reason: (error as Error).message }, error);
  }
  // The walk proved the stream complete; this proves the reader used all of it.
  if (table.numRows !== outline.rows) {
    throw invalid({ problem: 'rowCountMismatch', declared: outline.rows, decoded: table.numRows });
  }
  checkRowIds(table);
  return {
    table,
    totalRows: table.numRows,
    columns: table.schema.fields.map((f) => f.name),
    compressed: outline.codecs.size > 0,
    codec: firstCodecOf(outline.codecs),
  };
}

/**
 * The consumer's error for an Arrow answer the ipc/ layer refused: cut
 * short, not Arrow, a corrupt batch (naming its column), or buffers that
 * decompress past `maxBytes`.
 */
export function arrowStreamFailure(error: IpcStreamError, maxBytes: number): S2SPError {
  switch (error.kind) {
    case 'truncated':
      return invalid({ problem: 'cutShort', reason: error.message });
    case 'invalid':
      return invalid({ problem: 'batchInvalid', column: error.column, reason: error.message }, error.cause);
    case 'oversized':
      return new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'decompressed', maxBytes, reason: error.message });
    default:
      return invalid({ problem: 'badStream', reason: error.message }, error.cause);
  }
}

function firstCodecOf(types: ReadonlySet<CompressionType>): IpcCodec | undefined {
  for (const type of types) return ipcCodecOfCompressionType(type);
  return undefined;
}

/** The first field must be an integer `_row_id`. @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` */
export function checkRowIdField(schema: Schema): void {
  const first = schema.fields[0];
  if (first === undefined) throw invalid({ problem: 'noFields' });
  if (first.name !== ROW_ID) throw invalid({ problem: 'firstField', name: first.name });
  if (!DataType.isInt(first.type)) throw invalid({ problem: 'rowIdType', type: String(first.type) });
}

/**
 * Every `_row_id` non-null, in [0, 2^31) and unique, as the JSON decoder
 * requires: the merge keys rows by it. One pass suffices when the ids
 * ascend (our server sends them so, SPEC 3.1); otherwise a second pass
 * looks for duplicates with a Set.
 */
function checkRowIds(table: Table): void {
  let previous = -1;
  let ascending = true;
  forEachRowId(table, (id) => {
    if (!(id >= 0 && id <= MAX_ROW_ID)) throw invalid({ problem: 'rowIdRange', id });
    if (id <= previous) ascending = false;
    previous = id;
  });
  if (ascending) return;
  const seen = new Set<number>();
  forEachRowId(table, (id) => {
    if (seen.has(id)) throw invalid({ problem: 'duplicateRowId', id });
    seen.add(id);
  });
}

function forEachRowId(table: Table, visit: (id: number) => void): void {
  for (const batch of table.batches) {
    const data = batch.data.children[0];
    if (data.nullCount > 0) throw invalid({ problem: 'rowIdNulls' });
    // Decoded from IPC, so unsliced: values[0] is the batch's first id.
    // Int64/Uint64 come as bigint; Number() is exact in the range we accept.
    const values = data.values as ArrayLike<number | bigint>;
    for (let i = 0; i < data.length; i++) visit(Number(values[i]));
  }
}

/** The stream's outline, or RESPONSE_INVALID when it is cut short or not Arrow. */
function completeOutline(bytes: Uint8Array): StreamOutline {
  try {
    return outlineIpcStream(bytes);
  } catch (error) {
    if (!(error instanceof IpcStreamError)) throw error;
    // The walk reads framing only: no batch is checked or decompressed yet.
    throw arrowStreamFailure(error, 0);
  }
}
