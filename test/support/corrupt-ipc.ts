/**
 * Test helpers: corrupt Arrow IPC streams, made by patching a valid one the
 * way a damaged file or a hostile peer would present it: a record batch
 * header that claims more rows than its buffers hold, a Utf8 offset past
 * the data, a buffer shorter than the header says.
 */
import { MetadataVersion, type Schema } from 'apache-arrow';
import { FileBlock, Footer } from 'apache-arrow/ipc/metadata/file';
import { BufferRegion, FieldNode, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { framedMetadata } from '../../src/ipc/encode/message.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';
import { batchHeader, walk } from './ipc-stream-walker.js';

/** What a patch may change in the first record batch: its header, and its body in place. */
export interface BatchPatch {
  /** Rows the header claims (default: unchanged). */
  length?: number;
  /** Lengths of every field node (default: unchanged). */
  nodeLength?: number;
  /** Byte length of buffer `index` as the header lists it. */
  bufferLength?: { index: number; length: number };
  /** Writes into the body; `regions` says where each buffer lies in it. */
  body?: (body: Uint8Array, regions: readonly BufferRegion[]) => void;
}

/** `stream` with its first record batch patched; every other message as it was. */
export function patchFirstBatch(stream: Uint8Array, patch: BatchPatch): Uint8Array {
  const messages = walk(stream);
  const parts: Uint8Array[] = [];
  let patched = false;
  for (const m of messages) {
    const end = m.bodyStart + m.message.bodyLength;
    const start = m.metadataStart - 8;
    if (patched || !m.message.isRecordBatch()) {
      parts.push(stream.subarray(start, end));
      continue;
    }
    patched = true;
    const header = batchHeader(m);
    const body = stream.slice(m.bodyStart, end);
    patch.body?.(body, header.buffers);
    const nodes = header.nodes.map((n) => new FieldNode(patch.nodeLength ?? n.length, n.nullCount));
    const regions = header.buffers.map((r, i) => new BufferRegion(r.offset, patch.bufferLength?.index === i ? patch.bufferLength.length : r.length));
    const rewritten = new RecordBatchHeader(patch.length ?? header.length, nodes, regions, null, header.variadicBufferCounts);
    parts.push(framedMetadata(Message.from(rewritten, body.byteLength)), body);
  }
  parts.push(END_OF_STREAM);
  return joined(parts);
}

/**
 * The Arrow IPC file of a stream without dictionaries: magic, the stream's
 * messages, a footer whose blocks point at its record batches, magic.
 */
export function fileOf(stream: Uint8Array): Uint8Array {
  const magic = new TextEncoder().encode('ARROW1');
  const messages = walk(stream);
  const head = 8;
  const blocks = messages
    .filter((m) => m.message.isRecordBatch())
    .map((m) => new FileBlock(m.bodyStart - (m.metadataStart - 8), m.message.bodyLength, head + m.metadataStart - 8));
  const footer = Footer.encode(new Footer(messages[0].message.header() as Schema, MetadataVersion.V5, blocks, []));
  const length = new Uint8Array(4);
  new DataView(length.buffer).setInt32(0, footer.byteLength, true);
  return joined([magic, new Uint8Array(2), stream, footer, length, magic]);
}

function joined(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** Sets int32 number `index` of buffer `buffer` of a patched body. */
export function setInt32(body: Uint8Array, regions: readonly BufferRegion[], buffer: number, index: number, value: number): void {
  new DataView(body.buffer, body.byteOffset + regions[buffer].offset).setInt32(index * 4, value, true);
}
