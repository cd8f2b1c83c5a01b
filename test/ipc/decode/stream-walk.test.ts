import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompressionType, RecordBatchStreamWriter, tableFromIPC, tableToIPC } from 'apache-arrow';
import { IpcStreamError, outlineIpcStream, walkIpcStream } from '../../../src/ipc/decode/stream-walk.js';
import { NEEDS_LZ4, ipcOf, lz4IpcOf, sampleTable } from '../../support/arrow-streams.js';

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
      assert.equal(
        kindOf(() => outlineIpcStream(bytes.subarray(0, length))),
        'truncated',
        `cut at ${length}`,
      );
    }
    assert.equal(
      kindOf(() => outlineIpcStream(bytes)),
      undefined,
      'the whole stream passes',
    );
  }
});

test('a prefix arrow-js reads without complaint is still refused', () => {
  const full = ipcOf(sampleTable(3, 5));
  const noEos = full.subarray(0, full.byteLength - 8);
  assert.equal(tableFromIPC(noEos).numRows, 15, 'arrow-js alone accepts a stream without EOS');
  assert.equal(
    kindOf(() => outlineIpcStream(noEos)),
    'truncated',
  );
});

test('accepts the legacy 4-byte end marker and the pre-0.15 framing', () => {
  const modern = ipcOf(sampleTable(2, 3));
  const legacyEnd = Buffer.concat([modern.subarray(0, modern.byteLength - 8), Buffer.alloc(4)]);
  assert.equal(outlineIpcStream(legacyEnd).rows, 6);

  const legacy = new RecordBatchStreamWriter({ writeLegacyIpcFormat: true }).writeAll(sampleTable(2, 3)).toUint8Array(true);
  assert.notEqual(Buffer.from(legacy.subarray(0, 4)).readInt32LE(0), -1, 'precondition: no continuation marker');
  assert.equal(outlineIpcStream(legacy).rows, 6);
  assert.equal(
    kindOf(() => outlineIpcStream(legacy.subarray(0, legacy.byteLength - 4))),
    'truncated',
  );
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
    assert.notEqual(
      kindOf(() => outlineIpcStream(bytes)),
      undefined,
      `answer ${i}`,
    );
  }
});

test('a second schema message where a batch belongs is malformed', () => {
  const stream = ipcOf(sampleTable(1, 3));
  // The schema message is the first one: continuation, length, metadata, no body.
  const schemaEnd = 8 + Buffer.from(stream).readInt32LE(4);
  const doubled = Buffer.concat([stream.subarray(0, schemaEnd), stream]);
  assert.equal(
    kindOf(() => outlineIpcStream(doubled)),
    'malformed',
  );
});

/** Feeds `bytes` to walkIpcStream in pieces of `size`; resolves with the messages' byte lengths and the outline. */
async function walkInPieces(bytes: Uint8Array, size: number) {
  async function* pieces() {
    for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, Math.min(bytes.byteLength, at + size));
  }
  const walk = walkIpcStream(pieces());
  const lengths: number[] = [];
  for (;;) {
    const next = await walk.next();
    if (next.done === true) return { lengths, outline: next.value };
    lengths.push(next.value.bytes.byteLength);
  }
}

async function streamKindOf(run: Promise<unknown>): Promise<string | undefined> {
  try {
    await run;
  } catch (error) {
    return error instanceof IpcStreamError ? error.kind : 'other';
  }
  return undefined;
}

test('walkIpcStream: in pieces of any size, the messages and outline of outlineIpcStream', async () => {
  const bytes = ipcOf(sampleTable(3, 7));
  const whole = outlineIpcStream(bytes);
  for (const size of [1, 3, 8, 13, 100, bytes.byteLength]) {
    const { lengths, outline } = await walkInPieces(bytes, size);
    assert.equal(lengths.length, 4, `schema + 3 batches, pieces of ${size}`);
    assert.equal(lengths.reduce((a, b) => a + b, 0) + 8, bytes.byteLength, 'every byte but the end marker');
    assert.equal(outline.rows, whole.rows);
    assert.equal(outline.recordBatches, whole.recordBatches);
  }
});

test('walkIpcStream: cut anywhere is truncated, bytes after the end marker or garbage are malformed', async () => {
  const bytes = ipcOf(sampleTable(2, 5));
  for (let length = 0; length < bytes.byteLength; length += 7) {
    assert.equal(await streamKindOf(walkInPieces(bytes.subarray(0, length), 5)), 'truncated', `cut at ${length}`);
  }
  assert.equal(await streamKindOf(walkInPieces(bytes.subarray(0, bytes.byteLength - 8), 64)), 'truncated', 'no end marker');
  const trailing = new Uint8Array(bytes.byteLength + 8);
  trailing.set(bytes);
  assert.equal(await streamKindOf(walkInPieces(trailing, 64)), 'malformed');
  assert.equal(await streamKindOf(walkInPieces(new TextEncoder().encode('HTTP/1.1 500 oops, not Arrow at all'), 4)), 'malformed');
});
