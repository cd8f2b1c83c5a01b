/**
 * Arrow IPC record batch messages from arrow-js batches, or from buffers
 * already compressed.
 *
 * With buffer compression, each body buffer is `int64 uncompressed length |
 * frame` (LZ4 or ZSTD), padded to 8 bytes. We write these ourselves because arrow-js
 * 21.1-21.2 puts the compressed length in that prefix, which arrow-rs and
 * polars reject. The format also allows `int64 -1 | raw bytes` for a buffer
 * that does not compress, but polars reads such raw bytes in place from a
 * scratch buffer 8 bytes past its start, and panics when they hold 16-byte
 * values (Decimal128) that are then not 16-aligned; so every buffer is a
 * frame, as Arrow C++ (pyarrow) writes by default. An incompressible
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
import type { Data, RecordBatch } from 'apache-arrow';
import { BufferRegion } from 'apache-arrow/ipc/metadata/message';
import type { FieldNode } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import type { IpcCodec } from '../../protocol/media-types.js';
import { padTo8, recordBatchMetadata } from './message.js';

/** How body buffers are compressed: the codec the header names, and its compressor. */
export interface BufferCompression {
  readonly codec: IpcCodec;
  /** Compresses one body buffer into one frame of `codec`. */
  readonly compress: (bytes: Uint8Array) => Uint8Array;
}

const ZERO_PADDING = new Uint8Array(8);

/**
 * One record batch message as a list of parts to write in order. Without a
 * compressor the body parts are views of the batch's own buffers (no copy).
 * The batch must hold no dictionary-encoded columns.
 */
export function recordBatchMessage(batch: RecordBatch, compression?: BufferCompression): Uint8Array[] {
  const assembled = assemble(batch);
  const buffers = assembled.buffers as Uint8Array[];
  if (compression === undefined) {
    const parts = [
      recordBatchMetadata(batch.numRows, assembled.nodes, assembled.bufferRegions, assembled.byteLength, undefined, assembled.variadicBufferCounts),
    ];
    for (const buffer of buffers) pushPadded(parts, asBytes(buffer));
    return parts;
  }
  const compressed = buffers.map((buffer) => compressedBuffer(asBytes(buffer), compression.compress));
  return compressedBatchMessage(batch.numRows, assembled.nodes, compressed, assembled.variadicBufferCounts, compression.codec);
}

/**
 * One body buffer as a compressed message carries it: `int64 uncompressed
 * length | frame`, unpadded; never `-1 | raw bytes` (see the header). An
 * empty buffer stays empty.
 */
export function compressedBuffer(raw: Uint8Array, compress: (bytes: Uint8Array) => Uint8Array): Uint8Array {
  if (raw.byteLength === 0) return raw;
  const frame = compress(raw);
  const out = new Uint8Array(8 + frame.byteLength);
  new DataView(out.buffer).setBigInt64(0, BigInt(raw.byteLength), true);
  out.set(frame, 8);
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
  return [recordBatchMetadata(numRows, nodes, regions, offset, codec, variadicBufferCounts), ...body];
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
