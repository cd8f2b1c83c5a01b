/**
 * The data plane's metrics over a RedisStore: token counts come from the
 * shared store's own accounting (an expiry happens inside Redis, and is
 * counted by the scrape that finds it), and an unreachable Redis shows as
 * store errors and `s2sp_store_up 0`, then recovers without a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import type { StoreEvent } from '../../src/cache/body-store.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { ok, startPlane } from '../support/data-plane-harness.js';
import { scrape, valueOf } from '../support/prometheus-text.js';
import { takeRedisDown } from '../support/redis-outage.js';
import { redisSkipReason, startRedisServer } from '../support/redis-server.js';

const skip = redisSkipReason();
const rowsOf = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ id: i, tag: `${tag} ${i}` }));

/** Resolves once `store` reported an event of `type`. */
function nextEvent(store: RedisStore, type: StoreEvent['type']): Promise<void> {
  return new Promise((resolve) => {
    const stop = store.observe((event) => {
      if (event.type !== type) return;
      stop();
      resolve();
    });
  });
}

test('metrics over Redis: exact token counts, an expiry found by the scrape, store errors while Redis is down', { skip, timeout: 60_000 }, async (t) => {
  const redis = await startRedisServer();
  t.after(() => redis.stop());
  const store = new RedisStore({ url: redis.url, commandTimeoutMs: 1000 });
  await store.ready();
  const registry = new Registry();
  const plane = await startPlane(t, { store, registry, workers: 0 });
  const metricsUrl = `${plane.base}/metrics`;

  const [fetched, revoked, kept] = await Promise.all(['f', 'r', 'k'].map(async (tag) => (await store.put(tableFromRows(rowsOf(20, tag)))).token));
  const shortLived = (await store.put(tableFromRows(rowsOf(20, 's')), { ttlMs: 50 })).token;
  const consumed = nextEvent(store, 'consumed');
  ok(await plane.post(fetched));
  await consumed;
  assert.equal(await store.delete(revoked), true);
  // Redis expires the key by itself; nothing in this process hears of it until the accounting runs.
  for (let i = 0; i < 200 && (await store.has(shortLived)); i++) await sleep(10);
  assert.equal(await store.has(shortLived), false);

  const up = await scrape(metricsUrl);
  assert.equal(valueOf(up, 's2sp_tokens_minted_total'), 4);
  assert.equal(valueOf(up, 's2sp_tokens_consumed_total'), 1);
  assert.equal(valueOf(up, 's2sp_tokens_revoked_total'), 1);
  assert.equal(valueOf(up, 's2sp_tokens_expired_total'), 1);
  assert.equal(valueOf(up, 's2sp_store_errors_total'), 0);
  assert.equal(valueOf(up, 's2sp_store_up'), 1);
  assert.equal(valueOf(up, 's2sp_cache_tokens'), 1);
  assert.equal(valueOf(up, 's2sp_cache_bodies'), 1);
  assert.equal(valueOf(up, 's2sp_leases_in_flight'), 0);
  assert.equal(valueOf(up, 's2sp_data_fetches_total', { status: '200', format: 'json' }), 1);

  // Redis gone: a put fails, and so does the scrape's read of the stats (each one store error).
  await takeRedisDown(redis);
  await assert.rejects(store.put(tableFromRows(rowsOf(5, 'x'))), { code: 'S2SP_ERR_STORE_UNAVAILABLE' });
  const down = await scrape(metricsUrl);
  assert.equal(valueOf(down, 's2sp_store_errors_total'), 2);
  assert.equal(valueOf(down, 's2sp_store_up'), 0);
  assert.equal(valueOf(down, 's2sp_tokens_minted_total'), 4);

  // Back: the next scrape reads the store again (the restarted Redis is empty).
  await redis.restart();
  await store.ready(5000);
  const back = await scrape(metricsUrl);
  assert.equal(valueOf(back, 's2sp_store_up'), 1);
  assert.equal(valueOf(back, 's2sp_store_errors_total'), 2);
  assert.equal(await store.has(kept), false);
});
