/**
 * recordBatchMetadata patches a template of the message's shape instead of
 * encoding through arrow-js: the bytes must be arrow-js's own for any numbers,
 * uncompressed and with either codec, with or without variadic counts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyCompression, BufferRegion, FieldNode, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { CompressionType } from 'apache-arrow';
import { recordBatchMetadata } from '../../../src/ipc/encode/message.js';
import { IpcCodec } from '../../../src/protocol/media-types.js';

const TYPE_OF = { [IpcCodec.lz4]: CompressionType.LZ4_FRAME, [IpcCodec.zstd]: CompressionType.ZSTD };

/** What arrow-js writes, framed by hand (written out here so the test does not lean on the code it checks). */
function encoded(
  numRows: number,
  nodes: FieldNode[],
  regions: BufferRegion[],
  bodyLength: number,
  codec: IpcCodec | undefined,
  variadic: number[],
): Uint8Array {
  const compression = codec === undefined ? null : new BodyCompression(TYPE_OF[codec]);
  const metadata = Message.encode(Message.from(new RecordBatchHeader(numRows, nodes, regions, compression, variadic), bodyLength));
  const aligned = (metadata.byteLength + 8 + 7) & ~7;
  const out = new Uint8Array(aligned);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, aligned - 8, true);
  out.set(metadata, 8);
  return out;
}

test('recordBatchMetadata writes what arrow-js encodes, for every shape, codec and number (-1, zeros and 2^40 included)', () => {
  let state = 7;
  const random = (max: number) => (state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff) % max;
  const pick = () => [-1, 0, 1, 7, 8, 255, 65_536, 2 ** 31 - 1, 2 ** 40 + 3][random(9)] + random(3);
  const codecs = [undefined, IpcCodec.lz4, IpcCodec.zstd];
  for (let round = 0; round < 600; round++) {
    const nodes = Array.from({ length: random(6) + (round === 0 ? 0 : 1) }, () => new FieldNode(pick(), pick()));
    const regions = Array.from({ length: random(12) }, () => new BufferRegion(pick(), pick()));
    const variadic = Array.from({ length: round % 5 === 0 ? random(3) : 0 }, pick);
    const numRows = round % 10 === 0 ? 0 : pick();
    const bodyLength = round % 7 === 0 ? 0 : pick();
    const codec = codecs[round % 3];
    assert.deepEqual(
      recordBatchMetadata(numRows, nodes, regions, bodyLength, codec, variadic),
      encoded(numRows, nodes, regions, bodyLength, codec, variadic),
      `round ${round} (${codec ?? 'uncompressed'})`,
    );
  }
});
