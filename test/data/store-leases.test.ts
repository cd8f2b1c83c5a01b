/**
 * The data plane and its store's leases and failures: a slow transfer keeps
 * its lease past the lease timeout (renewal), a lease lost to another
 * transfer cuts the stream, and a shared store that is unreachable is a 503
 * `S2SP_ERR_STORE_UNAVAILABLE` (fetch and health) that heals by itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { ARROW, startPlane } from '../support/data-plane-harness.js';
import { heldFetch } from '../support/held-fetch.js';
import { redisSkipReason, startRedisServer } from '../support/redis-server.js';
import { stallingRedis, takeRedisDown } from '../support/redis-outage.js';
import { eventually } from '../support/store-contract.js';

const big = tableFromRows(Array.from({ length: 400_000 }, (_, i) => ({ id: i, label: `a label for row ${i}`, x: i / 7 })));

test('a transfer slower than the lease timeout keeps its lease (renewed), completes once, then 404', { timeout: 30_000 }, async (t) => {
  const plane = await startPlane(t, { store: new MemoryStore({ leaseTimeoutMs: 150 }), workers: 0 });
  const { store } = plane; // watched by the harness
  const { token } = await store.put(big);
  const bodyBytes = (await store.stats()).bytes;
  // ~10 MB the client does not read yet: more than the socket buffers take, so the transfer stays open.
  const transfer = heldFetch(`${plane.base}/s2sp/data/${token}`);
  await transfer.answered;
  assert.equal((await plane.post(token, {})).status, 409, 'another fetch while the transfer runs');
  // The transfer renews every 50 ms (a third of the timeout), never sooner: 12 renewals span
  // at least 600 ms of its lease, four lease timeouts. (A transfer that does not renew never gets here.)
  await store.renewed(token, 12);
  assert.equal((await plane.post(token, {})).status, 409, 'still 409 after the lease timeout passed several times: the transfer renewed its lease');
  const result = await transfer.read();
  assert.equal(result.status, 200);
  assert.equal(result.complete, true);
  assert.equal(result.body.byteLength, bodyBytes);
  assert.deepEqual(await store.settled(token), ['commit']);
  assert.equal((await plane.post(token, {})).status, 404);
});

test('a lease lost to another transfer cuts this one: never two complete transfers', async (t) => {
  // The store's clock is node:test's fake Date and setTimeout: its lease timeout (a deadline) passes
  // exactly at tick(), not at a moment a poll has to catch. (The plane's renewals run on setInterval, still real.)
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const plane = await startPlane(t, { store: new MemoryStore({ leaseTimeoutMs: 100 }), workers: 0 });
  const { store } = plane; // watched by the harness
  const { token } = await store.put(big);
  // The store's own lease, never renewed, stands for a transfer on a replica that died.
  const dead = await store.lease(token);
  assert.equal((await plane.post(token, {})).status, 409);
  t.mock.timers.tick(99);
  assert.equal((await plane.post(token, {})).status, 409, 'held until the lease timeout');
  t.mock.timers.tick(1);
  const taken = await plane.post(token, {}, { accept: ARROW });
  assert.equal(taken.status, 200, 'fetchable after the lease timeout');
  assert.equal(taken.complete, true);
  assert.deepEqual(await store.settled(token), ['commit'], 'the transfer committed (before its last bytes)');
  await dead.commit(); // the dead holder settling late changes nothing
  assert.equal((await plane.post(token, {})).status, 404);
});

test(
  'a shared store that is down: fetch and health are 503 S2SP_ERR_STORE_UNAVAILABLE; both work again when it is back',
  { skip: redisSkipReason() },
  async (t) => {
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
  },
);

test(
  'a shared store that stops answering (SIGSTOP): fetch and health are 503 S2SP_ERR_STORE_UNAVAILABLE within the deadline; both work after SIGCONT',
  { skip: redisSkipReason() },
  async (t) => {
    const { redis, store, deadlineMs } = await stallingRedis(t);
    const plane = await startPlane(t, { store, workers: 0 });
    const { token } = await store.put(tableFromRows([{ a: 1 }, { a: 2 }]));
    redis.pause();
    t.after(() => redis.resume());
    const health = () => plane.app.inject({ method: 'GET', url: '/s2sp/health' });
    for (let round = 1; round <= 2; round++) {
      // Round 1 meets the stuck connection; round 2 the fresh one that Redis has not answered yet.
      let at = Date.now();
      const fetchStuck = await plane.post(token, { row_ids: [0] });
      assert.equal(fetchStuck.status, 503, `round ${round}: fetch`);
      assert.equal(fetchStuck.json().error.code, 'S2SP_ERR_STORE_UNAVAILABLE');
      assert.ok(Date.now() - at < 3 * deadlineMs, `round ${round}: the fetch answered after ${Date.now() - at} ms`);
      at = Date.now();
      const healthStuck = await health();
      assert.equal(healthStuck.statusCode, 503, `round ${round}: health`);
      assert.equal(healthStuck.json().error.code, 'S2SP_ERR_STORE_UNAVAILABLE');
      assert.ok(Date.now() - at < 3 * deadlineMs, `round ${round}: health answered after ${Date.now() - at} ms`);
    }
    redis.resume();
    await eventually(async () => (await health()).statusCode === 200, 10_000, 'healthy again after SIGCONT');
    // The fetches that failed left the token as it was: its one transfer still comes.
    let fetched = await plane.post(token, { row_ids: [1] });
    // A lease command stuck in Redis ran once it woke: the token is in flight until that lease times out.
    if (fetched.status === 409)
      await eventually(async () => (fetched = await plane.post(token, { row_ids: [1] })).status !== 409, 60_000, 'the stuck lease timed out');
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.json().body, [{ _row_id: 1, a: 2 }]);
  },
);
