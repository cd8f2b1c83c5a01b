/**
 * recordBatchMetadata patches a template of the message's shape instead of
 * encoding through arrow-js: the bytes must be arrow-js's own for any numbers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BufferRegion, FieldNode, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { recordBatchMetadata } from '../../../src/ipc/encode/message.js';

function encoded(numRows: number, nodes: FieldNode[], regions: BufferRegion[], bodyLength: number): Uint8Array {
  const metadata = Message.encode(Message.from(new RecordBatchHeader(numRows, nodes, regions, null, []), bodyLength));
  const aligned = (metadata.byteLength + 8 + 7) & ~7;
  const out = new Uint8Array(aligned);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, aligned - 8, true);
  out.set(metadata, 8);
  return out;
}

test('recordBatchMetadata writes what arrow-js encodes, for every shape and number (zeros and 2^40 included)', () => {
  let state = 7;
  const random = (max: number) => (state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff) % max;
  const pick = () => [0, 1, 7, 8, 255, 65_536, 2 ** 31 - 1, 2 ** 40 + 3][random(8)] + random(3);
  for (let round = 0; round < 300; round++) {
    const nodes = Array.from({ length: random(6) + (round === 0 ? 0 : 1) }, () => new FieldNode(pick(), pick()));
    const regions = Array.from({ length: random(12) }, () => new BufferRegion(pick(), pick()));
    const numRows = round % 10 === 0 ? 0 : pick();
    const bodyLength = round % 7 === 0 ? 0 : pick();
    assert.deepEqual(recordBatchMetadata(numRows, nodes, regions, bodyLength), encoded(numRows, nodes, regions, bodyLength), `round ${round}`);
  }
});
