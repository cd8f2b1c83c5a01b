/**
 * Arrow IPC stream messages, written one at a time so a large body can be
 * streamed batch by batch and each batch encoded on its own (in a worker).
 *
 * Stream layout (Arrow columnar format, "Encapsulated message format"):
 *
 *   message := 0xFFFFFFFF | int32 metadata length (padded to 8) | flatbuffer Message | padding | body
 *   stream  := schema message, record batch messages..., 0xFFFFFFFF 0x00000000 (end of stream)
 *
 * With buffer compression, each body buffer is `int64 uncompressed length |
 * LZ4 frame`, or `int64 -1 | raw bytes` when compressing did not help, each
 * padded to 8 bytes. We write these ourselves because arrow-js 21.1-21.2 puts
 * the compressed length in that prefix, which arrow-rs and polars reject.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { CompressionType } from 'apache-arrow/fb/compression-type';
import {
  BodyCompression,
  BufferRegion,
  Message,
  RecordBatch as RecordBatchHeader,
} from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';


/** Compresses one body buffer (an LZ4 frame). */
export type BufferCompressor = (bytes: Uint8Array) => Uint8Array;

const ZERO_PADDING = new Uint8Array(8);

function padTo8(n: number): number {
  return (n + 7) & ~7;
}

/** Frames flatbuffer message metadata: continuation marker, aligned length, metadata, padding. */
function framedMetadata(message: Message): Uint8Array {
  const metadata = Message.encode(message);
  const aligned = padTo8(metadata.byteLength + 8);
  const out = new Uint8Array(aligned);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, aligned - 8, true);
  out.set(metadata, 8);
  return out;
}

/** The schema message that opens a stream. */
export function schemaMessage(schema: Schema): Uint8Array {
  return framedMetadata(Message.from(schema));
}

/**
 * One record batch message as a list of parts to write in order. Without a
 * compressor the body parts are views of the batch's own buffers (no copy).
 * The batch must hold no dictionary-encoded columns.
 */
export function recordBatchMessage(batch: RecordBatch, compress?: BufferCompressor): Uint8Array[] {
  const assembled = VectorAssembler.assemble(batch);
  const buffers = assembled.buffers as Uint8Array[];
  if (compress === undefined) {
    const header = new RecordBatchHeader(batch.numRows, assembled.nodes, assembled.bufferRegions, null, assembled.variadicBufferCounts);
    const parts = [framedMetadata(Message.from(header, assembled.byteLength))];
    for (const buffer of buffers) pushPadded(parts, asBytes(buffer));
    return parts;
  }
  const body: Uint8Array[] = [];
  const regions: BufferRegion[] = [];
  let offset = 0;
  for (const buffer of buffers) {
    const raw = asBytes(buffer);
    if (raw.byteLength === 0) {
      regions.push(new BufferRegion(offset, 0));
      continue;
    }
    const compressed = compress(raw);
    const useCompressed = compressed.byteLength < raw.byteLength;
    const prefix = new Uint8Array(8);
    // The uncompressed length, or -1 for "stored raw" (format spec, BodyCompression).
    new DataView(prefix.buffer).setBigInt64(0, useCompressed ? BigInt(raw.byteLength) : -1n, true);
    const data = useCompressed ? compressed : raw;
    regions.push(new BufferRegion(offset, 8 + data.byteLength));
    body.push(prefix);
    pushPadded(body, data);
    offset += padTo8(8 + data.byteLength);
  }
  const compression = new BodyCompression(CompressionType.LZ4_FRAME);
  const header = new RecordBatchHeader(batch.numRows, assembled.nodes, regions, compression, assembled.variadicBufferCounts);
  return [framedMetadata(Message.from(header, offset)), ...body];
}

/** Appends `bytes` and the zero padding that brings it to a multiple of 8. */
function pushPadded(parts: Uint8Array[], bytes: Uint8Array): void {
  if (bytes.byteLength === 0) return;
  parts.push(bytes);
  const padding = padTo8(bytes.byteLength) - bytes.byteLength;
  if (padding > 0) parts.push(ZERO_PADDING.subarray(0, padding));
}

function asBytes(view: ArrayBufferView): Uint8Array {
  return view instanceof Uint8Array ? view : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Total byte length of message parts. */
export function partsLength(parts: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  return n;
}

/** Copies parts into one ArrayBuffer (to transfer it from a worker). */
export function concatParts(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(partsLength(parts));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
