/**
 * Think-time preparation (src/data/body-preparation.ts): idle workers encode
 * a body after its put, the fetch sends those bytes, and every reason to
 * stop (another form, the token's end, memory pressure) stops it.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { tableFromArrays, type Table } from 'apache-arrow';
import { MemoryStore } from '../../src/cache/memory-store.js';
import type { CachedBody, StoreEvent } from '../../src/cache/body-store.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { redisSkipReason, startRedisServer } from '../support/redis-server.js';
import { BodyPreparation, formOf, type PreparationHost, type PreparedForm } from '../../src/data/body-preparation.js';
import { EncodedBatchCache } from '../../src/data/encoded-batch-cache.js';
import { isS2SPError } from '../../src/errors.js';
import { NEEDS_LZ4, registerArrowDecoder } from '../support/arrow-streams.js';
import { ARROW_LZ4, ok, startPlane } from '../support/data-plane-harness.js';
import { countingPool } from '../support/counting-pool.js';

/** Three whole stored batches (65,536 rows each) and a short fourth. */
const ROWS = 3 * 65_536 + 100;

function bigTable(): Table {
  const f = new Float64Array(ROWS);
  const i = new Int32Array(ROWS);
  const s: string[] = [];
  for (let r = 0; r < ROWS; r++) {
    f[r] = r / 7;
    i[r] = r * 3;
    s.push(`s${r % 97}`);
  }
  return tableFromArrays({ f, i, s });
}

/**
 * A plane that prepares `forms` (its pool counts tasks) beside one that does
 * not, and a big body put on the first (its token).
 */
async function preparedBesidePlain(t: TestContext, forms: PreparedForm[]) {
  const counted = countingPool(t);
  const prepared = await startPlane(t, { workers: counted.pool, prepare: forms });
  const plain = await startPlane(t, { workers: 2, prepare: 'off' });
  const table = bigTable();
  const token = (await prepared.store.put(table)).token;
  /** The same body fetched from the plane that prepares nothing. */
  const reference = async (request: object, headers?: Record<string, string>) => ok(await plain.post((await plain.store.put(table)).token, request, headers));
  return { ...counted, prepared, token, reference };
}

test('a body prepared as JSON in think time: idle workers encode it after the put, and its fetch sends those bytes, the same as an unprepared fetch', async (t) => {
  const { background, foreground, prepared, token, reference } = await preparedBesidePlain(t, ['json']);
  assert.equal(background.length, 4, 'one background task per stored batch, handed over at the put');
  await Promise.all(background);
  const before = foreground();
  const answer = ok(await prepared.post(token, {}));
  assert.equal(foreground(), before, 'the fetch encoded nothing itself');
  assert.ok(answer.bytes.equals((await reference({})).bytes), 'byte for byte the unprepared answer');
});

test('a body prepared as LZ4: a projection fetched in LZ4 is made of the prepared column buffers', NEEDS_LZ4, async (t) => {
  registerArrowDecoder('lz4');
  const { background, foreground, prepared, token, reference } = await preparedBesidePlain(t, ['lz4']);
  await Promise.all(background);
  const before = foreground();
  const answer = ok(await prepared.post(token, { columns: ['s', 'f'] }, { accept: ARROW_LZ4 }));
  assert.equal(foreground(), before, 'nothing compressed during the fetch');
  assert.ok(answer.bytes.equals((await reference({ columns: ['s', 'f'] }, { accept: ARROW_LZ4 })).bytes), 'byte for byte the unprepared answer');
});

test("the embedder's collector runs once a preparation is done, not before; a fullGc that is no function is refused", async (t) => {
  const counted = countingPool(t);
  let collections = 0;
  let collected!: () => void;
  const done = new Promise<void>((resolve) => (collected = resolve));
  const fullGc = () => {
    collections++;
    collected();
  };
  const prepared = await startPlane(t, { workers: counted.pool, prepare: ['json'], fullGc });
  await prepared.store.put(bigTable());
  assert.equal(counted.background.length, 4);
  assert.equal(collections, 0, 'nothing collected while the workers still encode');
  await Promise.all(counted.background);
  await done;
  assert.equal(collections, 1);
  await assert.rejects(
    startPlane(t, { fullGc: 'yes' as unknown as () => void }),
    (error) => isS2SPError(error, 'S2SP_ERR_OPTION_INVALID') && /fullGc/.test((error as Error).message),
  );
});

test('a fetch that finds its form still being prepared waits for it instead of encoding again', async (t) => {
  const { background, foreground, prepared, token, reference } = await preparedBesidePlain(t, ['json']);
  const answer = ok(await prepared.post(token, {})); // at once: no think time
  assert.equal(background.length, 4);
  assert.equal(foreground(), 0, 'every batch came from the preparation');
  assert.ok(answer.bytes.equals((await reference({})).bytes));
});

/**
 * Resolves once `signal` aborts. Holds the event loop open meanwhile: the
 * timers that end a token (its TTL) are unref'd, as a server keeps running anyway.
 */
async function aborted(signal: AbortSignal): Promise<void> {
  const alive = setInterval(() => {}, 60_000);
  try {
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  } finally {
    clearInterval(alive);
  }
}

/** A host that records what it is asked to prepare, and the signals that stop it. */
function recordingHost(cache = new EncodedBatchCache()) {
  const asked: Array<{ body: CachedBody; form: PreparedForm; signal: AbortSignal }> = [];
  const host: PreparationHost = {
    can: true,
    // Runs until stopped, as a real preparation of a big body would still be running.
    prepare: async (body, form, signal) => {
      asked.push({ body, form, signal });
      await aborted(signal);
    },
    signalFor: (body) => cache.signalFor(body),
    drop: () => {},
  };
  return { host, asked, cache };
}

test(
  'a JSON fetch stops an LZ4 preparation whose compressions wait for the one thread, and completes (encoded-batch-cache.test.ts has the unit regression)',
  { timeout: 60_000 },
  async (t) => {
    const { pool, background } = countingPool(t, 1);
    const prepared = await startPlane(t, { workers: pool, prepare: ['lz4'] });
    const token = (await prepared.store.put(bigTable())).token;
    assert.ok(background.length > 1, 'compressions wait for the one thread');
    const answer = ok(await prepared.post(token, {})); // JSON: the LZ4 preparation stops
    assert.equal(answer.json().total_rows, ROWS);
    await Promise.all(background);
  },
);

test('a fetch in another form stops the preparation of the others; the token consumed stops the rest', async (t) => {
  const store = new MemoryStore();
  t.after(() => store.close());
  const { host, asked } = recordingHost();
  const preparation = BodyPreparation.start(store, ['json', 'lz4'], host)!;
  t.after(() => preparation.stop());
  const { token } = await store.put(bigTable());
  assert.deepEqual(
    asked.map((a) => a.form),
    ['lz4', 'json'],
  );
  const [lz4, json] = asked;
  const lease = await store.lease(token);
  preparation.fetching(lease.body, 'lz4');
  assert.equal(json.signal.aborted, true, 'JSON stopped: the fetch wants LZ4');
  assert.equal(lz4.signal.aborted, false, 'LZ4 goes on: the fetch uses it');
  await lease.commit();
  await aborted(lz4.signal); // the token is consumed: nothing will fetch the body any more
});

test('a token that expires or is revoked before its fetch stops its preparation', async (t) => {
  const store = new MemoryStore({ ttlMs: 50 });
  t.after(() => store.close());
  const { host, asked } = recordingHost();
  const preparation = BodyPreparation.start(store, ['json'], host)!;
  t.after(() => preparation.stop());
  await store.put(bigTable());
  await aborted(asked[0].signal);
  const { token } = await store.put(bigTable(), { ttlMs: 60_000 });
  assert.equal(asked[1].signal.aborted, false);
  await store.delete(token);
  assert.equal(asked[1].signal.aborted, true);
});

test("'auto' prepares the forms the last fetches of the same origin were answered in, and nothing for an origin never fetched", async (t) => {
  const store = new MemoryStore();
  t.after(() => store.close());
  const { host, asked } = recordingHost();
  const preparation = BodyPreparation.start(store, 'auto', host)!;
  t.after(() => preparation.stop());
  const first = await store.put(bigTable(), { origin: 'orders' });
  assert.equal(asked.length, 0, 'nothing fetched yet: nothing to follow');
  const lease = await store.lease(first.token);
  preparation.fetching(lease.body, formOf({ kind: 'arrow', codec: 'zstd' }, {}));
  await lease.commit();
  await store.put(bigTable(), { origin: 'orders' });
  assert.deepEqual(
    asked.map((a) => a.form),
    ['zstd'],
  );
  await store.put(bigTable(), { origin: 'customers' });
  assert.equal(asked.length, 1, 'another origin has no history');
});

test('formOf: only whole-body fetches have a prepared form', () => {
  assert.equal(formOf({ kind: 'json' }, {}), 'json');
  assert.equal(formOf({ kind: 'json' }, { columns: ['a'] }), 'none');
  assert.equal(formOf({ kind: 'arrow', codec: 'lz4' }, { columns: ['a'] }), 'lz4');
  assert.equal(formOf({ kind: 'arrow', codec: 'lz4' }, { sortedIds: [1, 2] }), 'none');
  assert.equal(formOf({ kind: 'arrow' }, {}), 'none');
});

test('prepare option: anything but off, auto or a list of known forms is refused', async (t) => {
  const store = new MemoryStore();
  t.after(() => store.close());
  const { host } = recordingHost();
  for (const bad of ['on', ['gzip'], 'json', 3, { json: true }]) {
    assert.throws(
      () => BodyPreparation.start(store, bad, host),
      (error) => isS2SPError(error, 'S2SP_ERR_OPTION_INVALID'),
      String(bad),
    );
  }
  assert.equal(BodyPreparation.start(store, 'off', host), undefined);
  assert.equal(BodyPreparation.start(store, ['json'], { ...host, can: false }), undefined, 'no workers or no cache: nothing to prepare with');
});

test('prepared bytes count in the store budget: a put short of room takes them back, and the body preparing stops', async (t) => {
  const table = bigTable();
  const probe = new MemoryStore();
  await probe.put(table);
  const bodyBytes = (await probe.stats()).bytes;
  await probe.close();
  const store = new MemoryStore({ maxBytes: 2 * bodyBytes + 1000 });
  t.after(() => store.close());
  const cache = new EncodedBatchCache();
  cache.shareBudgetOf(store);
  const prepared = { id: 'prepared-body' };
  const signal = cache.signalFor(prepared);
  await cache.jsonBatch(prepared, 0, async () => new Uint8Array(bodyBytes), new AbortController().signal);
  assert.equal((await store.stats()).sharedBytes, bodyBytes, 'the kept batch is in the budget');
  await store.put(table);
  assert.equal(cache.stats().bytes, bodyBytes, 'one body and the prepared bytes fit together');
  await store.put(bigTable()); // a second body: only fits once the prepared bytes go
  assert.equal(cache.stats().bytes, 0);
  assert.equal((await store.stats()).sharedBytes, 0);
  assert.equal(signal.aborted, true, 'its preparation stops');
  // With the budget spent by bodies, nothing more is kept (served only), and the preparation stops.
  const other = { id: 'other-body' };
  const otherSignal = cache.signalFor(other);
  const bytes = await cache.jsonBatch(other, 0, async () => new Uint8Array(2000), new AbortController().signal);
  assert.equal(bytes.byteLength, 2000, 'served');
  assert.equal(cache.peekJson(other, 0, 1), undefined, 'not kept');
  assert.equal(otherSignal.aborted, true);
});

test(
  'with RedisStore, the replica that minted a token prepares its local copy, and the fetch there sends those bytes',
  { skip: redisSkipReason() },
  async (t) => {
    const redis = await startRedisServer();
    t.after(() => redis.stop());
    const store = new RedisStore({ url: redis.url });
    await store.ready();
    t.after(() => store.close());
    const minted: Array<StoreEvent & { type: 'minted' }> = [];
    store.observe((event) => void (event.type === 'minted' && minted.push(event)));
    const { pool, background, foreground } = countingPool(t);
    const prepared = await startPlane(t, { store, workers: pool, prepare: ['json'] });
    const plain = await startPlane(t, { workers: 2, prepare: 'off' });
    const table = bigTable();
    const token = (await store.put(table, { origin: 'orders' })).token;
    assert.equal(minted[0].origin, 'orders');
    assert.ok(minted[0].body !== undefined, "the event carries this replica's copy");
    assert.equal(background.length, 4);
    await Promise.all(background);
    const before = foreground();
    const answer = ok(await prepared.post(token, {}));
    assert.equal(foreground(), before, 'the fetch encoded nothing itself');
    assert.ok(answer.bytes.equals(ok(await plain.post((await plain.store.put(table)).token, {})).bytes));
  },
);
