import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { MemoryStore, type MemoryStoreOptions } from '../../src/cache/memory-store.js';
import { sharedIpcFromTable } from '../support/shared-ipc.js';
import { mintToken, redactToken, redactTokensInUrl } from '../../src/protocol/token.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { sampleTable, storeContract } from '../support/store-contract.js';
import { multiUseMemoryStore } from '../../src/testing.js';

/** The entry counters of a stats() answer (idleBytes, the pool's reserve, is checked in shared-memory-pool tests). */
function counts(stats: { entries: number; bytes: number; maxBytes: number }) {
  return { entries: stats.entries, bytes: stats.bytes, maxBytes: stats.maxBytes };
}

const rows = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `row ${i}`, value: i * 1.5 }));
const table = tableFromRows(rows);
const tableBytes = sharedIpcFromTable(table).byteLength;

type Evicted = string[];

/** A store closed after the test, with the tokens that left it recorded (consumed, expired, revoked). */
function storeFor(
  t: { after(fn: () => Promise<void>): void },
  options: MemoryStoreOptions = {},
  store = new MemoryStore(options),
): { store: MemoryStore; evicted: Evicted } {
  const evicted: Evicted = [];
  store.observe((event) => {
    if (event.type === 'consumed' || event.type === 'expired' || event.type === 'revoked') evicted.push(event.type);
  });
  t.after(() => store.close());
  return { store, evicted };
}

/**
 * Fake setTimeout and Date for one test (node:test restores both after it):
 * time moves only by `tick(ms)`, which runs the timers due, so TTL and lease
 * timeouts are reached exactly, however loaded the machine. Enable it before
 * the store is made: the store's timers must be fake ones.
 */
function fakeClock(t: TestContext): { tick(ms: number): void } {
  t.mock.timers.enable({ apis: ['Date', 'setTimeout'] });
  return t.mock.timers;
}

storeContract(
  'MemoryStore',
  async (t, options = {}) => {
    const store = new MemoryStore(options);
    t.after(() => store.close());
    return store;
  },
  { clock: 'fake' },
);

async function assertRejectsCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, { code });
}

test('lease gives the body; commit deletes the entry', async (t) => {
  const { store, evicted } = storeFor(t);
  const { token } = await store.put(table);
  assert.deepEqual(counts(await store.stats()), { entries: 1, bytes: tableBytes, maxBytes: 1024 ** 3 });
  const lease = await store.lease(token);
  assert.equal(lease.body.totalRows, 100);
  assert.equal(lease.body.byteLength, tableBytes);
  assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(table));
  await lease.commit();
  assert.equal(await store.has(token), false);
  assert.deepEqual(counts(await store.stats()), { entries: 0, bytes: 0, maxBytes: 1024 ** 3 });
  assert.deepEqual(evicted, ['consumed']);
  await assertRejectsCode(store.lease(token), 'S2SP_ERR_TOKEN_NOT_FOUND');
});

test('TTL expiry removes the entry and frees its bytes', async (t) => {
  const clock = fakeClock(t);
  const { store, evicted } = storeFor(t, { ttlMs: 30 });
  const { token } = await store.put(table);
  clock.tick(29);
  assert.equal(await store.has(token), true, 'live until its TTL');
  assert.equal((await store.stats()).bytes, tableBytes);
  assert.deepEqual(evicted, []);
  clock.tick(1);
  assert.equal(await store.has(token), false);
  assert.deepEqual(counts(await store.stats()), { entries: 0, bytes: 0, maxBytes: 1024 ** 3 });
  assert.deepEqual(evicted, ['expired']);
  await assertRejectsCode(store.lease(token), 'S2SP_ERR_TOKEN_NOT_FOUND');
});

for (const settle of ['commit', 'release'] as const) {
  test(`expiry while leased removes the entry when the lease ends (${settle})`, async (t) => {
    const clock = fakeClock(t);
    const { store, evicted } = storeFor(t, { ttlMs: 30 });
    const { token } = await store.put(table);
    const lease = await store.lease(token);
    clock.tick(30);
    assert.equal(await store.has(token), false, 'expired, even while in flight');
    await assertRejectsCode(store.lease(token), 'S2SP_ERR_TOKEN_NOT_FOUND');
    assert.equal((await store.stats()).entries, 1, 'the in-flight transfer still holds the body');
    assert.deepEqual(evicted, []);
    assert.equal(lease.body.table.numRows, 100);
    await lease[settle]();
    assert.deepEqual(counts(await store.stats()), { entries: 0, bytes: 0, maxBytes: 1024 ** 3 });
    assert.deepEqual(evicted, [settle === 'commit' ? 'consumed' : 'expired']);
  });
}

test('regression: a TTL over 2^31-1 ms does not expire at once, and still expires at its time', async (t) => {
  // setTimeout fires after 1 ms when the delay is over 2^31-1 ms; node:test's fake one does the same.
  const clock = fakeClock(t);
  const ttlMs = 30 * 24 * 3600 * 1000;
  const { store, evicted } = storeFor(t, { ttlMs });
  const { token } = await store.put(table);
  clock.tick(30);
  assert.equal(await store.has(token), true);
  assert.equal((await store.stats()).entries, 1);
  clock.tick(2 ** 31); // past the capped first timer, which armed another for the rest
  assert.equal(await store.has(token), true);
  assert.deepEqual(evicted, []);
  clock.tick(ttlMs - 30 - 2 ** 31);
  assert.equal(await store.has(token), false);
  assert.equal((await store.stats()).entries, 0);
  assert.deepEqual(evicted, ['expired']);
});

test('multiUseMemoryStore (s2sp/testing) keeps the entry after commit', async (t) => {
  const { store, evicted } = storeFor(t, {}, multiUseMemoryStore());
  const { token } = await store.put(table);
  for (let i = 0; i < 3; i++) await (await store.lease(token)).commit();
  assert.equal(await store.has(token), true);
  assert.deepEqual(evicted, []);
});

test('close() empties the store and refuses new puts', async (t) => {
  const { store, evicted } = storeFor(t);
  const a = await store.put(table);
  const b = await store.put(table);
  const lease = await store.lease(b.token);
  await store.close();
  assert.deepEqual(counts(await store.stats()), { entries: 0, bytes: 0, maxBytes: 1024 ** 3 });
  assert.deepEqual(evicted, [], 'closing consumes and revokes nothing');
  await assertRejectsCode(store.lease(a.token), 'S2SP_ERR_TOKEN_NOT_FOUND');
  await assertRejectsCode(store.put(table), 'S2SP_ERR_CACHE_CLOSED');
  await lease.commit(); // settling a lease of a closed store is harmless
  assert.deepEqual(counts(await store.stats()), { entries: 0, bytes: 0, maxBytes: 1024 ** 3 });
});

test('the cached body is SharedArrayBuffer-backed IPC, and the table maps it', async (t) => {
  const { store } = storeFor(t);
  const { token } = await store.put(table);
  const lease = await store.lease(token);
  t.after(() => lease.release());
  assert.ok(lease.body.ipc.buffer instanceof SharedArrayBuffer);
  assert.equal(lease.body.ipc.byteLength, tableBytes);
  const idColumn = lease.body.table.batches[0].data.children[1];
  assert.equal(idColumn.values.buffer, lease.body.ipc.buffer, 'column buffers are views over the shared IPC, not copies');
});

test('the same Table put again is not encoded again: both tokens map one shared buffer', async (t) => {
  const { store } = storeFor(t);
  const a = await store.lease((await store.put(table)).token);
  const b = await store.lease((await store.put(table)).token);
  assert.equal(a.body.ipc, b.body.ipc);
  assert.equal(a.body.id, b.body.id);
  await a.commit();
  await b.commit();
});

test('a body whose tokens went while a timed-out lease still streams it is not handed to the next body', async (t) => {
  const clock = fakeClock(t);
  const { store } = storeFor(t, { leaseTimeoutMs: 20 });
  const { token } = await store.put(table);
  const stale = await store.lease(token);
  const before = rowsFromTable(stale.body.table);
  clock.tick(19);
  await assertRejectsCode(store.lease(token), 'S2SP_ERR_TOKEN_IN_FLIGHT');
  clock.tick(1); // the lease timeout: the lease ends by itself, unsettled
  await (await store.lease(token)).release(); // the timed-out lease no longer holds the token
  assert.equal(await store.delete(token), true);
  assert.equal((await store.stats()).bytes, 0, 'the body has no token left');
  const other = sampleTable(7);
  const next = await store.lease((await store.put(other)).token);
  assert.notEqual(next.body.ipc.buffer, stale.body.ipc.buffer, 'the stale transfer still reads its own bytes');
  assert.deepEqual(rowsFromTable(stale.body.table), before);
  await stale.commit();
  await next.commit();
});

test('invalid options are S2SP_ERR_OPTION_INVALID', () => {
  for (const options of [{ ttlMs: 0 }, { ttlMs: -1 }, { ttlMs: NaN }, { maxBytes: 0 }, { maxBytes: Infinity }, { leaseTimeoutMs: 0 }]) {
    assert.throws(() => new MemoryStore(options), { code: 'S2SP_ERR_OPTION_INVALID' }, JSON.stringify(options));
  }
});

test('redactToken and redactTokensInUrl never contain the full token', () => {
  const token = mintToken();
  assert.ok(!redactToken(token).includes(token));
  assert.ok(redactToken(token).length < 10);
  const urls = [
    `http://127.0.0.1:41234/s2sp/data/${token}`,
    `/s2sp/data/${token}?x=1`,
    `/s2sp/data/${token}/extra`,
    `/s2sp/data/${token}#frag`,
    `/s2sp/data//${token}`,
    `/prefix/s2sp/data/${token}x/s2sp/data/${token}`,
  ];
  for (const url of urls) {
    const redacted = redactTokensInUrl(url);
    assert.ok(!redacted.includes(token), redacted);
    assert.ok(redacted.includes('/s2sp/data/'), redacted);
  }
  assert.equal(redactTokensInUrl('/s2sp/health'), '/s2sp/health');
});

test('a pending TTL timer does not keep the process alive', async () => {
  const storeUrl = new URL('../../src/cache/memory-store.js', import.meta.url).href;
  const rowsUrl = new URL('../../src/table/table-from-rows.js', import.meta.url).href;
  const script = `
    const { MemoryStore } = await import(${JSON.stringify(storeUrl)});
    const { tableFromRows } = await import(${JSON.stringify(rowsUrl)});
    const store = new MemoryStore({ ttlMs: 3600000 });
    await store.put(tableFromRows([{ a: 1 }]));
    console.log('put done');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  assert.equal(signal, null, `the child had to be killed: ${output}`);
  assert.equal(code, 0, output);
  assert.match(output, /put done/);
});

test('multiUseMemoryStore (benchmarks only) allows concurrent transfers of one token and never consumes it', async () => {
  const store = multiUseMemoryStore();
  const { token } = await store.put(tableFromRows([{ a: 1 }]));
  const leases = await Promise.all([store.lease(token), store.lease(token), store.lease(token)]);
  for (const lease of leases) await lease.commit();
  assert.equal(await store.has(token), true);
  await store.close();
});

/** `table`'s batches as a stream, one batch of `per` rows at a time. */
function streamOf(source: typeof table, per: number) {
  async function* batches() {
    for (let start = 0; start < source.numRows; start += per) yield* source.slice(start, start + per).batches;
  }
  return Object.assign(batches(), { schema: source.schema });
}

test('putBatches caches a stream as put caches the whole table: same bytes, same rows, fetchable', async () => {
  const store = new MemoryStore();
  const streamed = await store.putBatches(streamOf(table, 30));
  assert.equal(streamed.table.numRows, 100);
  assert.deepEqual(rowsFromTable(streamed.table), rowsFromTable(table));
  assert.ok(streamed.expiresAt > Date.now());
  const lease = await store.lease(streamed.token);
  assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(table));
  assert.equal((await store.stats()).bytes, lease.body.byteLength);
  await lease.commit();
  assert.deepEqual(counts(await store.stats()), { entries: 0, bytes: 0, maxBytes: store.maxBytes });
  await store.close();
});

test('putBatches fails at the batch that outgrows the budget and gives its claim back', async () => {
  const store = new MemoryStore({ maxBytes: Math.floor(tableBytes * 1.5) });
  const first = await store.put(table);
  let pulled = 0;
  async function* counted() {
    for await (const batch of streamOf(table, 10)) {
      pulled++;
      yield batch;
    }
  }
  const error = await store.putBatches(Object.assign(counted(), { schema: table.schema })).catch((e: unknown) => e);
  assert.equal((error as { code?: string }).code, 'S2SP_ERR_CACHE_FULL');
  assert.ok(pulled < 10, `stopped early, after ${pulled} of 10 batches`);
  assert.deepEqual(counts(await store.stats()), { entries: 1, bytes: tableBytes, maxBytes: store.maxBytes });
  assert.ok(await store.has(first.token));
  await store.close();
});
