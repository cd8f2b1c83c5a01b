/**
 * Test helper: a minimal Arrow IPC stream walker, independent of arrow-js's
 * reader (it uses only arrow-js's flatbuffer metadata decoder), that asserts
 * the framing as it goes: continuation markers, 8-byte padding, body lengths,
 * and the end-of-stream marker as the last bytes.
 */
import assert from 'node:assert/strict';
import { Message, type RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';

/** One message of a walked stream. */
export interface WalkedMessage {
  bytes: Uint8Array;
  message: Message;
  /** Where the flatbuffer metadata starts, after the 8-byte prefix. */
  metadataStart: number;
  /** Where the message body starts. */
  bodyStart: number;
}

/** Walks an IPC stream message by message, asserting its framing; stops at (and requires) END_OF_STREAM. */
export function walk(bytes: Uint8Array): WalkedMessage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: WalkedMessage[] = [];
  let at = 0;
  for (;;) {
    assert.ok(at + 8 <= bytes.byteLength, 'the stream ends without END_OF_STREAM');
    assert.equal(view.getInt32(at, true), -1, `continuation marker at ${at}`);
    const metadataLength = view.getInt32(at + 4, true);
    if (metadataLength === 0) {
      assert.equal(at + 8, bytes.byteLength, 'nothing after END_OF_STREAM');
      return out;
    }
    assert.equal((8 + metadataLength) % 8, 0, 'metadata padded to 8 bytes');
    const metadataStart = at + 8;
    const message = Message.decode(bytes.subarray(metadataStart, metadataStart + metadataLength));
    const bodyStart = metadataStart + metadataLength;
    assert.equal(message.bodyLength % 8, 0, 'body length is a multiple of 8');
    out.push({ bytes, message, metadataStart, bodyStart });
    at = bodyStart + message.bodyLength;
  }
}

/** The record batch header of a walked message. */
export function batchHeader(m: WalkedMessage): RecordBatchHeader {
  assert.equal(m.message.isRecordBatch(), true, 'a record batch message');
  return m.message.header() as RecordBatchHeader;
}

/** The raw (unpadded) body buffers of an uncompressed record batch message. */
export function bodyBuffers(m: WalkedMessage): Uint8Array[] {
  return batchHeader(m).buffers.map((region) => m.bytes.subarray(m.bodyStart + region.offset, m.bodyStart + region.offset + region.length));
}
