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
import type { Data, RecordBatch, Schema } from 'apache-arrow';
import {
  BodyCompression,
  BufferRegion,
  FieldNode as FieldNodeClass,
  Message,
  RecordBatch as RecordBatchHeader,
} from 'apache-arrow/ipc/metadata/message';
import type { FieldNode } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import type { IpcCodec } from '../protocol/media-types.js';
import { COMPRESSION_TYPE_OF } from './codec-registry.js';
import { S2SPError } from '../errors.js';

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
export function framedMetadata(message: Message): Uint8Array {
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
  const assembled = assemble(batch);
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
 * The framed metadata of an uncompressed record batch message whose body
 * (`bodyLength` bytes, each buffer padded to 8) the caller writes itself,
 * byte for byte the header {@link recordBatchMessage} writes for the same
 * nodes and regions.
 *
 * For a batch with rows and a body, a template of the same shape (as many
 * nodes and buffers) is patched instead of encoded: the flatbuffer's layout
 * does not depend on these numbers (FieldNode and Buffer are structs, always
 * written; only a zero length or body length, a default, is left out), and
 * arrow-js builds a flatbuffers Builder, objects and a BigInt per number for
 * every message, which the small-requests profile showed.
 */
export function recordBatchMetadata(numRows: number, nodes: FieldNode[], regions: BufferRegion[], bodyLength: number): Uint8Array {
  if (numRows > 0 && bodyLength > 0) {
    const template = templateFor(nodes.length, regions.length);
    if (template !== null) return template.fill(numRows, nodes, regions, bodyLength);
  }
  return encodedRecordBatchMetadata(numRows, nodes, regions, bodyLength);
}

function encodedRecordBatchMetadata(numRows: number, nodes: FieldNode[], regions: BufferRegion[], bodyLength: number): Uint8Array {
  return framedMetadata(Message.from(new RecordBatchHeader(numRows, nodes, regions, null, []), bodyLength));
}

interface MetadataTemplate {
  fill(numRows: number, nodes: readonly FieldNode[], regions: readonly BufferRegion[], bodyLength: number): Uint8Array;
}

const templates = new Map<string, MetadataTemplate | null>();
const MAX_TEMPLATES = 256;
const TWO_32 = 2 ** 32;

function templateFor(nodeCount: number, regionCount: number): MetadataTemplate | null {
  const key = `${nodeCount}:${regionCount}`;
  let template = templates.get(key);
  if (template === undefined) {
    template = makeTemplate(nodeCount, regionCount);
    if (templates.size >= MAX_TEMPLATES) templates.clear();
    templates.set(key, template);
  }
  return template;
}

/**
 * Encodes a message of the shape with a distinct sentinel in every number,
 * and finds where each one landed. Null (encode each time) if any sentinel is
 * not found exactly once.
 */
function makeTemplate(nodeCount: number, regionCount: number): MetadataTemplate | null {
  let next = 0;
  // Distinct, non-zero, exact as doubles, and unlike anything else in the metadata (offsets, sizes, the version).
  const sentinel = () => 0x5a17_0000_0000 + 0x0101 * ++next;
  const numRows = sentinel();
  const bodyLength = sentinel();
  const nodes = Array.from({ length: nodeCount }, () => new FieldNodeClass(sentinel(), sentinel()));
  const regions = Array.from({ length: regionCount }, () => new BufferRegion(sentinel(), sentinel()));
  const bytes = encodedRecordBatchMetadata(numRows, nodes, regions, bodyLength);
  const at = (value: number): number => {
    const lo = value % TWO_32;
    const hi = Math.floor(value / TWO_32);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let found = -1;
    for (let i = 0; i + 8 <= bytes.byteLength; i++) {
      if (view.getUint32(i, true) === lo && view.getUint32(i + 4, true) === hi) {
        if (found >= 0) return -2;
        found = i;
      }
    }
    return found;
  };
  const positions = [numRows, bodyLength, ...nodes.flatMap((n) => [Number(n.length), Number(n.nullCount)]), ...regions.flatMap((r) => [Number(r.offset), Number(r.length)])].map(at);
  if (positions.some((p) => p < 0)) return null;
  return {
    fill(rows, nodesNow, regionsNow, body) {
      const out = bytes.slice();
      const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
      const put = (k: number, value: number) => {
        view.setUint32(positions[k], value % TWO_32, true);
        view.setUint32(positions[k] + 4, Math.floor(value / TWO_32), true);
      };
      put(0, rows);
      put(1, body);
      let k = 2;
      for (const node of nodesNow) {
        put(k++, Number(node.length));
        put(k++, Number(node.nullCount));
      }
      for (const region of regionsNow) {
        put(k++, Number(region.offset));
        put(k++, Number(region.length));
      }
      return out;
    },
  };
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
  if (!decoded.isRecordBatch()) throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'notRecordBatch' });
  const header = decoded.header() as RecordBatchHeader;
  const body = message.subarray(8 + metadataLength);
  return {
    numRows: Number(header.length),
    nodes: header.nodes,
    buffers: header.buffers.map((region) => body.subarray(Number(region.offset), Number(region.offset) + Number(region.length))),
    variadicBufferCounts: header.variadicBufferCounts.map(Number),
  };
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
