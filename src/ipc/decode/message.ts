/**
 * Reads back a record batch message this process wrote (encode/), to take
 * its compressed buffers apart; never a peer's message (those go through
 * checked-batch.ts).
 */
import { Message, type RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import type { FieldNode } from 'apache-arrow/ipc/metadata/message';
import { S2SPError } from '../../errors.js';

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
