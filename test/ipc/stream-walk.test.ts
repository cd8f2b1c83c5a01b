import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompressionType, RecordBatchStreamWriter, tableFromIPC, tableToIPC } from 'apache-arrow';
import { IpcStreamError, outlineIpcStream } from '../../src/ipc/stream-walk.js';
import { NEEDS_LZ4, ipcOf, lz4IpcOf, sampleTable } from '../support/arrow-streams.js';

const EOS = Buffer.from('ffffffff00000000', 'hex');

/** The IpcStreamError kind a walk throws, or undefined when it passes. */
function kindOf(run: () => unknown): IpcStreamError['kind'] | undefined {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof IpcStreamError, `an IpcStreamError, got ${String(error)}`);
    return error.kind;
  }
  return undefined;
}

test('outlines a complete stream: schema, batch count, declared rows, no codec', () => {
  const bytes = ipcOf(sampleTable(3, 4));
  assert.deepEqual(Buffer.from(bytes.subarray(-8)), EOS, 'arrow-js ends the stream with the EOS marker');
  const outline = outlineIpcStream(bytes);
  assert.deepEqual(
    outline.schema.fields.map((f) => f.name),
    ['_row_id', 'name', 'mag'],
  );
  assert.equal(outline.recordBatches, 3);
  assert.equal(outline.rows, 12);
  assert.deepEqual([...outline.codecs], []);
});

test('reports LZ4_FRAME for a compressed stream', NEEDS_LZ4, () => {
  const outline = outlineIpcStream(lz4IpcOf(sampleTable(2, 50)));
  assert.deepEqual([...outline.codecs], [CompressionType.LZ4_FRAME]);
  assert.equal(outline.rows, 100);
});

test('every proper prefix of a stream is truncated, whatever byte it ends on', NEEDS_LZ4, () => {
  for (const bytes of [ipcOf(sampleTable(3, 5)), lz4IpcOf(sampleTable(2, 40))]) {
    for (let length = 0; length < bytes.byteLength; length++) {
      assert.equal(kindOf(() => outlineIpcStream(bytes.subarray(0, length))), 'truncated', `cut at ${length}`);
    }
    assert.equal(kindOf(() => outlineIpcStream(bytes)), undefined, 'the whole stream passes');
  }
});

test('a prefix arrow-js reads without complaint is still refused', () => {
  const full = ipcOf(sampleTable(3, 5));
  const noEos = full.subarray(0, full.byteLength - 8);
  assert.equal(tableFromIPC(noEos).numRows, 15, 'arrow-js alone accepts a stream without EOS');
  assert.equal(kindOf(() => outlineIpcStream(noEos)), 'truncated');
});

test('accepts the legacy 4-byte end marker and the pre-0.15 framing', () => {
  const modern = ipcOf(sampleTable(2, 3));
  const legacyEnd = Buffer.concat([modern.subarray(0, modern.byteLength - 8), Buffer.alloc(4)]);
  assert.equal(outlineIpcStream(legacyEnd).rows, 6);

  const legacy = new RecordBatchStreamWriter({ writeLegacyIpcFormat: true }).writeAll(sampleTable(2, 3)).toUint8Array(true);
  assert.notEqual(Buffer.from(legacy.subarray(0, 4)).readInt32LE(0), -1, 'precondition: no continuation marker');
  assert.equal(outlineIpcStream(legacy).rows, 6);
  assert.equal(kindOf(() => outlineIpcStream(legacy.subarray(0, legacy.byteLength - 4))), 'truncated');
});

test('bytes after the end marker, garbage, a lone marker and the file format are malformed', () => {
  const stream = ipcOf(sampleTable(1, 3));
  const answers: Uint8Array[] = [
    Buffer.concat([stream, Buffer.from([1, 2, 3])]),
    Buffer.concat([stream, EOS]),
    Buffer.from('hello, this is not Arrow at all'),
    Buffer.from('{"body":[],"total_rows":0}'),
    Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 37 + 11) & 0xff)),
    EOS,
    Buffer.alloc(4),
    tableToIPC(sampleTable(1, 3), 'file'),
  ];
  for (const [i, bytes] of answers.entries()) {
    assert.notEqual(kindOf(() => outlineIpcStream(bytes)), undefined, `answer ${i}`);
  }
});

test('a second schema message where a batch belongs is malformed', () => {
  const stream = ipcOf(sampleTable(1, 3));
  // The schema message is the first one: continuation, length, metadata, no body.
  const schemaEnd = 8 + Buffer.from(stream).readInt32LE(4);
  const doubled = Buffer.concat([stream.subarray(0, schemaEnd), stream]);
  assert.equal(kindOf(() => outlineIpcStream(doubled)), 'malformed');
});
