/**
 * Single use under store faults (SPEC 5, src/data/last-bytes-gate.ts): a
 * transfer whose consumption cannot be recorded does not end as a complete
 * 200. Against a real Redis with an append-only file stopped mid-transfer
 * and brought back on its data, and on every response path the data plane
 * has, with a store whose commit fails or consumes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { tableFromArrays } from 'apache-arrow';
import { Registry } from 'prom-client';
import type { BodyStore } from '../../src/cache/body-store.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { S2SPError } from '../../src/errors.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { ARROW, ARROW_LZ4, assertErrorDocument, ok, startPlane, type RawResponse } from '../support/data-plane-harness.js';
import { heldFetch } from '../support/held-fetch.js';
import { redisSkipReason, startRedisServer } from '../support/redis-server.js';
import { takeRedisDown } from '../support/redis-outage.js';
import { eventually } from '../support/store-contract.js';

/** A complete transfer: 200, the HTTP response ended properly, and the document is whole. */
function isComplete(status: number, complete: boolean, body: Buffer, kind: 'arrow' | 'json'): boolean {
  if (status !== 200 || !complete) return false;
  if (kind === 'arrow') return body.subarray(-END_OF_STREAM.byteLength).equals(END_OF_STREAM);
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/** About 40 MB of Arrow: far more than loopback socket buffers hold, so a held transfer stays open. */
function fortyMegabytes() {
  const rows = 2_500_000;
  return tableFromArrays({ id: Int32Array.from({ length: rows }, (_, i) => i), x: Float64Array.from({ length: rows }, (_, i) => i / 7) });
}

test("regression: behind the metrics' byte counter, a large answer was committed before the client read it", { timeout: 60_000 }, async (t) => {
  // The whole cached stream is written into the counter at once, before anything reached the
  // socket: the commit took the socket's empty buffer for "sent" and consumed the token while the
  // client had read nothing (a hang-up then lost the data).
  const plane = await startPlane(t, { store: new MemoryStore(), workers: 0, registry: new Registry() });
  const { token } = await plane.store.put(fortyMegabytes());
  const transfer = heldFetch(`${plane.base}/s2sp/data/${token}`);
  await transfer.answered;
  const settledUnread = [...plane.store.settlements(token)];
  const result = await transfer.read(); // before any assertion: a transfer left held would keep the plane from closing
  assert.deepEqual(settledUnread, [], 'settled while the client had read nothing');
  assert.ok(isComplete(result.status, result.complete, result.body, 'arrow'));
  assert.deepEqual(await plane.store.settled(token), ['commit']);
});

test(
  'one token fetched in full twice: Redis (AOF) stopped mid-transfer, back on its data; at most one complete transfer',
  { skip: redisSkipReason(), timeout: 120_000 },
  async (t) => {
    const redis = await startRedisServer({ appendOnly: true });
    t.after(() => redis.stop());
    const replica = () => new RedisStore({ url: redis.url, leaseTimeoutMs: 1000, commandTimeoutMs: 2000 });
    const storeA = replica();
    const storeB = replica();
    await Promise.all([storeA.ready(), storeB.ready()]);
    const a = await startPlane(t, { store: storeA, workers: 0 });
    const b = await startPlane(t, { store: storeB, workers: 0 });
    // Replica A puts the body, so it serves the fetch from its local copy.
    const { token } = await a.store.put(fortyMegabytes());
    const bodyBytes = (await storeA.stats()).localBytes!;
    assert.ok(bodyBytes > 35_000_000, `a body of ${bodyBytes} bytes`);

    const transfer = heldFetch(`${a.base}/s2sp/data/${token}`);
    await transfer.answered; // the transfer is streaming, held by a client that reads nothing yet
    await takeRedisDown(redis); // SIGTERM: Redis writes its append-only file and exits
    const first = await transfer.read();
    await redis.restart(); // the same port and dir: back on its data

    // A's lease came back with Redis: B sees 409 until it times out, and 503 until it reconnected.
    let second: RawResponse | undefined;
    await eventually(
      async () => {
        second = await b.post(token, {}, { accept: ARROW });
        return second.status !== 409 && second.status !== 503;
      },
      20_000,
      'replica B answers the token',
    );
    const completes = [isComplete(first.status, first.complete, first.body, 'arrow'), isComplete(second!.status, second!.complete, second!.bytes, 'arrow')];
    assert.ok(
      completes.filter(Boolean).length <= 1,
      `two complete transfers of one token (A: ${first.body.byteLength} bytes, B: ${second!.bytes.byteLength} bytes)`,
    );
    assert.deepEqual(completes, [false, true], 'A, whose consume Redis never recorded, is cut; the token stays for one complete transfer');
    assert.ok(first.body.byteLength < bodyBytes, 'A held back its last bytes');
    assert.equal(second!.bytes.byteLength, bodyBytes);
    assert.equal((await b.post(token, {}, { accept: ARROW })).status, 404, 'consumed by B');
  },
);

/**
 * `store` with commits that fail as a shared store's do: `unavailable` (the
 * store could not record it) or `lost` (it consumed nothing: the lease was
 * taken by another transfer). The lease is released underneath, so the token
 * stays for a later transfer.
 */
function failingCommits(store: MemoryStore, outcome: 'unavailable' | 'lost'): BodyStore {
  return {
    put: (table, options) => store.put(table, options),
    lease: async (token) => {
      const lease = await store.lease(token);
      return {
        body: lease.body,
        timeoutMs: lease.timeoutMs,
        renew: () => lease.renew(),
        release: () => lease.release(),
        commit: async () => {
          await lease.release();
          if (outcome === 'unavailable') throw new S2SPError('S2SP_ERR_STORE_UNAVAILABLE');
          return false;
        },
      };
    },
    delete: (token) => store.delete(token),
    has: (token) => store.has(token),
    stats: () => store.stats(),
    close: async () => {}, // the healthy plane closes the store
  };
}

for (const outcome of ['unavailable', 'lost'] as const) {
  test(`a commit that fails (${outcome}): a small answer is an error document, every other kind of response is cut, and the token stays for one complete transfer`, async (t) => {
    const store = new MemoryStore();
    const faulty = await startPlane(t, { store: failingCommits(store, outcome), workers: 0, chunkRows: 1000 });
    const healthy = await startPlane(t, { store, workers: 0, chunkRows: 1000 });
    const table = tableFromRows(Array.from({ length: 5000 }, (_, i) => ({ id: i, label: `row ${i}`, x: i / 3 })));
    const cases: Array<{ path: string; request: object; headers: Record<string, string>; kind: 'arrow' | 'json'; gzip?: boolean; small?: true }> = [
      { path: 'small JSON (one buffer)', request: { row_ids: [0, 1] }, headers: {}, kind: 'json', small: true },
      { path: 'small Arrow (one buffer)', request: { row_ids: [0, 1] }, headers: { accept: ARROW }, kind: 'arrow', small: true },
      { path: 'the whole cached Arrow stream (one buffer)', request: {}, headers: { accept: ARROW }, kind: 'arrow' },
      { path: 'streamed JSON chunks', request: {}, headers: {}, kind: 'json' },
      { path: 'streamed Arrow batches', request: { row_ids: Array.from({ length: 3000 }, (_, i) => i + 7) }, headers: { accept: ARROW }, kind: 'arrow' },
      { path: 'gzip JSON', request: {}, headers: { 'accept-encoding': 'gzip' }, kind: 'json', gzip: true },
      { path: 'LZ4 Arrow, compressed on the way', request: {}, headers: { accept: ARROW_LZ4 }, kind: 'arrow' },
      { path: 'LZ4 Arrow, from the kept compressed buffers', request: {}, headers: { accept: ARROW_LZ4 }, kind: 'arrow' },
    ];
    await store.put(table); // a token never fetched keeps the body, so the plane's kept compressed buffers stay its own
    for (const { path, request, headers, kind, gzip, small } of cases) {
      const token = (await store.put(table)).token;
      if (small === true) {
        // Committed before any byte is sent: the failed commit is the answer.
        const refused = await faulty.post(token, request, headers);
        assertErrorDocument(
          refused,
          outcome === 'unavailable' ? 503 : 404,
          outcome === 'unavailable' ? 'S2SP_ERR_STORE_UNAVAILABLE' : 'S2SP_ERR_TOKEN_NOT_FOUND',
        );
      }
      // A response of a few kilobytes stays corked through the commit, so its cut is a connection
      // closed before any response (the client's 'socket hang up'); a larger one is a response cut short.
      const cut =
        small === true
          ? undefined
          : await faulty.post(token, request, headers).catch((error: NodeJS.ErrnoException) => {
              assert.equal(error.code, 'ECONNRESET', `${path}: ${error.message}`);
              return undefined;
            });
      if (cut !== undefined) {
        const body = gzip === true && cut.complete ? gunzipSync(cut.bytes) : cut.bytes;
        assert.equal(isComplete(cut.status, cut.complete, body, kind), false, `${path}: a transfer whose commit failed ended complete`);
        assert.equal(cut.complete, false, `${path}: the HTTP response is cut`);
      }
      const whole = ok(await healthy.post(token, request, headers), path);
      assert.ok(isComplete(whole.status, whole.complete, gzip === true ? gunzipSync(whole.bytes) : whole.bytes, kind), `${path}: the one complete transfer`);
      assert.equal((await healthy.post(token, request, headers)).status, 404, `${path}: then consumed`);
    }
  });
}
