/**
 * Test helpers: Arrow IPC stream bytes (plain from arrow-js, LZ4 from our
 * message writer), and a stand-in answer that sends them.
 */
import type http from 'node:http';
import { Float64, Int32, Table, Utf8, compressionRegistry, tableToIPC, vectorFromArray } from 'apache-arrow';
import { COMPRESSION_TYPE_OF, ipcCodec, ipcCodecAvailable } from '../../src/ipc/compression/codec-registry.js';
import type { IpcCodec } from '../../src/protocol/media-types.js';
import { schemaMessage } from '../../src/ipc/encode/message.js';
import { recordBatchMessage, type BufferCompression } from '../../src/ipc/encode/record-batch.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';
import type { ChunkFormat } from '../../src/table/chunk-encoding.js';

/** The Arrow stream media type. */
export const ARROW_STREAM = 'application/vnd.apache.arrow.stream';

/** Test options for tests that build LZ4 streams: skipped where lz4-napi has no binary. */
export const NEEDS_LZ4 = { skip: ipcCodecAvailable('lz4') ? false : 'lz4-napi has no binary for this platform' };

/** Test options for tests that need ZSTD: skipped where no implementation loads. */
export const NEEDS_ZSTD = { skip: ipcCodecAvailable('zstd') ? false : 'no zstd implementation for this platform' };

/** The Accept fetchBody sends by default to a loopback server (uncompressed Arrow, JSON at q=0.5). */
export const DEFAULT_ACCEPT = `${ARROW_STREAM}, application/json;q=0.5`;

/** The compressor a chunk format needs (undefined for JSON and plain Arrow), as the data plane picks it. */
export function compressionFor(format: ChunkFormat): BufferCompression | undefined {
  if (format.kind !== 'arrow' || format.codec === undefined) return undefined;
  return { codec: format.codec, compress: ipcCodec(format.codec).compress };
}

/**
 * A table of `batches` record batches of `perBatch` rows each: `_row_id`
 * (Int32, 0..n-1), `name` (Utf8, repetitive so LZ4 shrinks it), `mag`
 * (Float64). No dictionary columns, so a stream of the first k batches is a
 * byte prefix of the stream of all of them.
 */
export function sampleTable(batches: number, perBatch: number): Table {
  const parts = [];
  for (let b = 0; b < batches; b++) {
    const rows = sampleRows(b + 1, perBatch).slice(b * perBatch);
    const chunk = new Table({
      _row_id: vectorFromArray(
        rows.map((r) => r._row_id as number),
        new Int32(),
      ),
      name: vectorFromArray(
        rows.map((r) => r.name as string),
        new Utf8(),
      ),
      mag: vectorFromArray(
        rows.map((r) => r.mag as number),
        new Float64(),
      ),
    });
    parts.push(...chunk.batches);
  }
  return new Table(parts);
}

/** The rows `sampleTable(batches, perBatch)` holds, as rowsFromTable returns them. */
export function sampleRows(batches: number, perBatch: number): Record<string, unknown>[] {
  return Array.from({ length: batches * perBatch }, (_, i) => ({ _row_id: i, name: `station ${i % 3} `.repeat(8), mag: i * 1.5 }));
}

/**
 * Lets arrow-js's own IPC reader decompress `codec` with our codec, for
 * tests that read our own (trusted) output with arrow-js directly; bodies
 * from outside go through src/ipc/decode/checked-batch.ts, never through this.
 */
export function registerArrowDecoder(name: IpcCodec): void {
  const codec = ipcCodec(name);
  compressionRegistry.set(COMPRESSION_TYPE_OF[name], { decode: (bytes: Uint8Array) => codec.decompress(bytes, Number.MAX_SAFE_INTEGER) as Uint8Array });
}

/** An uncompressed IPC stream of `table`, end-of-stream marker included. */
export function ipcOf(table: Table): Uint8Array {
  return tableToIPC(table, 'stream');
}

/**
 * An LZ4_FRAME-compressed IPC stream of `table`, written by our message
 * writer (each buffer's prefix is its uncompressed length, as the format
 * wants; arrow-js's own writer puts the compressed length there, which a
 * checked reader refuses). No decoder is left in arrow-js's registry, so a
 * reader that leans on it fails instead of borrowing one.
 */
export function lz4IpcOf(table: Table): Uint8Array {
  const compression = { codec: 'lz4' as const, compress: ipcCodec('lz4').compress };
  const parts = [schemaMessage(table.schema), ...table.batches.flatMap((batch) => recordBatchMessage(batch, compression)), END_OF_STREAM];
  // A buffer of its own, so the messages stay 8-byte aligned.
  return new Uint8Array(Buffer.concat(parts));
}

/** Answers 200 with `bytes` and the given Content-Type (Arrow by default). */
export function sendBytes(res: http.ServerResponse, bytes: Uint8Array, contentType = ARROW_STREAM): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.byteLength });
  res.end(bytes);
}
