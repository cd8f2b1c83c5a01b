/**
 * The data plane's Prometheus metrics (SPEC 3.5), scraped from GET /metrics
 * after known traffic: every counter must hold the exact count of what was
 * done, and the byte counter the exact bytes the client received.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import type { StoreEvent } from '../../src/cache/body-store.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { ARROW, ok, startPlane, type Plane, type RawResponse } from '../support/data-plane-harness.js';
import { scrape, valueOf, type Samples } from '../support/prometheus-text.js';
import { countingPool } from '../support/counting-pool.js';

const rowsOf = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ id: i, name: `${tag} ${i}`, value: i / 4 }));

/**
 * Counts data-path responses as they close. Its hook is added before the plugin, so its
 * 'close' listener runs before the plugin's; a turn of the loop later, the
 * plugin has counted too.
 */
function closeCounter(app: FastifyInstance): (n: number) => Promise<void> {
  let closed = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/s2sp/data/')) return;
    reply.raw.once('close', () => {
      closed++;
      for (const waiter of waiters.filter((w) => closed >= w.n)) waiter.resolve();
    });
  });
  return async (n) => {
    if (closed < n) await new Promise<void>((resolve) => waiters.push({ n, resolve }));
    await nextTurn();
  };
}

/** Resolves once `store` reported `count` events of `type`. */
function storeEvents(store: MemoryStore, type: StoreEvent['type'], count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const stop = store.observe((event) => {
      if (event.type !== type) return;
      seen += event.type === 'expired' ? event.count : 1;
      if (seen >= count) {
        stop();
        resolve();
      }
    });
  });
}

async function planeWithMetrics(
  t: TestContext,
  options: { chunkRows?: number } = {},
): Promise<{ plane: Plane; registry: Registry; closes: (n: number) => Promise<void>; store: MemoryStore }> {
  const registry = new Registry();
  const store = new MemoryStore();
  let closes!: (n: number) => Promise<void>;
  const plane = await startPlane(t, { store, registry, workers: 0, ...options, beforeRegister: (app) => (closes = closeCounter(app)) });
  return { plane, registry, closes, store };
}

test('metrics: exact counts after minting, fetching, expiring, revoking, a 404 and a 406', { timeout: 60_000 }, async (t) => {
  const { plane, closes, store } = await planeWithMetrics(t, { chunkRows: 10 });
  const metricsUrl = `${plane.base}/metrics`;

  // Before any traffic every counter is there, at zero.
  const before = await scrape(metricsUrl);
  for (const name of [
    's2sp_tokens_minted_total',
    's2sp_tokens_consumed_total',
    's2sp_tokens_expired_total',
    's2sp_tokens_revoked_total',
    's2sp_store_errors_total',
  ]) {
    assert.equal(valueOf(before, name), 0, name);
  }
  assert.equal(valueOf(before, 's2sp_store_up'), 1);

  // Five tokens, each over its own body; one with a TTL that runs out now.
  const tables = ['a', 'b', 'c', 'd', 'e'].map((tag) => tableFromRows(rowsOf(50, tag)));
  const [a, b, c, e] = await Promise.all([0, 1, 2, 4].map(async (i) => (await store.put(tables[i])).token));
  const expired = storeEvents(store, 'expired', 1);
  await store.put(tables[3], { ttlMs: 20 });
  await expired;

  // a: JSON, streamed in 5 chunks of 10 rows, gzip-encoded; b: the whole body as Arrow (one buffer).
  const jsonAnswer = ok(await plane.post(a, {}, { 'accept-encoding': 'gzip' }), 'a');
  assert.equal(jsonAnswer.headers['content-encoding'], 'gzip');
  const arrowAnswer = ok(await plane.post(b, {}, { accept: ARROW }), 'b');
  // c revoked, then fetched: 404. e asked for CSV: 406 (and e stays).
  assert.equal(await store.delete(c), true);
  const notFound = await plane.post(c);
  assert.equal(notFound.status, 404);
  const notAcceptable = await plane.post(e, {}, { accept: 'text/csv' });
  assert.equal(notAcceptable.status, 406);
  await closes(4);

  const after = await scrape(metricsUrl);
  const counts = (name: string, labels?: Record<string, string>) => valueOf(after, name, labels);
  assert.equal(counts('s2sp_tokens_minted_total'), 5);
  assert.equal(counts('s2sp_tokens_consumed_total'), 2);
  assert.equal(counts('s2sp_tokens_expired_total'), 1);
  assert.equal(counts('s2sp_tokens_revoked_total'), 1);
  assert.equal(counts('s2sp_store_errors_total'), 0);
  assert.equal(counts('s2sp_data_fetches_total', { status: '200', format: 'json' }), 1);
  assert.equal(counts('s2sp_data_fetches_total', { status: '200', format: 'arrow' }), 1);
  assert.equal(counts('s2sp_data_fetches_total', { status: '404', format: 'json' }), 1);
  assert.equal(counts('s2sp_data_fetches_total', { status: '406', format: 'none' }), 1);
  assert.equal(fetchTotal(after), 4);
  // Bytes as they left: compressed for a, and the error documents too.
  const sizes = (...answers: RawResponse[]) => answers.reduce((sum, answer) => sum + answer.bytes.byteLength, 0);
  assert.equal(counts('s2sp_data_bytes_sent_total', { format: 'json' }), sizes(jsonAnswer, notFound));
  assert.equal(counts('s2sp_data_bytes_sent_total', { format: 'arrow' }), sizes(arrowAnswer));
  assert.equal(counts('s2sp_data_bytes_sent_total', { format: 'none' }), sizes(notAcceptable));
  // One complete transfer per format in the histogram; the errors are not transfers.
  assert.equal(counts('s2sp_data_transfer_duration_seconds_count', { format: 'json' }), 1);
  assert.equal(counts('s2sp_data_transfer_duration_seconds_count', { format: 'arrow' }), 1);
  assert.equal(counts('s2sp_data_transfer_duration_seconds_bucket', { format: 'json', le: '+Inf' }), 1);
  assert.ok(counts('s2sp_data_transfer_duration_seconds_sum', { format: 'json' }) > 0);
  assert.equal(counts('s2sp_leases_in_flight'), 0);
  // Only e is left: one token over one body.
  const stats = await store.stats();
  assert.equal(stats.entries, 1);
  assert.equal(counts('s2sp_cache_tokens'), 1);
  assert.equal(counts('s2sp_cache_bodies'), 1);
  assert.equal(counts('s2sp_cache_bytes'), stats.bytes);
  assert.equal(counts('s2sp_cache_local_bytes'), stats.bytes);
  assert.equal(counts('s2sp_cache_max_bytes'), store.maxBytes);
  assert.equal(counts('s2sp_store_up'), 1);
  assert.equal(after.get('s2sp_data_transfers_aborted_total{format="json"}') ?? 0, 0);
});

function fetchTotal(samples: Samples): number {
  let total = 0;
  for (const [key, value] of samples) if (key.startsWith('s2sp_data_fetches_total{')) total += value;
  return total;
}

test('metrics: a transfer cut by its client counts as aborted, not consumed; the lease gauge returns to 0', { timeout: 60_000 }, async (t) => {
  const { plane, closes, store } = await planeWithMetrics(t, { chunkRows: 1000 });
  // Far more than the socket buffers hold: with the client paused the transfer waits, mid-stream.
  const { token } = await store.put(tableFromRows(rowsOf(300_000, 'big')));
  const request = http.request(`${plane.base}/s2sp/data/${token}`, { method: 'POST', headers: { 'content-type': 'application/json' } });
  request.on('error', () => {}); // destroyed on purpose below
  request.end('{}');
  const [response] = (await once(request, 'response')) as [http.IncomingMessage];
  response.on('error', () => {});
  await once(response, 'data');
  response.pause();
  const during = await scrape(`${plane.base}/metrics`);
  assert.equal(valueOf(during, 's2sp_leases_in_flight'), 1);
  request.destroy();
  await closes(1);
  const after = await scrape(`${plane.base}/metrics`);
  assert.equal(valueOf(after, 's2sp_data_transfers_aborted_total', { format: 'json' }), 1);
  assert.equal(valueOf(after, 's2sp_data_fetches_total', { status: '200', format: 'json' }), 1);
  assert.equal(valueOf(after, 's2sp_tokens_consumed_total'), 0);
  assert.equal(valueOf(after, 's2sp_leases_in_flight'), 0);
  assert.equal(after.get('s2sp_data_transfer_duration_seconds_count{format="json"}'), undefined);
  assert.ok(valueOf(after, 's2sp_data_bytes_sent_total', { format: 'json' }) > 0);
  // The token survived the cut transfer.
  assert.equal(await store.has(token), true);
});

test('metrics: metricsPath false records without serving; without a registry there is no /metrics', { timeout: 60_000 }, async (t) => {
  const registry = new Registry();
  const quiet = await startPlane(t, { registry, metricsPath: false, workers: 0 });
  await quiet.mint(rowsOf(3, 'q'));
  assert.equal((await fetch(`${quiet.base}/metrics`)).status, 404);
  assert.match(await registry.metrics(), /^s2sp_tokens_minted_total 1$/m);

  const off = await startPlane(t, { workers: 0 });
  assert.equal((await fetch(`${off.base}/metrics`)).status, 404);
});

test('metrics: two planes on one registry and one store count each event once, until both close', { timeout: 60_000 }, async (t) => {
  const registry = new Registry();
  const store = new MemoryStore();
  const first = await startPlane(t, { registry, store, workers: 0 });
  const second = await startPlane(t, { registry, store, workers: 0, metricsPath: false });
  await first.mint(rowsOf(3, 'x'));
  assert.match(await registry.metrics(), /^s2sp_tokens_minted_total 1$/m);
  // Closing one plane leaves the other counting.
  await first.app.close();
  await second.mint(rowsOf(3, 'y'));
  assert.match(await registry.metrics(), /^s2sp_tokens_minted_total 2$/m);
  await second.app.close();
  await store.put(tableFromRows(rowsOf(3, 'z')));
  assert.match(await registry.metrics(), /^s2sp_tokens_minted_total 2$/m);
});

test('metrics: bodies prepared in think time are counted by form, and their bytes are in the budget until the token is consumed', async (t) => {
  const { pool, background } = countingPool(t);
  const registry = new Registry();
  const store = new MemoryStore();
  const plane = await startPlane(t, { store, registry, workers: pool, prepare: ['json', 'lz4'] });
  const token = (await store.put(tableFromRows(rowsOf(70_000, 'p')))).token;
  await Promise.all(background);
  await nextTurn(); // the preparations end a few promise turns after their last batch
  const prepared = await scrape(`${plane.base}/metrics`);
  const shared = (await store.stats()).sharedBytes!;
  assert.ok(shared > 0, 'the prepared bytes are in the budget');
  assert.equal(valueOf(prepared, 's2sp_cache_shared_bytes'), shared);
  assert.equal(valueOf(prepared, 's2sp_prepared_forms_total', { form: 'json', outcome: 'done' }), 1);
  assert.equal(valueOf(prepared, 's2sp_prepared_forms_total', { form: 'lz4', outcome: 'done' }), 1);
  ok(await plane.post(token, {}));
  assert.equal((await store.stats()).sharedBytes, 0, 'consumed: the body and what was made of it are gone');
});
