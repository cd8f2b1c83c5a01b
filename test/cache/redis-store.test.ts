/**
 * RedisStore against a real redis-server of the test's own: the store
 * contract, then what only a shared store has: two replicas (two stores on
 * one Redis), hashed tokens, chunks under one hash tag, TTL expiry that
 * leaves Redis as it was, Redis refusing memory, Redis going away and back.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '@redis/client';
import { RedisStore, tokenHashOf } from '../../src/cache/redis-store.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { codeOf } from '../support/code-of.js';
import { redisStoresOn } from '../support/redis-store-factory.js';
import { redisSkipReason, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { stallingRedis, takeRedisDown } from '../support/redis-outage.js';
import { bodyBytesOf, eventually, sampleTable, storeContract } from '../support/store-contract.js';

const skip = redisSkipReason();
let redis: RedisServer;

before(async () => {
  if (skip === undefined) redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

/** A store on the shared test Redis, under a key prefix of its own unless `keyPrefix` is given. */
const storeOn = redisStoresOn(() => redis.url, 't');

/** A plain client for looking at what the store left in Redis. */
async function inspector(t: { after(fn: () => Promise<void>): void }) {
  const client = createClient({ url: redis.url });
  client.on('error', () => {});
  await client.connect();
  t.after(async () => {
    await client.close().catch(() => client.destroy());
  });
  return client;
}

storeContract('RedisStore', (t, options = {}) => storeOn(t, options), { skip });

/**
 * The keys of the store with `prefix`: `{prefix:...` (hash-tagged body and
 * account keys) and `prefix:...` (token index). Not `*prefix*`: a random
 * token of another test could hold those letters.
 */
async function storeKeys(client: { keys(pattern: string): Promise<string[]> }, prefix: string): Promise<string[]> {
  return [...(await client.keys(`{${prefix}:*`)), ...(await client.keys(`${prefix}:*`))];
}

test('two replicas: a token put on one is leased on the other, byte-identical, once', { skip }, async (t) => {
  const a = await storeOn(t, { keyPrefix: 'pair' });
  const b = await storeOn(t, { keyPrefix: 'pair' });
  const table = sampleTable(11);
  const { token } = await a.put(table);
  const lease = await b.lease(token);
  const mine = await a.lease((await a.put(table)).token);
  assert.deepEqual(Buffer.from(lease.body.ipc), Buffer.from(mine.body.ipc), 'what B serves is what A would serve');
  assert.equal(await codeOf(a.lease(token)), 'S2SP_ERR_TOKEN_IN_FLIGHT');
  await lease.commit();
  await mine.commit();
  assert.equal(await codeOf(a.lease(token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
  assert.equal(await codeOf(b.lease(token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
});

test('two replicas putting the same table store one body (content-addressed)', { skip }, async (t) => {
  const a = await storeOn(t, { keyPrefix: 'dedup' });
  const b = await storeOn(t, { keyPrefix: 'dedup' });
  // Two different Table objects with the same content, one per replica (each replica reads the same file).
  await a.put(sampleTable(12));
  await b.put(sampleTable(12));
  const stats = await a.stats();
  assert.equal(stats.entries, 2);
  assert.equal(stats.bodies, 1);
  assert.equal(stats.bytes, bodyBytesOf(sampleTable(12)));
});

test('concurrent leases from three replicas: exactly one wins', { skip }, async (t) => {
  const stores = [await storeOn(t, { keyPrefix: 'race' }), await storeOn(t, { keyPrefix: 'race' }), await storeOn(t, { keyPrefix: 'race' })];
  const { token } = await stores[0].put(sampleTable(13));
  const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => stores[i % 3].lease(token)));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  for (const r of results) if (r.status === 'rejected') assert.equal(r.reason.code, 'S2SP_ERR_TOKEN_IN_FLIGHT');
});

test('Redis holds no token, only its SHA-256, and a body sits in chunks under one hash tag', { skip }, async (t) => {
  const store = await storeOn(t, { keyPrefix: 'layout', chunkBytes: 1024 });
  const client = await inspector(t);
  const table = sampleTable(14);
  const { token } = await store.put(table);
  const keys = await storeKeys(client, 'layout');
  assert.ok(keys.length > 3, keys.join(' '));
  for (const key of keys) {
    assert.ok(!key.includes(token), `key ${key} holds the token`);
    const type = await client.type(key);
    if (type === 'string') assert.ok(!(await client.get(key))!.includes(token), `value of ${key} holds the token`);
  }
  assert.ok(
    keys.some((k) => k.includes(tokenHashOf(token))),
    'the token hash names its keys',
  );
  const chunks = keys.filter((k) => /:c:\d+$/.test(k));
  assert.equal(chunks.length, Math.ceil(bodyBytesOf(table) / 1024));
  const tags = new Set(keys.filter((k) => k.startsWith('{layout:b:')).map((k) => k.slice(0, k.indexOf('}') + 1)));
  assert.equal(tags.size, 1, 'every key of the body under one hash tag');
  for (const chunk of chunks) assert.ok((await client.strLen(chunk)) <= 1024);
  const lease = await store.lease(token);
  assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(table));
  await lease.commit();
  assert.deepEqual(await storeKeys(client, 'layout'), [], 'consuming the last token removes every key');
});

test('TTL expiry leaves Redis as it was before the put: keys and used memory', { skip }, async (t) => {
  const client = await inspector(t);
  const store = await storeOn(t, { keyPrefix: 'ttl' });
  // Warm up (scripts loaded, connections made), so the baseline holds everything but the body.
  await (await store.lease((await store.put(sampleTable(15))).token)).commit();
  const used = async () => Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
  const baseKeys = await client.dbSize();
  const baseMemory = await used();
  const big = tableFromRows(Array.from({ length: 200_000 }, (_, i) => ({ id: i, label: `label ${i}`, x: i / 3 })));
  const bytes = bodyBytesOf(big);
  await store.put(big, { ttlMs: 300 });
  await store.put(big, { ttlMs: 400 });
  assert.ok((await client.dbSize()) > baseKeys);
  assert.ok((await used()) - baseMemory > bytes * 0.9, 'the body is in Redis');
  // This store's keys only: other tests' keys on the same server may expire meanwhile.
  await eventually(async () => (await storeKeys(client, 'ttl')).length === 0, 10_000, 'every key expired');
  // One-sided: other tests' expiring keys can only lower used_memory; a body left behind raises it.
  // Waited for, not read once: Redis shrinks a connection's grown query buffer only after 2 s idle.
  let after = 0;
  await eventually(
    async () => {
      after = await used();
      return after - baseMemory < 256 * 1024;
    },
    10_000,
    'used_memory back near its baseline',
  ).catch(() => assert.fail(`used_memory ${baseMemory} before, ${after} after (body ${bytes} bytes)`));
  assert.deepEqual(await storeKeys(client, 'ttl'), []);
});

test('a store-wide budget across replicas: S2SP_ERR_CACHE_FULL, never a Redis error', { skip }, async (t) => {
  const budget = bodyBytesOf(sampleTable(16)) + bodyBytesOf(sampleTable(17)) + 10;
  const a = await storeOn(t, { keyPrefix: 'budget', maxBytes: budget });
  const b = await storeOn(t, { keyPrefix: 'budget', maxBytes: budget });
  await a.put(sampleTable(16));
  await b.put(sampleTable(17));
  assert.equal(await codeOf(a.put(sampleTable(18))), 'S2SP_ERR_CACHE_FULL');
  assert.equal(await codeOf(b.put(sampleTable(18))), 'S2SP_ERR_CACHE_FULL');
});

test('Redis out of memory (maxmemory, noeviction) is S2SP_ERR_CACHE_FULL, not a 500', { skip }, async (t) => {
  const small = await startRedisServer();
  t.after(() => small.stop());
  const admin = createClient({ url: small.url });
  await admin.connect();
  await admin.configSet({ maxmemory: '3mb', 'maxmemory-policy': 'noeviction' });
  await admin.close();
  const store = new RedisStore({ url: small.url, maxBytes: 1024 ** 3 });
  t.after(() => store.close());
  await store.ready();
  const big = tableFromRows(Array.from({ length: 300_000 }, (_, i) => ({ id: i, label: `label ${i}` })));
  assert.equal(await codeOf(store.put(big)), 'S2SP_ERR_CACHE_FULL');
  const inspect = createClient({ url: small.url });
  inspect.on('error', () => {}); // the server may stop before this client closes
  await inspect.connect();
  t.after(() => inspect.close().catch(() => inspect.destroy()));
  await eventually(
    async () => (await inspect.keys('{s2sp:b:*')).length === 0 && (await store.stats()).bytes === 0,
    5000,
    'the partial body removed and no longer counted',
  );
  // Redis still answers, and a small body fits.
  const { token } = await store.put(sampleTable(19));
  assert.equal(await store.has(token), true);
});

test('a replica keeps a bounded local copy of what it pulled, and serves it without Redis', { skip }, async (t) => {
  const a = await storeOn(t, { keyPrefix: 'local' });
  const b = await storeOn(t, { keyPrefix: 'local', localMaxBytes: bodyBytesOf(sampleTable(20)) + 100 });
  const first = await a.put(sampleTable(20));
  const second = await a.put(sampleTable(20));
  await (await b.lease(first.token)).release();
  assert.equal((await b.stats()).localBytes, bodyBytesOf(sampleTable(20)));
  const again = await b.lease(first.token);
  const other = await b.lease(second.token);
  assert.equal(again.body.ipc.buffer, other.body.ipc.buffer, 'one local copy for both tokens');
  await again.commit();
  await other.commit();
  // Another body does not fit beside it: the least recently used one goes.
  const third = await a.put(sampleTable(21));
  await (await b.lease(third.token)).commit();
  assert.ok((await b.stats()).localBytes! <= bodyBytesOf(sampleTable(20)) + 100);
});

test('Redis down: S2SP_ERR_STORE_UNAVAILABLE at once, nothing crashes, and the store works again when Redis is back', { skip }, async (t) => {
  const own = await startRedisServer();
  t.after(() => own.stop());
  const errors: Error[] = [];
  const store = new RedisStore({ url: own.url, commandTimeoutMs: 2000 });
  store.observe((event) => event.type === 'connection-error' && errors.push(event.error));
  t.after(() => store.close());
  await store.ready();
  const { token } = await store.put(sampleTable(22));
  await takeRedisDown(own);
  const started = Date.now();
  assert.equal(await codeOf(store.put(sampleTable(23))), 'S2SP_ERR_STORE_UNAVAILABLE');
  assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_STORE_UNAVAILABLE');
  assert.equal(await codeOf(store.has(token)), 'S2SP_ERR_STORE_UNAVAILABLE');
  assert.equal(await codeOf(store.stats()), 'S2SP_ERR_STORE_UNAVAILABLE');
  assert.ok(Date.now() - started < 2000, 'fails fast, not after a queue or a timeout');
  await own.restart();
  await eventually(async () => (await codeOf(store.stats())) === undefined, 10_000, 'reconnected');
  // Persistence is off: the restarted Redis is empty, so the old token is gone, and new ones work.
  assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
  const fresh = await store.put(sampleTable(22));
  const lease = await store.lease(fresh.token);
  assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(sampleTable(22)));
  await lease.commit();
  assert.ok(errors.length > 0, 'connection errors reached the observers');
});

test(
  'a Redis that stops answering with its connection open (SIGSTOP): every call is S2SP_ERR_STORE_UNAVAILABLE within its deadline, and works after SIGCONT',
  { skip },
  async (t) => {
    const { redis: own, store, deadlineMs } = await stallingRedis(t);
    const { token } = await store.put(sampleTable(25));
    own.pause();
    t.after(() => own.resume());
    // Several calls at once: those queued behind the first stuck command end with it, not after it.
    const started = Date.now();
    const calls = { put: store.put(sampleTable(26)), lease: store.lease(token), has: store.has(token), stats: store.stats() };
    for (const [name, call] of Object.entries(calls)) {
      assert.equal(await codeOf(call), 'S2SP_ERR_STORE_UNAVAILABLE', name);
      assert.ok(Date.now() - started < 3 * deadlineMs, `${name} answered after ${Date.now() - started} ms, past 3x the ${deadlineMs} ms deadline`);
    }
    // Later calls, while Redis still answers nothing, fail as fast.
    for (const [name, call] of [
      ['put', () => store.put(sampleTable(27))],
      ['stats', () => store.stats()],
    ] as const) {
      const at = Date.now();
      assert.equal(await codeOf(call()), 'S2SP_ERR_STORE_UNAVAILABLE', `${name} again`);
      assert.ok(Date.now() - at < 3 * deadlineMs, `${name} again answered after ${Date.now() - at} ms`);
    }
    own.resume();
    await eventually(async () => (await codeOf(store.stats())) === undefined, 10_000, 'answering again after SIGCONT');
    const fresh = await store.put(sampleTable(26));
    const lease = await store.lease(fresh.token);
    assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(sampleTable(26)));
    assert.equal(await lease.commit(), true);
    // The first token was never consumed: its lease (if the stuck one ran after all) ends with its timeout.
    assert.equal(await store.has(token), true);
  },
);

test('a replica started while Redis is down works once Redis is up', { skip }, async (t) => {
  const own = await startRedisServer();
  await takeRedisDown(own);
  t.after(() => own.stop());
  const store = new RedisStore({ url: own.url });
  t.after(() => store.close());
  assert.equal(await codeOf(store.put(sampleTable(24))), 'S2SP_ERR_STORE_UNAVAILABLE');
  await own.restart();
  await store.ready(10_000);
  const { token } = await store.put(sampleTable(24));
  assert.equal(await store.has(token), true);
});

test('invalid options are S2SP_ERR_OPTION_INVALID', { skip }, () => {
  for (const options of [{ ttlMs: 0 }, { maxBytes: -1 }, { leaseTimeoutMs: NaN }, { chunkBytes: 0 }]) {
    assert.throws(() => new RedisStore({ url: 'redis://127.0.0.1:1', ...options }), { code: 'S2SP_ERR_OPTION_INVALID' }, JSON.stringify(options));
  }
  assert.throws(() => new RedisStore({ url: 'http://127.0.0.1:1' }), { code: 'S2SP_ERR_OPTION_INVALID' });
});
