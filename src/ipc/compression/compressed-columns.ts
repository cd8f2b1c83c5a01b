/**
 * A compressed record batch message taken apart by column, and put back
 * together for any projection: Arrow IPC compresses each body buffer on its
 * own, so the columns of a stored batch compressed once
 * (data/encoded-batch-cache.ts keeps them) make the message of every
 * projection of that batch without compressing again. Only messages this
 * process wrote are taken apart here; a peer's go through checked-batch.ts.
 */
import type { Vector } from 'apache-arrow';
import { Message, type FieldNode, type RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import type { IpcCodec } from '../../protocol/media-types.js';
import { S2SPError } from '../../errors.js';
import { compressedBatchMessage } from '../encode/record-batch.js';

/** One column of one stored record batch with its body buffers compressed. */
export interface CompressedColumn {
  /** The column's field nodes (itself, then its children depth first). */
  readonly nodes: readonly FieldNode[];
  /** Its body buffers in order, each `int64 length | frame` (or `-1 | raw`), unpadded. */
  readonly buffers: readonly Uint8Array[];
  readonly variadicBufferCounts: readonly number[];
  /** The message this column's buffers are views of, and its place there (set by {@link splitCompressedColumns}). */
  readonly source?: ColumnSource;
}

/** Where a column taken apart from a message came from. */
export interface ColumnSource {
  /** The whole record batch message. */
  readonly message: Uint8Array;
  /** The column's position among the message's columns. */
  readonly index: number;
  /** How many columns the message holds. */
  readonly count: number;
}

/**
 * The columns of compressed record batch `message`, one per entry of
 * `columns` (each column uncompressed, in the message's order),
 * as views of the message.
 * @throws S2SPError `S2SP_ERR_INTERNAL_INVARIANT` when the message does not hold exactly those columns, or more follows it
 */
export function splitCompressedColumns(message: Uint8Array, columns: readonly Vector[]): CompressedColumn[] {
  const { nodes, buffers, variadicBufferCounts, byteLength } = batchMessageParts(message);
  // Each column records `message` as its source, which compressedColumnsMessage may send whole: it
  // must be exactly this one message, nothing after it.
  if (byteLength !== message.byteLength) throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'columnSplit' });
  let node = 0;
  let buffer = 0;
  let variadic = 0;
  const out = columns.map((column, index): CompressedColumn => {
    // How many nodes, buffers and variadic counts this column has: assembling it uncompressed tells.
    const layout = VectorAssembler.assemble(column);
    return {
      nodes: nodes.slice(node, (node += layout.nodes.length)),
      buffers: buffers.slice(buffer, (buffer += layout.buffers.length)),
      variadicBufferCounts: variadicBufferCounts.slice(variadic, (variadic += layout.variadicBufferCounts.length)),
      source: { message, index, count: columns.length },
    };
  });
  if (node !== nodes.length || buffer !== buffers.length) throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'columnSplit' });
  return out;
}

/**
 * The record batch message of `rows` rows made of `columns` in order: views
 * of their buffers, nothing compressed or copied. When the columns are every
 * column of the one message they were taken from, in its order, that message
 * is already these bytes (the same writer made it) and is returned whole: a
 * full fetch of a prepared body then writes one part per batch instead of
 * two or three per buffer, and builds no header (bench/analysis.md, Think time).
 */
export function compressedColumnsMessage(rows: number, columns: readonly CompressedColumn[], codec: IpcCodec): Uint8Array[] {
  const whole = wholeMessageOf(columns);
  if (whole !== undefined) return [whole];
  return compressedBatchMessage(
    rows,
    columns.flatMap((c) => c.nodes),
    columns.flatMap((c) => c.buffers),
    columns.flatMap((c) => c.variadicBufferCounts),
    codec,
  );
}

/** The message `columns` are exactly the columns of, in order, or undefined. */
function wholeMessageOf(columns: readonly CompressedColumn[]): Uint8Array | undefined {
  const first = columns[0]?.source;
  if (first === undefined || first.count !== columns.length) return undefined;
  for (let i = 0; i < columns.length; i++) {
    const source = columns[i].source;
    if (source?.message !== first.message || source.index !== i) return undefined;
  }
  return first.message;
}

/** The parts of a record batch message we wrote: its field nodes and body buffers (views of `message`). */
export interface BatchMessageParts {
  readonly numRows: number;
  readonly nodes: FieldNode[];
  /** Each buffer's bytes as its region gives them (for a compressed message: prefix and frame, unpadded). */
  readonly buffers: Uint8Array[];
  readonly variadicBufferCounts: number[];
  /** Bytes the message takes: its framed metadata and its body (less than `message` holds when more follows it). */
  readonly byteLength: number;
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
    byteLength: 8 + metadataLength + Number(decoded.bodyLength),
  };
}
