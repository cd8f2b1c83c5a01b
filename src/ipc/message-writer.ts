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
 * LZ4 frame`, padded to 8 bytes. We write these ourselves because arrow-js
 * 21.1-21.2 puts the compressed length in that prefix, which arrow-rs and
 * polars reject. The format also allows `int64 -1 | raw bytes` for a buffer
 * that does not compress, but polars reads such raw bytes in place from a
 * scratch buffer 8 bytes past its start, and panics when they hold 16-byte
 * values (Decimal128) that are then not 16-aligned; so every buffer is an
 * LZ4 frame, as Arrow C++ (pyarrow) writes by default. An incompressible
 * buffer costs a few bytes of frame header, and decompressing its stored
 * blocks is a copy.
 *
 * A second arrow-js 21.2 bug is worked around here: its assembler cuts the
 * view structs of a sliced Utf8View/BinaryView column by the slice offset,
 * but slicing has already cut them (data.ts `_sliceBuffers`), so any slice
 * not starting at row 0 (a scattered selection, a list's values past its
 * first element) came out with a short or empty view buffer that polars and
 * arrow-js itself refuse.
 */
import type { Data, RecordBatch, Schema } from 'apache-arrow';
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
  const assembled = assemble(batch);
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
    const data = compress(raw);
    const prefix = new Uint8Array(8);
    // The uncompressed length (format spec, BodyCompression); never -1, see the header.
    new DataView(prefix.buffer).setBigInt64(0, BigInt(raw.byteLength), true);
    regions.push(new BufferRegion(offset, 8 + data.byteLength));
    body.push(prefix);
    pushPadded(body, data);
    offset += padTo8(8 + data.byteLength);
  }
  const compression = new BodyCompression(CompressionType.LZ4_FRAME);
  const header = new RecordBatchHeader(batch.numRows, assembled.nodes, regions, compression, assembled.variadicBufferCounts);
  return [framedMetadata(Message.from(header, offset)), ...body];
}

/** The assembler's own state (protected in arrow-js's typings), which a view column adds to. */
interface AssemblerState {
  _byteLength: number;
  _buffers: ArrayBufferView[];
  _bufferRegions: BufferRegion[];
  _variadicBufferCounts: number[];
}

/** Byte size of one view struct. */
const VIEW_SIZE = 16;

/** VectorAssembler.assemble(batch), with view columns cut once (see the header). */
function assemble(batch: RecordBatch): VectorAssembler {
  // assemble() with nothing is a fresh assembler: its constructor is private.
  const assembler = VectorAssembler.assemble();
  const state = assembler as unknown as AssemblerState;
  const addBuffer = (bytes: ArrayBufferView): void => {
    state._buffers.push(bytes);
    state._bufferRegions.push(new BufferRegion(state._byteLength, padTo8(bytes.byteLength)));
    state._byteLength += padTo8(bytes.byteLength);
  };
  const views = (data: Data): VectorAssembler => {
    // `values` already starts at the slice's first view.
    addBuffer((data.values as Uint8Array).subarray(0, data.length * VIEW_SIZE));
    const variadic = (data.variadicBuffers ?? []) as readonly Uint8Array[];
    for (const buffer of variadic) addBuffer(buffer);
    state._variadicBufferCounts.push(variadic.length);
    return assembler;
  };
  Object.assign(assembler, { visitUtf8View: views, visitBinaryView: views });
  assembler.visitMany(batch.data.children);
  return assembler;
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
