/**
 * The interop proof: Arrow bodies from the data plane (plain, LZ4_FRAME, ZSTD)
 * read by an INDEPENDENT reader, polars (Rust arrow2/polars-arrow, through
 * nodejs-polars), must equal the JSON body of the same request, column by
 * column. arrow-js reading its own kind of output cannot catch a format
 * mistake both sides share (the arrow-js 21.1-21.2 LZ4 length prefix was one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EncodedBatchCache } from '../../src/data/encoded-batch-cache.js';
import { NEEDS_LZ4, NEEDS_ZSTD } from '../support/arrow-streams.js';
import { createEncoderPool } from '../../src/worker/encoder-pool.js';
import { batchHeader, walk } from '../support/ipc-stream-walker.js';
import { ARROW, ARROW_LZ4, ARROW_ZSTD, createSpyPool, mixedRows, ok, startPlane, type Plane } from '../support/data-plane-harness.js';

import { pl, polarsSkip, type DataFrame } from '../support/polars.js';
import { multiUseMemoryStore } from '../../src/testing.js';
const SKIP = { skip: polarsSkip || NEEDS_LZ4.skip || NEEDS_ZSTD.skip };

const N = 5000;
const ROWS = mixedRows(N);
const ALL_COLUMNS = ['_row_id', 'n', 'mag', 'time', 'place', 'tsunami', 'detail'];

/** The requests every configuration answers: all rows, a projection, scattered ids, a range. */
const REQUESTS: Array<[string, object]> = [
  ['all rows', {}],
  ['3-column projection', { columns: ['detail', 'time', 'place'] }],
  ['scattered row_ids', { row_ids: [4999, 3, 17, 17, 1000, 1001, 2500, 0, 4242, 999] }],
  ['a range across chunks', { row_ids: Array.from({ length: 1700 }, (_, i) => 650 + i) }],
  ['every third row', { row_ids: Array.from({ length: 1667 }, (_, i) => i * 3), columns: ['tsunami', 'mag', 'n'] }],
];

/** Expected polars dtypes of our columns (polars names: Utf8 is String). */
const DTYPES: Record<string, string> = {
  _row_id: 'Int32',
  n: 'Int32',
  mag: 'Float64',
  time: 'Int64',
  place: 'String',
  tsunami: 'Bool',
  detail: 'String',
};

function dtypeName(dtype: unknown): string {
  return String(dtype)
    .replace(/^DataType\((.*)\)$/, '$1')
    .replace(/^Utf8$/, 'String')
    .replace(/^Boolean$/, 'Bool');
}

/** Compares a polars frame with the JSON document of the same request, column by column. */
function assertFrameEqualsJson(df: DataFrame, doc: { body: Record<string, unknown>[]; columns_returned: string[] }, label: string): void {
  assert.deepEqual(df.columns, doc.columns_returned, `${label}: columns`);
  assert.equal(df.height, doc.body.length, `${label}: rows`);
  df.dtypes.forEach((dtype, c) => assert.equal(dtypeName(dtype), DTYPES[df.columns[c]], `${label}: dtype of ${df.columns[c]}`));
  for (const column of df.columns) {
    const fromJson = doc.body.map((row) => row[column]);
    let fromPolars = df.getColumn(column).toArray() as unknown[];
    // The JSON-text column: polars sees strings; parsed, they are the JSON values.
    if (column === 'detail') fromPolars = fromPolars.map((v) => (v === null ? null : JSON.parse(v as string)));
    assert.deepEqual(fromPolars, fromJson, `${label}: column ${column}`);
  }
}

async function checkPlane(plane: Plane, token: string, label: string): Promise<{ batchesSeen: number }> {
  let batchesSeen = 0;
  for (const [name, request] of REQUESTS) {
    const json = ok(await plane.post(token, request), `${label}, ${name}, JSON`);
    const doc = json.json();
    assert.ok(doc.body.length > 0);
    if (name === 'all rows') assert.deepEqual(doc.columns_returned, ALL_COLUMNS);
    // The JSON body is itself right: it is the rows the tool returned.
    for (const row of doc.body) {
      const source = ROWS[row._row_id];
      for (const column of doc.columns_returned) {
        if (column !== '_row_id') assert.deepEqual(row[column], source[column], `${label}, ${name}: JSON row ${row._row_id}.${column}`);
      }
    }
    for (const [kind, accept] of [
      ['Arrow', ARROW],
      ['Arrow+LZ4', ARROW_LZ4],
      ['Arrow+ZSTD', ARROW_ZSTD],
    ]) {
      const res = ok(await plane.post(token, request, { accept }), `${label}, ${name}, ${kind}`);
      assert.equal(res.headers['content-type'], accept);
      const df = pl!.readIPCStream(res.bytes);
      assertFrameEqualsJson(df, doc, `${label}, ${name}, ${kind}`);
      // polars concatenates batches on read, so count the record batch messages it was given.
      if (name === 'all rows') batchesSeen = Math.max(batchesSeen, walk(res.bytes).length - 1);
    }
  }
  return { batchesSeen };
}

for (const workers of [2, 0]) {
  test(`polars reads our Arrow bodies (plain, LZ4, ZSTD), equal to JSON, several record batches (workers: ${workers})`, SKIP, async (t) => {
    let pool: ReturnType<typeof createSpyPool> | undefined;
    if (workers > 0) {
      const real = createEncoderPool({ threads: workers });
      t.after(() => real.close());
      pool = createSpyPool(workers, { delegate: real });
    }
    // Not single use, so one token serves every request.
    const store = multiUseMemoryStore();
    const plane = await startPlane(t, { store, workers: pool ?? 0, chunkRows: 1000, inlineCellLimit: 0 });
    const token = await plane.mint(ROWS);
    const { batchesSeen } = await checkPlane(plane, token, `workers ${workers}`);
    assert.ok(batchesSeen >= N / 1000, `polars read ${batchesSeen} record batches for all rows`);
    if (pool) assert.ok(pool.calls > 0, 'chunks were encoded in worker threads');
  });
}

test('control: polars does not accept an LZ4 body whose prefixes hold the compressed length (the arrow-js 21.1-21.2 bug)', SKIP, async (t) => {
  // Proves the reader above checks what we claim it checks.
  const store = multiUseMemoryStore();
  const plane = await startPlane(t, { store, workers: 0, chunkRows: 1000 });
  const token = await plane.mint(ROWS);
  const good = ok(await plane.post(token, {}, { accept: ARROW_LZ4 })).bytes;
  assert.equal(pl!.readIPCStream(good).height, N);

  const bad = Buffer.from(good);
  let rewritten = 0;
  for (const m of walk(bad).slice(1)) {
    for (const region of batchHeader(m).buffers) {
      if (region.length === 0) continue;
      const view = new DataView(bad.buffer, bad.byteOffset + m.bodyStart + region.offset, 8);
      if (view.getBigInt64(0, true) === -1n) continue;
      view.setBigInt64(0, BigInt(region.length - 8), true);
      rewritten++;
    }
  }
  assert.ok(rewritten > 0);
  const outcome = (() => {
    try {
      return pl!.readIPCStream(bad).toRecords();
    } catch (error) {
      return error as Error;
    }
  })();
  if (outcome instanceof Error) {
    t.diagnostic(`polars: ${outcome.message.split('\n')[0]}`);
    return;
  }
  assert.notDeepEqual(outcome, pl!.readIPCStream(good).toRecords(), 'polars read the corrupted prefixes as if they were right');
});

test('polars reads edge bodies: an all-null (Null type) column, gathered rows of it, zero rows', SKIP, async (t) => {
  const store = multiUseMemoryStore();
  const plane = await startPlane(t, { store, workers: 0 });
  const rows = Array.from({ length: 10 }, (_, i) => ({ a: i, nothing: null, s: i % 2 ? 'x' : null }));
  const token = await plane.mint(rows);
  const empty = await plane.mint([]);
  const requests: Array<[string, object]> = [
    [token, {}],
    [token, { row_ids: [1, 5, 9] }],
    [token, { row_ids: [2, 3, 4], columns: ['nothing'] }],
    [empty, {}],
  ];
  for (const [tok, request] of requests) {
    const doc = ok(await plane.post(tok, request)).json();
    for (const accept of [ARROW, ARROW_LZ4, ARROW_ZSTD]) {
      const label = `${JSON.stringify(request)}, ${accept}`;
      const df = pl!.readIPCStream(ok(await plane.post(tok, request, { accept }), label).bytes);
      assert.deepEqual(df.columns, doc.columns_returned, label);
      assert.equal(df.height, doc.body.length, label);
      for (const column of df.columns) {
        assert.deepEqual(
          df.getColumn(column).toArray(),
          doc.body.map((row: Record<string, unknown>) => row[column]),
          `${label}: ${column}`,
        );
      }
    }
  }
});

test('polars reads compressed bodies assembled from cached buffers (LZ4 and ZSTD): the same frame as the uncompressed body', SKIP, async (t) => {
  // 70,000 rows: two stored batches (65,536 rows each at most), so full fetches and projections
  // are whole stored batches, served from the cache after the first response compressed them.
  const rows = Array.from({ length: 70_000 }, (_, i) => ({ n: i, mag: (i % 97) / 7, place: i % 5 ? `${i % 13} km W of Ōkuma` : null, ok: i % 3 === 0 }));
  const cache = new EncodedBatchCache();
  const store = multiUseMemoryStore();
  const pool = createEncoderPool({ threads: 2 });
  t.after(() => pool.close());
  const plane = await startPlane(t, { store, workers: pool, encodedCache: cache });
  const token = await plane.mint(rows);
  const source = pl!.readIPCStream(ok(await plane.post(token, {}, { accept: ARROW })).bytes);
  assert.equal(source.height, rows.length);
  for (const accept of [ARROW_LZ4, ARROW_ZSTD]) {
    let streamed: Buffer | undefined;
    for (const [label, request] of [
      ['projection first (compresses place)', { columns: ['place'] }],
      ['full fetch (place reused, the rest compressed)', {}],
      ['full fetch again (all from the cache)', {}],
      ['another projection (all from the cache)', { columns: ['ok', 'n'] }],
    ] as const) {
      const before = cache.stats().compressedColumns;
      const res = ok(await plane.post(token, request, { accept }), `${accept}, ${label}`);
      assert.equal(res.headers['content-type'], accept);
      const df = pl!.readIPCStream(res.bytes);
      const expected = 'columns' in request ? source.select('_row_id', ...request.columns) : source;
      assert.ok(df.frameEqual(expected), `${accept}, ${label}: polars reads the same frame`);
      if (label.includes('all from the cache')) assert.equal(cache.stats().compressedColumns, before, `${accept}, ${label}: nothing compressed again`);
      if (label.startsWith('full fetch again')) {
        // Every part was ready: one corked write with a Content-Length, the same bytes as the streamed response before it.
        assert.equal(res.headers['content-length'], String(res.bytes.byteLength));
        assert.ok(res.bytes.equals(streamed!), `${accept}: the same bytes as the streamed full fetch`);
      }
      if (label.startsWith('full fetch (')) streamed = res.bytes;
    }
  }
  // 2 stored batches x 5 columns x 2 codecs, each compressed exactly once.
  assert.equal(cache.stats().compressedColumns, 2 * 5 * 2);
});
