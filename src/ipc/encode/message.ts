/**
 * Arrow IPC stream messages, written one at a time so a large body can be
 * streamed batch by batch and each batch encoded on its own (in a worker):
 * the framing every message shares, the schema message, and record batch
 * metadata for a body the caller writes itself.
 *
 * Stream layout (Arrow columnar format, "Encapsulated message format"):
 *
 *   message := 0xFFFFFFFF | int32 metadata length (padded to 8) | flatbuffer Message | padding | body
 *   stream  := schema message, record batch messages..., 0xFFFFFFFF 0x00000000 (end of stream)
 */
import type { Schema } from 'apache-arrow';
import { BodyCompression, BufferRegion, FieldNode as FieldNodeClass, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import type { FieldNode } from 'apache-arrow/ipc/metadata/message';
import type { IpcCodec } from '../../protocol/media-types.js';
import { COMPRESSION_TYPE_OF } from '../compression/codec-registry.js';

/** `n` rounded up to a multiple of 8 (every metadata and body buffer is 8-byte aligned). */
export function padTo8(n: number): number {
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

/** Schema messages already written, per Schema object (a cached body's schema opens every fetch of it). */
const schemaMessages = new WeakMap<Schema, Uint8Array>();

/**
 * The schema message that opens a stream. Kept per Schema object and shared:
 * callers write it out or copy it, never change it. (arrow-js's flatbuffers
 * Builder takes ~0.5 ms for ten fields, per fetch of a prepared body.)
 */
export function schemaMessage(schema: Schema): Uint8Array {
  let message = schemaMessages.get(schema);
  if (message === undefined) {
    message = framedMetadata(Message.from(schema));
    schemaMessages.set(schema, message);
  }
  return message;
}

/**
 * The framed metadata of a record batch message whose body (`bodyLength`
 * bytes, each buffer padded to 8) the caller writes itself, byte for byte
 * what arrow-js encodes for the same numbers: uncompressed, or with its body
 * buffers compressed in `codec`.
 *
 * For a batch with rows and a body, a template of the same shape (as many
 * nodes, buffers and variadic counts, the same codec) is patched instead of
 * encoded: the flatbuffer's layout does not depend on these numbers
 * (FieldNode and Buffer are structs, always written; only a zero length or
 * body length, a default, is left out), and arrow-js builds a flatbuffers
 * Builder, objects and a BigInt per number for every message: 100-300 µs
 * for a 10-column batch, which the small-requests profile showed per answer
 * and the think-time bench per prepared batch (bench/analysis.md).
 */
export function recordBatchMetadata(
  numRows: number,
  nodes: readonly FieldNode[],
  regions: readonly BufferRegion[],
  bodyLength: number,
  codec?: IpcCodec,
  variadicBufferCounts: readonly number[] = [],
): Uint8Array {
  if (numRows > 0 && bodyLength > 0) {
    const template = templateFor(nodes.length, regions.length, variadicBufferCounts.length, codec);
    if (template !== null) return template.fill(numRows, nodes, regions, bodyLength, variadicBufferCounts);
  }
  return encodedRecordBatchMetadata(numRows, nodes, regions, bodyLength, codec, variadicBufferCounts);
}

function encodedRecordBatchMetadata(
  numRows: number,
  nodes: readonly FieldNode[],
  regions: readonly BufferRegion[],
  bodyLength: number,
  codec: IpcCodec | undefined,
  variadicBufferCounts: readonly number[],
): Uint8Array {
  const compression = codec === undefined ? null : new BodyCompression(COMPRESSION_TYPE_OF[codec]);
  return framedMetadata(Message.from(new RecordBatchHeader(numRows, [...nodes], [...regions], compression, [...variadicBufferCounts]), bodyLength));
}

interface MetadataTemplate {
  fill(numRows: number, nodes: readonly FieldNode[], regions: readonly BufferRegion[], bodyLength: number, variadicBufferCounts: readonly number[]): Uint8Array;
}

const templates = new Map<string, MetadataTemplate | null>();
const MAX_TEMPLATES = 256;
const TWO_32 = 2 ** 32;

function templateFor(nodeCount: number, regionCount: number, variadicCount: number, codec: IpcCodec | undefined): MetadataTemplate | null {
  const key = `${nodeCount}:${regionCount}:${variadicCount}:${codec ?? ''}`;
  let template = templates.get(key);
  if (template === undefined) {
    template = makeTemplate(nodeCount, regionCount, variadicCount, codec);
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
function makeTemplate(nodeCount: number, regionCount: number, variadicCount: number, codec: IpcCodec | undefined): MetadataTemplate | null {
  let next = 0;
  // Distinct, non-zero, exact as doubles, and unlike anything else in the metadata (offsets, sizes, the version, the codec).
  const sentinel = () => 0x5a17_0000_0000 + 0x0101 * ++next;
  const numRows = sentinel();
  const bodyLength = sentinel();
  const nodes = Array.from({ length: nodeCount }, () => new FieldNodeClass(sentinel(), sentinel()));
  const regions = Array.from({ length: regionCount }, () => new BufferRegion(sentinel(), sentinel()));
  const variadic = Array.from({ length: variadicCount }, sentinel);
  const bytes = encodedRecordBatchMetadata(numRows, nodes, regions, bodyLength, codec, variadic);
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
  const positions = [
    numRows,
    bodyLength,
    ...nodes.flatMap((n) => [Number(n.length), Number(n.nullCount)]),
    ...regions.flatMap((r) => [Number(r.offset), Number(r.length)]),
    ...variadic,
  ].map(at);
  if (positions.some((p) => p < 0)) return null;
  return {
    fill(rows, nodesNow, regionsNow, body, variadicNow) {
      // From Node's buffer pool, written in place: a new ArrayBuffer and DataView per small answer
      // showed as allocations and collector work in the small-requests profile.
      const out = Buffer.allocUnsafe(bytes.byteLength);
      out.set(bytes);
      // An int64 in two's complement: arrow-js writes a -1 null count (not yet counted) as it is.
      const put = (k: number, value: number) => {
        const high = Math.floor(value / TWO_32);
        out.writeUInt32LE(value - high * TWO_32, positions[k]);
        out.writeInt32LE(high, positions[k] + 4);
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
      for (const count of variadicNow) put(k++, count);
      return new Uint8Array(out.buffer, out.byteOffset, out.byteLength); // a plain Uint8Array, as the encoded path returns
    },
  };
}

/** Total byte length of message parts. */
export function partsLength(parts: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  return n;
}

/** Copies parts into one ArrayBuffer (to transfer it from a worker). */
export function concatParts(parts: readonly Uint8Array[]): Uint8Array {
  return writeParts(parts, new Uint8Array(partsLength(parts)));
}

/** Copies parts one after the other into `target` (at least their length); returns `target`. */
export function writeParts(parts: readonly Uint8Array[], target: Uint8Array): Uint8Array {
  let at = 0;
  for (const part of parts) {
    target.set(part, at);
    at += part.byteLength;
  }
  return target;
}
