/**
 * The data plane and its store's leases and failures: a slow transfer keeps
 * its lease past the lease timeout (renewal), a lease lost to another
 * transfer cuts the stream, and a shared store that is unreachable is a 503
 * `S2SP_ERR_STORE_UNAVAILABLE` (fetch and health) that heals by itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { ARROW, startPlane } from '../support/data-plane-harness.js';
import { redisSkipReason, startRedisServer } from '../support/redis-server.js';
import { takeRedisDown } from '../support/redis-outage.js';
import { eventually } from '../support/store-contract.js';

const big = tableFromRows(Array.from({ length: 400_000 }, (_, i) => ({ id: i, label: `a label for row ${i}`, x: i / 7 })));

/** Starts a full Arrow fetch and reads it slowly: at most 64 KiB every `readMs`. */
function slowFetch(url: string, readMs: number): { done: Promise<{ status: number; bytes: number; complete: boolean }>; firstBytes: Promise<void> } {
  let signalFirst!: () => void;
  const firstBytes = new Promise<void>((resolve) => (signalFirst = resolve));
  const done = new Promise<{ status: number; bytes: number; complete: boolean }>((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ARROW } }, (response) => {
      let bytes = 0;
      response.on('readable', () => {}); // paused mode: bytes leave the buffer only when the timer reads them
      const timer = setInterval(() => {
        const chunk = (response.read(64 * 1024) ?? response.read()) as Buffer | null;
        if (chunk === null) return;
        bytes += chunk.byteLength;
        signalFirst();
      }, readMs);
      const finish = (complete: boolean) => {
        clearInterval(timer);
        resolve({ status: response.statusCode ?? 0, bytes, complete });
      };
      response.on('end', () => finish(response.complete));
      response.on('error', () => finish(false));
    });
    request.on('error', reject);
    request.end('{}');
  });
  return { done, firstBytes };
}

test('a transfer slower than the lease timeout keeps its lease (renewed), completes once, then 404', async (t) => {
  const store = new MemoryStore({ leaseTimeoutMs: 150 });
  const plane = await startPlane(t, { store, workers: 0 });
  const { token } = await store.put(big);
  const bodyBytes = (await store.stats()).bytes;
  // ~10 MB read 64 KiB per 4 ms: over half a second, several lease timeouts.
  const started = Date.now();
  const transfer = slowFetch(`${plane.base}/s2sp/data/${token}`, 4);
  let finished = false;
  void transfer.done.then(() => (finished = true));
  await transfer.firstBytes;
  assert.equal((await plane.post(token, {})).status, 409, 'another fetch while the transfer runs');
  await sleep(3 * 150 - (Date.now() - started));
  assert.equal(finished, false, 'the transfer must still run for this test to say anything');
  assert.equal((await plane.post(token, {})).status, 409, 'still 409 after three lease timeouts: the transfer renewed its lease');
  const result = await transfer.done;
  assert.equal(result.status, 200);
  assert.equal(result.complete, true);
  assert.equal(result.bytes, bodyBytes);
  await eventually(async () => (await plane.post(token, {})).status === 404, 5000, 'consumed');
});

test('a lease lost to another transfer cuts this one: never two complete transfers', async (t) => {
  const store = new MemoryStore({ leaseTimeoutMs: 100 });
  const plane = await startPlane(t, { store, workers: 0 });
  const { token } = await store.put(big);
  // The store's own lease, never renewed, stands for a transfer on a replica that died.
  const dead = await store.lease(token);
  assert.equal((await plane.post(token, {})).status, 409);
  await eventually(async () => (await plane.post(token, {}, { accept: ARROW })).status === 200, 5000, 'fetchable after the lease timeout');
  await dead.commit(); // the dead holder settling late changes nothing
  assert.equal((await plane.post(token, {})).status, 404);
});

test('a shared store that is down: fetch and health are 503 S2SP_ERR_STORE_UNAVAILABLE; both work again when it is back', { skip: redisSkipReason() }, async (t) => {
  const redis = await startRedisServer();
  t.after(() => redis.stop());
  const store = new RedisStore({ url: redis.url, commandTimeoutMs: 2000 });
  await store.ready();
  const plane = await startPlane(t, { store, workers: 0 });
  const { token } = await store.put(tableFromRows([{ a: 1 }, { a: 2 }]));
  await takeRedisDown(redis);
  const fetchDown = await plane.post(token, { row_ids: [0] });
  assert.equal(fetchDown.status, 503);
  assert.equal(fetchDown.json().error.code, 'S2SP_ERR_STORE_UNAVAILABLE');
  const healthDown = await plane.app.inject({ method: 'GET', url: '/s2sp/health' });
  assert.equal(healthDown.statusCode, 503);
  assert.equal(healthDown.json().error.code, 'S2SP_ERR_STORE_UNAVAILABLE');
  await redis.restart();
  await eventually(async () => (await plane.app.inject({ method: 'GET', url: '/s2sp/health' })).statusCode === 200, 10_000, 'healthy again');
  const fresh = await store.put(tableFromRows([{ a: 1 }, { a: 2 }]));
  const ok = await plane.post(fresh.token, { row_ids: [1] });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.json().body, [{ _row_id: 1, a: 2 }]);
});
