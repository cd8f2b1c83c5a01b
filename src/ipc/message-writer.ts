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
 * frame` (LZ4 or ZSTD), or `int64 -1 | raw bytes` when compressing did not
 * help, each padded to 8 bytes. We write these ourselves because arrow-js 21.1-21.2 puts
 * the compressed length in that prefix, which arrow-rs and polars reject.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import {
  BodyCompression,
  BufferRegion,
  Message,
  RecordBatch as RecordBatchHeader,
} from 'apache-arrow/ipc/metadata/message';
import type { FieldNode } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import type { IpcCodec } from '../protocol/media-types.js';
import { COMPRESSION_TYPE_OF } from './codec-registry.js';

/** How body buffers are compressed: the codec the header names, and its compressor. */
export interface BufferCompression {
  readonly codec: IpcCodec;
  /** Compresses one body buffer into one frame of `codec`. */
  readonly compress: (bytes: Uint8Array) => Uint8Array;
}

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
export function recordBatchMessage(batch: RecordBatch, compression?: BufferCompression): Uint8Array[] {
  const assembled = VectorAssembler.assemble(batch);
  const buffers = assembled.buffers as Uint8Array[];
  if (compression === undefined) {
    const header = new RecordBatchHeader(batch.numRows, assembled.nodes, assembled.bufferRegions, null, assembled.variadicBufferCounts);
    const parts = [framedMetadata(Message.from(header, assembled.byteLength))];
    for (const buffer of buffers) pushPadded(parts, asBytes(buffer));
    return parts;
  }
  const compressed = buffers.map((buffer) => compressedBuffer(asBytes(buffer), compression.compress));
  return compressedBatchMessage(batch.numRows, assembled.nodes, compressed, assembled.variadicBufferCounts, compression.codec);
}

/**
 * One body buffer as a compressed message carries it: `int64 uncompressed
 * length | frame`, or `int64 -1 | raw bytes` when the frame is not smaller
 * (format spec, BodyCompression); unpadded. An empty buffer stays empty.
 */
export function compressedBuffer(raw: Uint8Array, compress: (bytes: Uint8Array) => Uint8Array): Uint8Array {
  if (raw.byteLength === 0) return raw;
  const frame = compress(raw);
  const useFrame = frame.byteLength < raw.byteLength;
  const data = useFrame ? frame : raw;
  const out = new Uint8Array(8 + data.byteLength);
  new DataView(out.buffer).setBigInt64(0, useFrame ? BigInt(raw.byteLength) : -1n, true);
  out.set(data, 8);
  return out;
}

/**
 * A record batch message from buffers already in their compressed form
 * ({@link compressedBuffer}), e.g. kept from an earlier response: the parts
 * are the header and views of those buffers, with padding; nothing is copied.
 */
export function compressedBatchMessage(
  numRows: number,
  nodes: readonly FieldNode[],
  buffers: readonly Uint8Array[],
  variadicBufferCounts: readonly number[],
  codec: IpcCodec,
): Uint8Array[] {
  const body: Uint8Array[] = [];
  const regions: BufferRegion[] = [];
  let offset = 0;
  for (const buffer of buffers) {
    regions.push(new BufferRegion(offset, buffer.byteLength));
    pushPadded(body, buffer);
    offset += padTo8(buffer.byteLength);
  }
  const header = new RecordBatchHeader(numRows, [...nodes], regions, new BodyCompression(COMPRESSION_TYPE_OF[codec]), [...variadicBufferCounts]);
  return [framedMetadata(Message.from(header, offset)), ...body];
}

/** The parts of a record batch message we wrote: its field nodes and body buffers (views of `message`). */
export interface BatchMessageParts {
  readonly numRows: number;
  readonly nodes: FieldNode[];
  /** Each buffer's bytes as its region gives them (for a compressed message: prefix and frame, unpadded). */
  readonly buffers: Uint8Array[];
  readonly variadicBufferCounts: number[];
}

/** Reads back one record batch message (framed metadata, then its body) into views of its buffers. */
export function batchMessageParts(message: Uint8Array): BatchMessageParts {
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const metadataLength = view.getInt32(4, true);
  const decoded = Message.decode(message.subarray(8, 8 + metadataLength));
  if (!decoded.isRecordBatch()) throw new Error('batchMessageParts: not a record batch message');
  const header = decoded.header() as RecordBatchHeader;
  const body = message.subarray(8 + metadataLength);
  return {
    numRows: Number(header.length),
    nodes: header.nodes,
    buffers: header.buffers.map((region) => body.subarray(Number(region.offset), Number(region.offset) + Number(region.length))),
    variadicBufferCounts: header.variadicBufferCounts.map(Number),
  };
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
