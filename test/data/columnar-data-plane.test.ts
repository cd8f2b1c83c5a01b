/**
 * The columnar data plane over real HTTP (127.0.0.1): format negotiation and
 * codec echo, a codec missing on the platform, HTTP content encoding for
 * JSON only, JSON/Arrow equality, identical bytes whatever the worker count,
 * worker failures before and after the first byte, backpressure, and the
 * compressed buffers kept per body (shared by transfers, even one that hangs up).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { DataType, tableFromIPC } from 'apache-arrow';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';
import { registerIpcCodec } from '../../src/ipc/compression/codec-registry.js';
import { NEEDS_LZ4, NEEDS_ZSTD, registerArrowDecoder } from '../support/arrow-streams.js';
import { EncodedBatchCache } from '../../src/data/encoded-batch-cache.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { createEncoderPool, type EncoderPool } from '../../src/worker/encoder-pool.js';
import { walk } from '../support/ipc-stream-walker.js';
import { untilSlot } from '../support/slot-wait.js';
import {
  ARROW,
  ARROW_LZ4,
  ARROW_ZSTD,
  assertErrorDocument,
  createSpyPool,
  mixedRows,
  ok,
  startPlane,
  waitUntilIdle,
  type Plane,
  type RawResponse,
} from '../support/data-plane-harness.js';
import { encoderPoolRunning, multiUseMemoryStore } from '../../src/testing.js';

const NEEDS_BOTH = { skip: NEEDS_LZ4.skip || NEEDS_ZSTD.skip };
const GATED_WORKER_FILE = fileURLToPath(new URL('../support/gated-worker.js', import.meta.url));
const ACCEPT_UNSUPPORTED = 'S2SP_ERR_ACCEPT_UNSUPPORTED';

const ROWS = mixedRows(3000);
const COLUMNS = ['_row_id', 'n', 'mag', 'time', 'place', 'tsunami', 'detail'];
const SCATTERED = { row_ids: [2999, 5, 7, 8, 100, 1001, 1003, 2048, 0, 7] };
const RANGE = { row_ids: Array.from({ length: 1500 }, (_, i) => 700 + i) };

/** What the JSON body must hold for `ids` and `columns`: the tool's rows plus `_row_id`, missing keys null. */
function expectedBody(ids: readonly number[], columns = COLUMNS): Record<string, unknown>[] {
  return [...new Set(ids)].sort((a, b) => a - b).map((id) => Object.fromEntries(columns.map((c) => [c, c === '_row_id' ? id : (ROWS[id][c] ?? null)])));
}

/** An Arrow body read back with arrow-js, as rows (JSON-text columns parsed). */
function arrowRows(res: RawResponse): Record<string, unknown>[] {
  return rowsFromTable(tableFromIPC(res.bytes));
}

/** A plane whose store keeps tokens after a transfer, so one token serves many requests. */
async function reusablePlane(t: TestContext, options: Parameters<typeof startPlane>[1] = {}): Promise<{ plane: Plane; token: string }> {
  const plane = await startPlane(t, { store: multiUseMemoryStore(), ...options });
  return { plane, token: await plane.mint(ROWS) };
}

/** An IPC reader gives back `Int_` instances, not `Int32`: check the type's fields. */
function isInt32(type: DataType): boolean {
  return DataType.isInt(type) && type.bitWidth === 32 && type.isSigned;
}

// ---- negotiation ----

test('content types: JSON by default, Arrow when asked, the codec echoed (the first one the client lists that we have)', NEEDS_BOTH, async (t) => {
  registerArrowDecoder('lz4');
  registerArrowDecoder('zstd');
  const { plane, token } = await reusablePlane(t, { workers: 0 });
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'application/json; charset=utf-8'],
    ['*/*', 'application/json; charset=utf-8'],
    ['application/json', 'application/json; charset=utf-8'],
    [ARROW, ARROW],
    [`${ARROW}, application/json;q=0.5`, ARROW],
    [ARROW_LZ4, ARROW_LZ4],
    [`${ARROW}; codecs=lz4`, ARROW_LZ4],
    [`${ARROW}; codecs="lz4_frame"`, ARROW_LZ4],
    [ARROW_ZSTD, ARROW_ZSTD],
    [`${ARROW}; codecs="zstd, lz4"`, ARROW_ZSTD],
    [`${ARROW}; codecs="lz4, zstd"`, ARROW_LZ4],
    [`${ARROW}; codecs="brotli, zstd"`, ARROW_ZSTD],
    [`${ARROW_LZ4}, ${ARROW};q=0.9, application/json;q=0.5`, ARROW_LZ4],
  ];
  for (const [accept, contentType] of cases) {
    const res = ok(await plane.post(token, SCATTERED, accept === undefined ? {} : { accept }), String(accept));
    assert.equal(res.headers['content-type'], contentType, String(accept));
    assert.equal(res.headers['content-encoding'], undefined);
    const rows = contentType.startsWith('application/json') ? res.json().body : arrowRows(res);
    assert.deepEqual(rows, expectedBody(SCATTERED.row_ids), String(accept));
  }
});

test('406 for an unsupported codec or media type, with its code; the token is kept', async (t) => {
  const plane = await startPlane(t, { workers: 0 });
  const token = await plane.mint(ROWS);
  for (const accept of [
    `${ARROW}; codecs="brotli"`,
    `${ARROW}; codecs="snappy", application/json;q=0`,
    'text/csv',
    'application/vnd.apache.arrow.file',
    'application/x-parquet, text/html;q=0.9',
    'application/json;q=0',
  ]) {
    const message = assertErrorDocument(await plane.post(token, {}, { accept }), 406, ACCEPT_UNSUPPORTED);
    assert.match(message, /application\/vnd\.apache\.arrow\.stream/, 'the message lists what is supported');
    assert.equal(await plane.store.has(token), true, `${accept} consumed the token`);
  }
  assert.deepEqual(ok(await plane.post(token, {})).json().body, expectedBody(ROWS.map((_, i) => i)));
});

test('LZ4 asked on a platform without lz4-napi: 406 naming LZ4; JSON and plain Arrow still work', async (t) => {
  const previous = registerIpcCodec('lz4', () => {
    throw new Error('simulated: no prebuilt binary');
  });
  t.after(() => registerIpcCodec('lz4', previous));
  const plane = await startPlane(t, { workers: 0 });
  const token = await plane.mint(ROWS);

  const message = assertErrorDocument(await plane.post(token, SCATTERED, { accept: ARROW_LZ4 }), 406, ACCEPT_UNSUPPORTED);
  assert.match(message, /lz4/);
  assert.doesNotMatch(message, /codecs="lz4"/, 'LZ4 is not offered as supported');
  assert.equal(await plane.store.has(token), true);

  // A client that also accepts something else gets it.
  const fallback = ok(await plane.post(token, SCATTERED, { accept: `${ARROW_LZ4}, application/json;q=0.5` }));
  assert.match(String(fallback.headers['content-type']), /^application\/json/);
  assert.deepEqual(fallback.json().body, expectedBody(SCATTERED.row_ids));

  const second = await plane.mint(ROWS);
  const plain = ok(await plane.post(second, SCATTERED, { accept: `${ARROW_LZ4}, ${ARROW};q=0.8` }));
  assert.equal(plain.headers['content-type'], ARROW);
  assert.deepEqual(arrowRows(plain), expectedBody(SCATTERED.row_ids));

  const third = await plane.mint(ROWS);
  assert.deepEqual(ok(await plane.post(third, RANGE)).json().body, expectedBody(RANGE.row_ids));
});

// ---- HTTP content encoding ----

test('JSON gets gzip or br Content-Encoding when asked; the decoded bytes equal the identity response', async (t) => {
  // Small chunks and every chunk in the (fake) pool, so the compressor sees a many-part stream.
  const pool = createSpyPool(2);
  const { plane, token } = await reusablePlane(t, { workers: pool, chunkRows: 500, inlineCellLimit: 0 });
  for (const request of [{}, SCATTERED, RANGE]) {
    const identity = ok(await plane.post(token, request));
    assert.equal(identity.headers['content-encoding'], undefined);
    for (const [acceptEncoding, encoding] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip;q=0.5, br', 'br'],
      ['deflate, gzip', 'gzip'],
      ['*', 'gzip'],
    ]) {
      const res = ok(await plane.post(token, request, { 'accept-encoding': acceptEncoding }), acceptEncoding);
      assert.equal(res.headers['content-encoding'], encoding, acceptEncoding);
      assert.match(String(res.headers.vary), /Accept-Encoding/i);
      const decoded = encoding === 'gzip' ? gunzipSync(res.bytes) : brotliDecompressSync(res.bytes);
      assert.ok(res.bytes.byteLength < identity.bytes.byteLength, `${acceptEncoding}: compressed`);
      assert.ok(decoded.equals(identity.bytes), `${acceptEncoding}: decoded bytes differ from the identity response`);
    }
    for (const none of ['identity', 'deflate', 'gzip;q=0, br;q=0']) {
      const res = ok(await plane.post(token, request, { 'accept-encoding': none }));
      assert.equal(res.headers['content-encoding'], undefined, none);
      assert.ok(res.bytes.equals(identity.bytes));
    }
  }
  assert.ok(pool.calls > 0);
});

test('Arrow never gets Content-Encoding, even when asked', NEEDS_LZ4, async (t) => {
  const { plane, token } = await reusablePlane(t, { workers: 0, chunkRows: 500 });
  for (const accept of [ARROW, ARROW_LZ4]) {
    const plain = ok(await plane.post(token, {}, { accept }));
    for (const acceptEncoding of ['gzip', 'br', 'gzip, br, *']) {
      const res = ok(await plane.post(token, {}, { accept, 'accept-encoding': acceptEncoding }));
      assert.equal(res.headers['content-encoding'], undefined, `${accept} with ${acceptEncoding}`);
      assert.equal(res.headers['content-type'], accept);
      assert.ok(res.bytes.equals(plain.bytes));
    }
  }
});

// ---- JSON and Arrow agree ----

test('JSON and Arrow (plain, LZ4 and ZSTD) hold the same rows, for scattered ids (gather) and for a range', NEEDS_BOTH, async (t) => {
  registerArrowDecoder('lz4');
  registerArrowDecoder('zstd');
  for (const workers of [0, 2]) {
    await t.test(`workers ${workers}`, async (t) => {
      const pool = workers > 0 ? createSpyPool(workers) : 0;
      const { plane, token } = await reusablePlane(t, { workers: pool, chunkRows: 1000, inlineCellLimit: workers > 0 ? 0 : undefined });
      const requests: Array<[string, { row_ids?: number[]; columns?: string[] }]> = [
        ['scattered', SCATTERED],
        ['range', RANGE],
        ['scattered, projected', { ...SCATTERED, columns: ['detail', 'time'] }],
        ['range, projected', { ...RANGE, columns: ['tsunami'] }],
        ['every row', {}],
      ];
      for (const [label, request] of requests) {
        const columns = request.columns ? ['_row_id', ...request.columns] : COLUMNS;
        const ids = request.row_ids ?? ROWS.map((_, i) => i);
        const json = ok(await plane.post(token, request)).json();
        assert.deepEqual(json.columns_returned, columns);
        assert.deepEqual(json.body, expectedBody(ids, columns), `${label}: JSON`);
        for (const accept of [ARROW, ARROW_LZ4, ARROW_ZSTD]) {
          const res = ok(await plane.post(token, request, { accept }));
          const table = tableFromIPC(res.bytes);
          assert.deepEqual(
            table.schema.fields.map((f) => f.name),
            columns,
            `${label}: ${accept} columns`,
          );
          assert.ok(isInt32(table.schema.fields[0].type), '_row_id is Int32');
          assert.equal(table.schema.fields[0].nullable, false);
          assert.deepEqual(rowsFromTable(table), json.body, `${label}: ${accept} equals JSON`);
          assert.ok(res.bytes.subarray(-8).equals(END_OF_STREAM), 'ends with the end-of-stream marker');
        }
      }
      if (pool) assert.ok(pool.calls > 0);
    });
  }
});

test('_row_id (Int32, not null) is the first Arrow field, also when columns leave it out or name it last', async (t) => {
  const { plane, token } = await reusablePlane(t, { workers: 0 });
  for (const columns of [undefined, ['place'], ['detail', 'n', '_row_id']]) {
    const res = ok(await plane.post(token, { row_ids: [3, 1], columns }, { accept: ARROW }));
    const table = tableFromIPC(res.bytes);
    const first = table.schema.fields[0];
    assert.equal(first.name, '_row_id');
    assert.ok(isInt32(first.type), String(first.type));
    assert.deepEqual(table.getChildAt(0)!.toArray(), Int32Array.of(1, 3));
    assert.equal(table.schema.fields.filter((f) => f.name === '_row_id').length, 1);
  }
});

// ---- workers ----

test('workers 0, 1 and 2 give identical bytes (JSON, plain Arrow, LZ4 and ZSTD Arrow)', NEEDS_BOTH, async (t) => {
  const real = createEncoderPool({ threads: 2 });
  t.after(() => real.close());
  const spy = createSpyPool(2, { delegate: real });
  const configs: Array<[string, number | EncoderPool]> = [
    ['main thread', 0],
    ['own pool of 1', 1],
    ['own pool of 2', 2],
    ['shared pool of 2', spy],
  ];
  const planes = [];
  for (const [label, workers] of configs) {
    // inlineCellLimit 0: every chunk that needs encoding goes to the pool.
    planes.push({ label, ...(await reusablePlane(t, { workers, chunkRows: 700, inlineCellLimit: 0 })) });
  }
  const requests = [{}, SCATTERED, RANGE, { ...RANGE, columns: ['detail', 'place'] }, { row_ids: ROWS.map((_, i) => i).filter((i) => i % 3 !== 1) }];
  for (const request of requests) {
    for (const accept of ['application/json', ARROW, ARROW_LZ4, ARROW_ZSTD]) {
      const bodies = [];
      for (const { plane, token, label } of planes) bodies.push({ label, bytes: ok(await plane.post(token, request, { accept }), label).bytes });
      for (const { label, bytes } of bodies.slice(1)) {
        assert.ok(bytes.equals(bodies[0].bytes), `${accept}, ${JSON.stringify(request).slice(0, 40)}: ${label} differs from the main thread`);
      }
    }
  }
  assert.ok(spy.calls > 0, 'the shared pool encoded chunks');
});

test('a worker failure on the FIRST chunk: 500 S2SP_ERR_INTERNAL, and the token is kept', async (t) => {
  // Compressed Arrow is encoded in workers too (native-notes.md, "lz4-napi").
  for (const accept of NEEDS_LZ4.skip ? ['application/json'] : ['application/json', ARROW_LZ4]) {
    const pool = createSpyPool(2, { failOnCall: 1 });
    const plane = await startPlane(t, { workers: pool, chunkRows: 500, inlineCellLimit: 0 });
    const token = await plane.mint(ROWS);
    const res = await plane.post(token, {}, { accept });
    const message = assertErrorDocument(res, 500, 'S2SP_ERR_INTERNAL');
    assert.doesNotMatch(message, /simulated|worker/i, 'the message names no internals');
    assert.equal(pool.calls >= 1, true);
    await waitUntilIdle(plane.store, token);
    assert.equal(await plane.store.has(token), true, 'the failed transfer consumed the token');

    pool.failOnCall = undefined;
    const retry = ok(await plane.post(token, {}, { accept }), accept);
    if (accept === ARROW_LZ4) registerArrowDecoder('lz4');
    const rows = accept === ARROW_LZ4 ? arrowRows(retry) : retry.json().body;
    assert.deepEqual(rows, expectedBody(ROWS.map((_, i) => i)));
  }
});

test('a worker failure on the THIRD chunk cuts the transfer; the token stays valid and a later fetch gets everything', async (t) => {
  const cases: Array<[string, Record<string, string>]> = [
    ['JSON', {}],
    ['JSON + gzip', { 'accept-encoding': 'gzip' }],
  ];
  cases.push(['Arrow, scattered', { accept: ARROW }]);
  const everyOther = { row_ids: ROWS.map((_, i) => i).filter((i) => i % 2 === 0) };
  for (const [label, headers] of cases) {
    await t.test(label, async (t) => {
      // The third chunk fails once the client holds the status line and the first bytes.
      let clientSawBytes: () => void = () => {};
      const sawBytes = new Promise<void>((resolve) => (clientSawBytes = resolve));
      const pool = createSpyPool(2, { failOnCall: 3, failAfter: () => sawBytes });
      // 3000 rows in chunks of 300: ten chunks, each in the pool (inlineCellLimit 0).
      const plane = await startPlane(t, { workers: pool, chunkRows: 300, inlineCellLimit: 0 });
      const token = await plane.mint(ROWS);
      const request: { row_ids?: number[] } = label.includes('scattered') ? everyOther : {};

      const cut = await plane.post(token, request, headers, clientSawBytes);
      assert.equal(cut.status, 200, 'the status line went out before the failure');
      assert.equal(cut.complete, false, 'the client sees a cut transfer, not a complete response');
      assert.ok(cut.bytes.byteLength > 0, 'the first bytes arrived');
      assert.ok(pool.calls >= 3);
      if (label.startsWith('JSON')) {
        let text = cut.bytes.toString('utf8');
        if (headers['accept-encoding'] === 'gzip') {
          assert.throws(() => gunzipSync(cut.bytes), 'a cut gzip stream does not decode to its end');
          text = '';
        }
        assert.ok(!text.includes('"total_rows"'), 'the JSON tail was never sent');
        assert.throws(() => JSON.parse(text));
      } else {
        assert.ok(!cut.bytes.subarray(-8).equals(END_OF_STREAM), 'no end-of-stream marker');
        assert.throws(() => walk(cut.bytes), /END_OF_STREAM|continuation/);
      }

      await waitUntilIdle(plane.store, token);
      assert.equal(await plane.store.has(token), true, 'the cut transfer consumed the token');

      pool.failOnCall = undefined;
      const full = ok(await plane.post(token, request, headers), label);
      const ids = request.row_ids ?? ROWS.map((_, i) => i);
      let rows: unknown[];
      if (headers.accept !== undefined) {
        rows = arrowRows(full);
      } else {
        const bytes = headers['accept-encoding'] === 'gzip' ? gunzipSync(full.bytes) : full.bytes;
        rows = JSON.parse(bytes.toString('utf8')).body;
      }
      assert.deepEqual(rows, expectedBody(ids));
    });
  }
});

test('regression: a worker failure before brotli wrote a byte is a plain 500 (no Content-Encoding) that keeps the token', async (t) => {
  // brotli holds small input back, so the failure of chunk 2 comes after the
  // handler returned but before the status line: fastify then sends our error
  // document instead. It used to keep `content-encoding: br` on that plain
  // JSON (clients fail to decode it), and to commit the lease on its 'finish'
  // (a 500 consumed the token).
  const pool = createSpyPool(2, { failOnCall: 2 });
  const plane = await startPlane(t, { workers: pool, chunkRows: 10, inlineCellLimit: 0 });
  const token = await plane.mint(ROWS);
  const res = await plane.post(token, {}, { 'accept-encoding': 'br' });
  assert.equal(res.headers['content-encoding'], undefined, 'an uncompressed error document must not claim br');
  assertErrorDocument(res, 500, 'S2SP_ERR_INTERNAL');
  await waitUntilIdle(plane.store, token);
  assert.equal(await plane.store.has(token), true, 'the 500 consumed the token');

  pool.failOnCall = undefined;
  const full = ok(await plane.post(token, {}, { 'accept-encoding': 'br' }));
  assert.equal(full.headers['content-encoding'], 'br');
  assert.deepEqual(JSON.parse(brotliDecompressSync(full.bytes).toString('utf8')).body, expectedBody(ROWS.map((_, i) => i)));
});

// ---- backpressure ----

test('backpressure: a client that reads nothing does not make the server encode (or buffer) the body ahead', async (t) => {
  const n = 300_000;
  const rows = Array.from({ length: n }, (_, i) => ({ time: 1517966773840 + i, mag: (i % 90) / 10, place: `${i} km NNE of Somewhere, CA` }));
  const threads = 2;
  const chunkRows = 1000;
  const totalChunks = n / chunkRows;

  // Chunks the pool produced that the server has handed to the response (res.write).
  let writtenChunks = 0;
  let maxAhead = 0;
  // The client reads nothing until the server stalled: a write to the response
  // returned false (the socket is full) and the encoder went still (every run
  // it started has settled, and none started since, a turn of the loop later).
  // A server that ignored backpressure stalls only once it encoded the whole body.
  let socketFull = false;
  let onStall: () => void = () => {};
  const stalled = new Promise<void>((resolve) => (onStall = resolve));
  const checkStall = () =>
    setImmediate(() => {
      if ((socketFull || pool.calls === totalChunks) && pool.settled === pool.calls) onStall();
    });
  const pool = createSpyPool(threads, {
    // At every new encode: how far is the encoder ahead of what the response accepted?
    onRun: (call) => (maxAhead = Math.max(maxAhead, call - writtenChunks)),
    onSettle: checkStall,
  });
  const plane = await startPlane(t, {
    workers: pool,
    chunkRows,
    inlineCellLimit: 0,
    beforeRegister: (app) => {
      app.addHook('onRequest', async (_request, reply) => {
        const res = reply.raw;
        const write = res.write;
        res.write = function (this: http.ServerResponse, chunk: unknown, ...rest: unknown[]) {
          if (chunk instanceof Uint8Array && pool.results.has(chunk)) writtenChunks++;
          const accepted = (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
          if (!accepted && !socketFull) {
            socketFull = true;
            checkStall();
          }
          return accepted;
        } as typeof res.write;
      });
    },
  });
  const token = await plane.mint(rows);

  const observed = await new Promise<{ callsWhilePaused: number; writtenWhilePaused: number; bytes: Buffer; complete: boolean }>((resolve, reject) => {
    const req = http.request(`${plane.base}/s2sp/data/${token}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.pause(); // read nothing at all until the server stalled
      void stalled.then(() => {
        const callsWhilePaused = pool.calls;
        const writtenWhilePaused = writtenChunks;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ callsWhilePaused, writtenWhilePaused, bytes: Buffer.concat(chunks), complete: res.complete }));
        res.on('error', reject);
        res.resume();
      });
    });
    req.on('error', reject);
    req.end('{}');
  });

  t.diagnostic(
    `paused until the server stalled: ${observed.callsWhilePaused} of ${totalChunks} chunks encoded, ${observed.writtenWhilePaused} handed to the socket; max ahead ${maxAhead}`,
  );
  // The pause was real: the body was far from sent when the client resumed
  // (the kernel's socket buffers took a few MB of the 27 MB at most).
  assert.ok(observed.callsWhilePaused < totalChunks, `all ${totalChunks} chunks were encoded while the client read nothing`);
  // The bound that holds whatever the kernel's socket buffers absorb: at every
  // new encode, the encoder was at most the pool's window, the stream's
  // one-part buffer and the part in hand ahead of what the response accepted.
  // (Counted, not timed: this cannot flake.)
  assert.ok(maxAhead <= threads + 3, `the encoder ran ${maxAhead} chunks ahead of the socket`);
  assert.ok(observed.callsWhilePaused - observed.writtenWhilePaused <= threads + 3);
  assert.ok(maxAhead >= threads, 'the pool window was used');

  assert.equal(observed.complete, true);
  assert.equal(pool.calls, totalChunks);
  assert.equal(writtenChunks, totalChunks);
  const doc = JSON.parse(observed.bytes.toString('utf8'));
  assert.equal(doc.total_rows, n);
  assert.equal(doc.body.length, n);
  assert.deepEqual(doc.body[n - 1], { _row_id: n - 1, ...rows[n - 1] });
});

// ---- kept compressed buffers ----

test('compressed buffers are kept while the token lives (a retry reuses them) and dropped once its one transfer is committed', NEEDS_LZ4, async (t) => {
  const cache = new EncodedBatchCache();
  let consumed!: () => void;
  const gone = new Promise<void>((resolve) => (consumed = resolve));
  const store = new MemoryStore();
  store.observe((event) => event.type === 'consumed' && consumed());
  const plane = await startPlane(t, { store, workers: 0, encodedCache: cache });
  const token = await plane.mint(ROWS);
  // A 406 does not consume; a projection compresses its columns and is committed.
  assert.equal((await plane.post(token, {}, { accept: `${ARROW}; codecs="brotli"` })).status, 406);
  registerArrowDecoder('lz4');
  const res = ok(await plane.post(token, { columns: ['place'] }, { accept: ARROW_LZ4 }));
  assert.deepEqual(
    arrowRows(res),
    expectedBody(
      ROWS.map((_, i) => i),
      ['_row_id', 'place'],
    ),
  );
  await gone;
  // The drop follows the commit by a store round trip: wait turns of the loop, bounded.
  for (let i = 0; i < 100 && cache.stats().bodies > 0; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([cache.stats().bodies, cache.stats().bytes], [0, 0]);
  assert.equal(cache.stats().compressedColumns, 2, '_row_id and place were compressed once');
});

test('compressed buffers outlive a consumed token while another token shares the body, and go with the body', NEEDS_LZ4, async (t) => {
  const cache = new EncodedBatchCache();
  const store = new MemoryStore();
  const plane = await startPlane(t, { store, workers: 0, encodedCache: cache });
  registerArrowDecoder('lz4');
  const table = tableFromRows(ROWS);
  // One Table put twice: two tokens, one body (the workload of an agent calling the tool twice).
  const [first, second] = [(await store.put(table)).token, (await store.put(table)).token];
  ok(await plane.post(first, {}, { accept: ARROW_LZ4 }));
  await plane.store.committed(first);
  assert.equal(cache.stats().bodies, 1, 'kept: the second token still holds the body');
  const compressed = cache.stats().compressedColumns;
  const res = ok(await plane.post(second, {}, { accept: ARROW_LZ4 }));
  assert.deepEqual(arrowRows(res), expectedBody(ROWS.map((_, i) => i)));
  assert.equal(cache.stats().compressedColumns, compressed, 'the second fetch compressed nothing again');
  await plane.store.committed(second);
  // The plane drops them in the continuation of the commit it awaited: one turn of the loop later.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([cache.stats().bodies, cache.stats().bytes], [0, 0], 'dropped with the body');
});

test('regression: a client that hangs up while a body is being compressed does not cut another transfer waiting on that compression', NEEDS_LZ4, async (t) => {
  const slots = new Int32Array(new SharedArrayBuffer(8));
  const real = encoderPoolRunning({ file: GATED_WORKER_FILE, data: slots.buffer }, { threads: 1 });
  t.after(() => real.close());
  const handedOver: Array<() => void> = [];
  const handOvers = [0, 1].map((n) => new Promise<void>((resolve) => (handedOver[n] = resolve)));
  let runs = 0;
  const watched: EncoderPool = {
    threads: real.threads,
    run(task, options) {
      handedOver[runs++]?.();
      return real.run(task, options);
    },
    close: () => real.close(),
  };
  const cache = new EncodedBatchCache();
  // Nothing prepared in think time: the two transfers' compressions are the only tasks.
  const plane = await startPlane(t, { workers: watched, inlineCellLimit: 0, encodedCache: cache, prepare: 'off' });
  registerArrowDecoder('lz4');
  // The only thread is held by another body's chunk, so the compression below waits in piscina's queue.
  const occupier = plane.post(await plane.mint(ROWS), {});
  await handOvers[0];
  await untilSlot(slots, 1, (started) => started === 1, 'the occupying chunk started');

  // Two tokens, one body: two agents' transfers of the same table, both needing its batch compressed.
  const table = tableFromRows(ROWS);
  const [leaving, staying] = [(await plane.store.put(table)).token, (await plane.store.put(table)).token];
  const serverSide = once(plane.app.server, 'connection') as Promise<[Socket]>;
  const hangingUp = http.request(`${plane.base}/s2sp/data/${leaving}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ARROW_LZ4 } });
  hangingUp.on('error', () => {}); // the hang-up below
  hangingUp.end('{}');
  await handOvers[1]; // its compression is queued
  const [socket] = await serverSide;
  const second = plane.post(staying, {}, { accept: ARROW_LZ4 });
  await plane.store.leased(3);
  // The second transfer's handler runs on from its lease in the same turn: it waits on that compression now.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(runs, 2, 'the second transfer joined the compression instead of starting its own');
  hangingUp.destroy();
  await once(socket, 'close'); // the server saw the hang-up: the first transfer is aborted

  Atomics.store(slots, 0, 1);
  Atomics.notify(slots, 0);
  ok(await occupier, 'the occupying fetch');
  const res = ok(await second, 'the transfer that stayed');
  assert.deepEqual(arrowRows(res), expectedBody(ROWS.map((_, i) => i)));
  assert.deepEqual(await plane.store.settled(leaving), ['release'], 'the hang-up kept its token');
  assert.equal(runs, 2, 'compressed once, for both');
});
