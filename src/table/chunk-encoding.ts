/**
 * Encodes one chunk of a body in a response format: a JSON fragment (rows
 * separated by commas, no brackets) or Arrow record batch messages. The same
 * function runs on the main thread and in workers; the framing around the
 * chunks (JSON brackets, the Arrow schema and end-of-stream) is the caller's.
 */
import { Table } from 'apache-arrow';
import { recordBatchMessage, type BufferCompressor } from '../ipc/message-writer.js';
import { jsonRowFragment } from './json-encoding.js';
import { chunkBatches, type RowChunk } from './row-chunks.js';

/** What a chunk is encoded as. */
export type ChunkFormat = { readonly kind: 'json' } | { readonly kind: 'arrow'; readonly codec?: 'lz4' };

/**
 * Encodes `chunk` of `table` (already projected to the response columns).
 * @param compress the LZ4 frame compressor, required when `format.codec` is `lz4`
 * @returns the bytes to write, in order; for uncompressed Arrow over a range
 *   these are views of the table's own buffers
 */
export function encodeChunk(table: Table, chunk: RowChunk, format: ChunkFormat, compress?: BufferCompressor): Uint8Array[] {
  const batches = chunkBatches(table, chunk);
  if (format.kind === 'json') {
    const fragment = jsonRowFragment(new Table(table.schema, batches));
    return fragment.byteLength === 0 ? [] : [fragment];
  }
  if (format.codec === 'lz4' && compress === undefined) throw new Error('encodeChunk: an LZ4 compressor is required');
  const parts: Uint8Array[] = [];
  for (const batch of batches) parts.push(...recordBatchMessage(batch, format.codec === 'lz4' ? compress : undefined));
  return parts;
}
