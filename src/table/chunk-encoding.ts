/**
 * Encodes one chunk of a body in a response format: a JSON fragment (rows
 * separated by commas, no brackets) or Arrow record batch messages. The same
 * function runs on the main thread and in workers; the framing around the
 * chunks (JSON brackets, the Arrow schema and end-of-stream) is the caller's.
 */
import { Table } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { recordBatchMessage, type BufferCompression } from '../ipc/encode/record-batch.js';
import type { IpcCodec } from '../protocol/media-types.js';
import { jsonRowFragment } from '../json/body-writer.js';
import { chunkBatches, type RowChunk } from './row-chunks.js';

/** What a chunk is encoded as. */
export type ChunkFormat = { readonly kind: 'json' } | { readonly kind: 'arrow'; readonly codec?: IpcCodec };

/**
 * Encodes `chunk` of `table` (already projected to the response columns).
 * @param compression the codec's compressor, required when `format.codec` is set (and of that codec)
 * @returns the bytes to write, in order; for uncompressed Arrow over a range
 *   these are views of the table's own buffers
 */
export function encodeChunk(table: Table, chunk: RowChunk, format: ChunkFormat, compression?: BufferCompression): Uint8Array[] {
  const batches = chunkBatches(table, chunk);
  if (format.kind === 'json') {
    const fragment = jsonRowFragment(new Table(table.schema, batches));
    return fragment.byteLength === 0 ? [] : [fragment];
  }
  if (format.codec !== undefined && compression?.codec !== format.codec) {
    throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'compressorMissing', codec: format.codec });
  }
  const parts: Uint8Array[] = [];
  for (const batch of batches) parts.push(...recordBatchMessage(batch, format.codec === undefined ? undefined : compression));
  return parts;
}
