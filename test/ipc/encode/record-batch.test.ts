import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Binary, BinaryView, Decimal, Int32, Table, Utf8, Utf8View, makeData, makeVector, tableFromIPC, vectorFromArray, type RecordBatch } from 'apache-arrow';
import { CompressionType } from 'apache-arrow/fb/compression-type';
import { batchMessageParts, compressedColumnsMessage, splitCompressedColumns } from '../../../src/ipc/compression/compressed-columns.js';
import { concatParts, partsLength, schemaMessage } from '../../../src/ipc/encode/message.js';
import { compressedBatchMessage, recordBatchMessage, type BufferCompression } from '../../../src/ipc/encode/record-batch.js';
import { END_OF_STREAM } from '../../../src/protocol/arrow-framing.js';
import { isS2SPError } from '../../../src/errors.js';
import { ipcCodec } from '../../../src/ipc/compression/codec-registry.js';
import { NEEDS_LZ4, NEEDS_ZSTD, registerArrowDecoder } from '../../support/arrow-streams.js';
import { takeRows } from '../../../src/table/take-rows.js';
import { tableFromRows } from '../../../src/table/table-from-rows.js';
import { rowsFromTable } from '../../../src/table/rows-from-table.js';
import { allTypes, exactCells } from '../../support/all-types-table.js';
import { batchHeader, bodyBuffers, walk } from '../../support/ipc-stream-walker.js';
import { pl, polarsSkip, type DataFrame } from '../../support/polars.js';

function compressor(codec: 'lz4' | 'zstd' = 'lz4'): BufferCompression {
  return { codec, compress: ipcCodec(codec).compress };
}

/** schema message + one record batch message per batch + end of stream, as one buffer. */
function streamOf(table: Table, batches: readonly RecordBatch[] = table.batches, compress?: BufferCompression): Uint8Array {
  const parts = [schemaMessage(table.schema)];
  for (const batch of batches) parts.push(...recordBatchMessage(batch, compress));
  parts.push(END_OF_STREAM);
  return concatParts(parts);
}

/** The read-back table equals `expected`: schema (names, types, nullability, metadata) and every cell. */
function assertSameTable(actual: Table, expected: Table, label: string): void {
  const describe = (t: Table) => t.schema.fields.map((f) => [f.name, String(f.type), f.nullable, [...f.metadata]]);
  assert.deepEqual(describe(actual), describe(expected), `${label}: schema`);
  assert.equal(actual.numRows, expected.numRows, `${label}: rows`);
  const all = (t: Table) => Array.from({ length: t.numRows }, (_, i) => i);
  assert.deepEqual(exactCells(actual, all(actual)), exactCells(expected, all(expected)), `${label}: cells`);
  assert.deepEqual(rowsFromTable(actual), rowsFromTable(expected), `${label}: rows`);
}

/** A table from JSON rows: Int32 `_row_id`, Int32, Int64 epoch ms, Float64, Utf8 with nulls, Bool, JSON text, Null. */
function jsonRowsTable(n: number): Table {
  return tableFromRows(
    Array.from({ length: n }, (_, i) => ({
      n: i,
      time: 1517966773840 + i * 1000,
      mag: i / 8,
      place: i % 4 === 0 ? null : `${i} km W of Ōkuma, 日本 "q"`,
      ok: i % 3 === 0,
      nested: i % 2 ? [i, { a: 'b' }] : { i, s: 'x\ny' },
      nothing: null,
    })),
  );
}

/** Tables that exercise the writer: flat JSON columns, every gatherable type with nulls, several batches, slices, gathers. */
function cases(): Array<[string, Table, RecordBatch[]?]> {
  const many = new Table([...allTypes(30, 0, 3).batches, ...allTypes(1, 30).batches, ...allTypes(50, 31, 2).batches]);
  const sliced = allTypes(100, 0, 4).slice(7, 93);
  const gathered = takeRows(many, Int32Array.of(80, 3, 3, 44, 0, 17, 30));
  return [
    ['JSON rows', jsonRowsTable(200)],
    ['every type, nulls', allTypes(64, 0, 3)],
    ['every type, no nulls', allTypes(64, 0)],
    ['three batches', many],
    ['sliced (offset 7)', sliced],
    ['sliced batches of several tables', new Table([...many.slice(5, 29).batches, ...many.slice(33, 70).batches])],
    ['gathered batch', new Table([gathered])],
    ['zero rows', allTypes(0)],
  ];
}

test('schema + record batches + END_OF_STREAM read back by arrow-js equal the input (uncompressed)', () => {
  for (const [label, table] of cases()) {
    const bytes = streamOf(table);
    const back = tableFromIPC(bytes);
    assertSameTable(back, table, label);
    assert.equal(back.batches.length, table.batches.length, `${label}: one batch per message`);
  }
});

for (const [codec, type, needs] of [
  ['lz4', CompressionType.LZ4_FRAME, NEEDS_LZ4],
  ['zstd', CompressionType.ZSTD, NEEDS_ZSTD],
] as const) {
  test(`schema + record batches + END_OF_STREAM read back by arrow-js equal the input (${CompressionType[type]})`, needs, () => {
    registerArrowDecoder(codec);
    for (const [label, table] of cases()) {
      const bytes = streamOf(table, table.batches, compressor(codec));
      const back = tableFromIPC(bytes);
      assertSameTable(back, table, `${label} (${codec})`);
      // Every record batch message declares the codec.
      for (const message of walk(bytes).filter((m) => m.message.isRecordBatch())) {
        assert.equal(batchHeader(message).compression?.type, type, label);
      }
    }
  });
}

test('a compressed batch message read back into its buffers and reassembled is the same bytes', { skip: NEEDS_LZ4.skip || NEEDS_ZSTD.skip }, () => {
  for (const codec of ['lz4', 'zstd'] as const) {
    for (const [label, table] of cases()) {
      for (const batch of table.batches) {
        const message = concatParts(recordBatchMessage(batch, compressor(codec)));
        const parts = batchMessageParts(message);
        assert.equal(parts.numRows, batch.numRows, label);
        const again = concatParts(compressedBatchMessage(parts.numRows, parts.nodes, parts.buffers, parts.variadicBufferCounts, codec));
        assert.deepEqual(again, message, `${label} (${codec})`);
      }
    }
  }
});

test(
  'columns split from a message make it again: the message itself for all of them in order, the same bytes assembled otherwise',
  { skip: NEEDS_LZ4.skip || NEEDS_ZSTD.skip },
  () => {
    for (const codec of ['lz4', 'zstd'] as const) {
      for (const [label, table] of cases()) {
        for (const batch of table.batches) {
          const message = concatParts(recordBatchMessage(batch, compressor(codec)));
          const vectors = batch.schema.fields.map((_, i) => batch.getChildAt(i)!);
          const columns = splitCompressedColumns(message, vectors);
          const whole = compressedColumnsMessage(batch.numRows, columns, codec);
          assert.equal(whole.length, 1, `${label}: one part`);
          assert.equal(whole[0], message, `${label}: the message itself, not a copy`);
          // Without their source the same columns are assembled: the same bytes.
          const unsourced = columns.map(({ nodes, buffers, variadicBufferCounts }) => ({ nodes, buffers, variadicBufferCounts }));
          assert.deepEqual(concatParts(compressedColumnsMessage(batch.numRows, unsourced, codec)), message, `${label} (${codec}): assembled`);
          // Another message after it: refused, since the columns would name it as their whole message.
          assert.throws(
            () => splitCompressedColumns(concatParts([message, message]), vectors),
            (error) => isS2SPError(error, 'S2SP_ERR_INTERNAL_INVARIANT'),
            label,
          );
          if (columns.length < 2) continue;
          // A subset, and the same columns reordered, are not that message.
          for (const picked of [columns.slice(1), [...columns].reverse()]) {
            const parts = compressedColumnsMessage(batch.numRows, picked, codec);
            assert.notEqual(parts[0], message, label);
            assert.equal(
              batchMessageParts(concatParts(parts)).buffers.length,
              picked.reduce((n, c) => n + c.buffers.length, 0),
              label,
            );
          }
        }
      }
    }
  },
);

test('a stream of the messages is an IPC stream: continuation markers, 8-byte alignment, body lengths, EOS last', NEEDS_LZ4, () => {
  for (const compress of [undefined, compressor()]) {
    for (const [label, table] of cases()) {
      const bytes = streamOf(table, table.batches, compress);
      const messages = walk(bytes); // asserts the framing as it goes
      assert.equal(messages[0].message.isSchema(), true, label);
      assert.equal(messages.length, 1 + table.batches.length, label);
      for (const m of messages.slice(1)) {
        assert.equal(m.message.isRecordBatch(), true);
        assert.equal(m.metadataStart % 8, 0, `${label}: metadata aligned`);
        assert.equal(m.bodyStart % 8, 0, `${label}: body aligned`);
        let end = 0;
        for (const region of batchHeader(m).buffers) {
          assert.equal(region.offset % 8, 0, `${label}: buffer offsets are 8-byte aligned`);
          assert.ok(region.offset >= end, `${label}: buffers do not overlap`);
          end = region.offset + region.length;
        }
        assert.ok(end <= m.message.bodyLength, `${label}: buffers inside the body`);
      }
    }
  }
});

test('without a compressor the body parts are views of the batch buffers (no copy)', () => {
  const table = jsonRowsTable(100);
  const batch = table.slice(10, 60).batches[0];
  const parts = recordBatchMessage(batch);
  const placeColumn = table.schema.fields.findIndex((f) => f.name === 'place');
  const placeBytes = table.batches[0].data.children[placeColumn].values as Uint8Array;
  assert.ok(
    parts.some((p) => p.buffer === placeBytes.buffer),
    'the Utf8 value bytes are written from the cached buffer itself',
  );
  assert.equal(partsLength(parts), concatParts(parts).byteLength);
  assert.equal(partsLength(parts) % 8, 0);
});

test('concatParts and partsLength', () => {
  const parts = [Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)];
  assert.equal(partsLength(parts), 3);
  assert.deepEqual(concatParts(parts), Uint8Array.of(1, 2, 3));
  assert.equal(partsLength([]), 0);
  assert.deepEqual(END_OF_STREAM, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0));
});

test('regression: arrow-js 21.1-21.2 wrote the compressed length in the LZ4 buffer prefix; ours holds the UNCOMPRESSED length', NEEDS_LZ4, () => {
  const codec = ipcCodec('lz4');
  const n = 4096;
  // Highly compressible buffers (a repeated string, a constant Int32 column),
  // and one that cannot compress (random bytes), which is still an LZ4 frame
  // (never stored raw with a -1 prefix: see the next test).
  const table = new Table({
    _row_id: vectorFromArray(
      Array.from({ length: n }, (_, i) => i),
      new Int32(),
    ),
    same: vectorFromArray(
      Array.from({ length: n }, () => 7),
      new Int32(),
    ),
    text: vectorFromArray(
      Array.from({ length: n }, () => 'station 1 station 1 station 1'),
      new Utf8(),
    ),
    noise: vectorFromArray(
      Array.from({ length: n }, (_, i) => (i === 0 ? new Uint8Array(randomBytes(2048)) : new Uint8Array(0))),
      new Binary(),
    ),
  });
  const batch = table.batches[0];
  const plainBuffers = bodyBuffers(walk(streamOf(table))[1]);
  const compressedMessage = walk(streamOf(table, [batch], compressor('lz4')))[1];
  const regions = batchHeader(compressedMessage).buffers;
  assert.equal(regions.length, plainBuffers.length);

  let compressedCount = 0;
  let bigWin = false;
  let noWin = false;
  regions.forEach((region, k) => {
    // arrow-js's own (uncompressed) regions may include the padding to 8 bytes.
    const plain = plainBuffers[k];
    if (region.length === 0) {
      assert.equal(plain.byteLength, 0, `buffer ${k}: only empty buffers may be written empty`);
      return;
    }
    const at = compressedMessage.bodyStart + region.offset;
    const view = new DataView(compressedMessage.bytes.buffer, compressedMessage.bytes.byteOffset + at, region.length);
    const prefix = view.getBigInt64(0, true);
    const payload = compressedMessage.bytes.subarray(at + 8, at + region.length);
    assert.notEqual(prefix, -1n, `buffer ${k}: framed, not stored raw`);
    const raw = new Uint8Array(codec.decompress(payload, Number.MAX_SAFE_INTEGER) as Uint8Array);
    assert.deepEqual(raw, plain.subarray(0, raw.byteLength), `buffer ${k}: the bytes of the uncompressed message`);
    assert.ok(plain.byteLength - raw.byteLength < 8 && plain.subarray(raw.byteLength).every((b) => b === 0), `buffer ${k}: all of them`);
    compressedCount++;
    if (payload.byteLength >= raw.byteLength) noWin = true;
    assert.equal(prefix, BigInt(raw.byteLength), `buffer ${k}: the prefix is the uncompressed length`);
    assert.notEqual(prefix, BigInt(payload.byteLength), `buffer ${k}: not the compressed length`);
    if (raw.byteLength >= 4096 && payload.byteLength * 4 < raw.byteLength) bigWin = true;
  });
  assert.ok(compressedCount >= 4, `${compressedCount} compressed buffers`);
  assert.ok(noWin, 'the random buffer did not shrink, and is framed all the same');
  assert.ok(bigWin, 'a highly compressible buffer shrank well (its two lengths differ a lot)');
});

test(
  'regression: an LZ4 body with a small Decimal128 column made polars panic (its raw-stored buffer read 8 bytes off 16-byte alignment)',
  NEEDS_LZ4,
  async (t) => {
    const polars = pl;
    if (polars === undefined) {
      t.skip(String(polarsSkip));
      return;
    }
    // One row: every buffer is too small to compress, which is what used to be stored raw.
    const words = Uint32Array.of(12345, 0, 0, 0, 7, 0, 0, 0);
    const decimal = makeData({ type: new Decimal(2, 38, 128), length: 2, nullCount: 0, data: words });
    const table = new Table({ name: vectorFromArray(['a', 'b'], new Utf8()), d: makeVector(decimal) });
    for (let start = 0; start < 2; start++) {
      const part = table.slice(start, start + 1);
      const bytes = streamOf(part, part.batches, { codec: 'lz4', compress: ipcCodec('lz4').compress });
      const frame: DataFrame = polars.readIPCStream(Buffer.from(bytes));
      assert.equal(frame.height, 1);
      assert.equal(String(frame.getColumn('d').cast(polars.Utf8).toArray()[0]), start === 0 ? '123.45' : '0.07');
    }
  },
);

test("regression: arrow-js 21.2 cut a sliced Utf8View or BinaryView column's views twice (an empty view buffer)", () => {
  const text = ['short', 'a string longer than twelve bytes', '', null, 'x'];
  const table = new Table({
    s: vectorFromArray(text, new Utf8View()),
    b: vectorFromArray(
      text.map((v) => (v === null ? null : new TextEncoder().encode(v))),
      new BinaryView(),
    ),
  });
  for (let start = 0; start < text.length; start++) {
    const part = table.slice(start, text.length);
    const back = tableFromIPC(streamOf(part, part.batches));
    assert.deepEqual(back.getChild('s')!.toArray(), text.slice(start), `from row ${start}`);
    assert.deepEqual(
      Array.from(back.getChild('b')!, (v: Uint8Array | null) => (v === null ? null : new TextDecoder().decode(v))),
      text.slice(start),
      `from row ${start}`,
    );
  }
});
