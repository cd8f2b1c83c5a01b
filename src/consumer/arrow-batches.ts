/**
 * Decodes the data plane's Arrow answer as it arrives (SPEC 3.2), batch by
 * batch: every fetch reads Arrow this way (fetchBody collects the batches).
 *
 * The framing walk (ipc/decode/stream-walk.ts) cuts the bytes into whole messages;
 * each record batch is decoded by arrow-js on its own, as soon as its
 * message is complete, from the schema, the dictionaries so far and the
 * batch (arrow-js's own async reader reads a message ahead, which would
 * hold a batch back). The schema is checked before any batch, each batch
 * checked and decompressed within the body limit (ipc/decode/checked-batch.ts)
 * before arrow-js sees it, and the stream ends only after
 * its end-of-stream marker: a transfer cut anywhere throws from the batch
 * where it broke and is never read as fewer rows. Batches already handed
 * over were whole; the caller decides what a failed transfer means for them.
 *
 * Ids must ascend strictly (our server sends them so, SPEC 3.1): checking
 * uniqueness otherwise would mean keeping every id seen.
 */
import { DataType, RecordBatchReader, type RecordBatch, type Schema } from 'apache-arrow';
import { S2SPError, isS2SPError } from '../errors.js';
import { checkedBatchMessage, decompressionBudget } from '../ipc/decode/checked-batch.js';
import { IpcStreamError, walkIpcStream, type WalkedMessage } from '../ipc/decode/stream-walk.js';
import { ipcCodecOfCompressionType } from '../ipc/compression/codec-registry.js';
import type { IpcCodec } from '../protocol/media-types.js';
import { MAX_ROW_ID, ROW_ID } from '../protocol/row-id.js';
import { responseInvalid as invalid } from '../json/decoded-body.js';

/** An Arrow answer opened for reading batch by batch. */
export interface ArrowBatches {
  /** The schema, `_row_id` first (known before any batch). */
  schema: Schema;
  /** The batches as they arrive; iterate once. Leaving early stops the walk. */
  batches: AsyncGenerator<RecordBatch>;
  /** True once any batch read so far used buffer compression. */
  compressed(): boolean;
  /** The codec of the first compressed batch read so far (ours: lz4, zstd). */
  codec(): IpcCodec | undefined;
}

/**
 * Opens an Arrow IPC stream answer: reads up to its schema message.
 * @param maxBytes the most bytes the body's buffers may decompress to, all batches together
 * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` (not Arrow, cut short, no
 *   integer `_row_id` first); the batches throw it too (a corrupt batch), and
 *   `S2SP_ERR_CONSUMER_BODY_TOO_LARGE`, `S2SP_ERR_CODEC_UNAVAILABLE`
 */
export async function openArrowBatches(chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<ArrowBatches> {
  const walk: AsyncGenerator<WalkedMessage, unknown> = walkIpcStream(chunks);
  const budget = decompressionBudget(maxBytes);
  const step = (): Promise<WalkedMessage | undefined> => stepOf(walk, maxBytes);
  const first = await step();
  if (first === undefined) throw invalid({ problem: 'noSchema' });
  const schemaBytes = first.bytes;
  const schema = decode(() => RecordBatchReader.from(schemaBytes).open().schema);
  checkRowIdField(schema);
  let codec: IpcCodec | undefined;
  async function* batches(): AsyncGenerator<RecordBatch> {
    const dictionaries: Uint8Array[] = [];
    let previous = -1;
    try {
      for (;;) {
        const next = await step();
        if (next === undefined) return;
        if (next.codec !== undefined) codec ??= ipcCodecOfCompressionType(next.codec);
        const checked = checkOrFail(() => checkedBatchMessage(schema, next, budget), maxBytes);
        if (next.kind === 'dictionary-batch') {
          dictionaries.push(checked);
          continue;
        }
        const decoded = decode(() => [...RecordBatchReader.from([schemaBytes, ...dictionaries, checked])]);
        const rows = decoded.reduce((n, batch) => n + batch.numRows, 0);
        if (rows !== next.rows) throw invalid({ problem: 'batchRowCount', index: next.index, declared: next.rows, decoded: rows });
        for (const batch of decoded) {
          previous = checkAscendingIds(batch, previous);
          yield batch;
        }
      }
    } finally {
      // Stops the walk (and so the transfer) when the caller leaves early.
      await walk.return(undefined);
    }
  }
  return { schema, batches: batches(), compressed: () => codec !== undefined, codec: () => codec };
}

/** The walk's next message, or undefined after the end-of-stream marker. */
async function stepOf(walk: AsyncGenerator<WalkedMessage, unknown>, maxBytes: number): Promise<WalkedMessage | undefined> {
  try {
    const next = await walk.next();
    return next.done === true ? undefined : next.value;
  } catch (error) {
    if (isS2SPError(error) || !(error instanceof IpcStreamError)) throw error;
    throw arrowStreamFailure(error, maxBytes);
  }
}

/** Runs a batch check, turning what the ipc/ layer refuses into our error. */
function checkOrFail<T>(check: () => T, maxBytes: number): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof IpcStreamError) throw arrowStreamFailure(error, maxBytes);
    throw error;
  }
}

/** Runs an arrow-js decode, turning what it throws into our error. */
function decode<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isS2SPError(error)) throw error;
    throw invalid({ problem: 'arrowUndecodable', reason: (error as Error)?.message ?? String(error) }, error);
  }
}

/** Every `_row_id` of `batch` non-null, in range, above the one before; returns the last. */
function checkAscendingIds(batch: RecordBatch, previous: number): number {
  const data = batch.data.children[0];
  if (data.nullCount > 0) throw invalid({ problem: 'rowIdNulls' });
  // Decoded from IPC, so unsliced. Int64/Uint64 come as bigint; Number() is exact in the range we accept.
  const values = data.values as ArrayLike<number | bigint>;
  let last = previous;
  for (let i = 0; i < data.length; i++) {
    const id = Number(values[i]);
    if (!(id >= 0 && id <= MAX_ROW_ID)) throw invalid({ problem: 'rowIdRange', id });
    if (id <= last) throw invalid({ problem: 'rowIdNotAscending', id, last });
    last = id;
  }
  return last;
}

/**
 * The consumer's error for an Arrow answer the ipc/ layer refused: cut
 * short, not Arrow, a corrupt batch (naming its column), or buffers that
 * decompress past `maxBytes`.
 */
function arrowStreamFailure(error: IpcStreamError, maxBytes: number): S2SPError {
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

/** The first field must be an integer `_row_id`. @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` */
function checkRowIdField(schema: Schema): void {
  const first = schema.fields[0];
  if (first === undefined) throw invalid({ problem: 'noFields' });
  if (first.name !== ROW_ID) throw invalid({ problem: 'firstField', name: first.name });
  if (!DataType.isInt(first.type)) throw invalid({ problem: 'rowIdType', type: String(first.type) });
}
