/**
 * The s2sp side of the benchmarks, as its own process: a fastify app with
 * the `s2spDataPlane` plugin over a MemoryStore holding the generated table,
 * plus two bench-only routes on the same server:
 *
 * - `POST /bench/prebuilt`: the bytes of a captured s2sp response, sent from
 *   one Buffer (the physical limit of this HTTP stack for that many bytes);
 * - `POST /bench/bare/:name`: a small captured response, the same way (the
 *   bare-route baseline of small-requests).
 *
 * The store is s2sp/testing's `multiUseMemoryStore`: BENCH-ONLY, so one token can
 * be fetched again and again. A plane with `freshStore` serves a single-use
 * store instead, whose tokens (`mint-fresh`) all point at one copy of the
 * body: the real workload, one fresh token per request, without a put per
 * request. Started by bench/lib/server-child.ts with a JSON config as its
 * only argument.
 */
import { readFileSync } from 'node:fs';
import type { Table } from 'apache-arrow';
import Fastify from 'fastify';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import type { PrepareOption } from '../../src/data/body-preparation.js';
import { multiUseMemoryStore } from '../../src/testing.js';
import { benchTable } from '../lib/bench-table.js';
import { collectGarbage, handle, installProbe, ready } from './probe.js';

/** The config the parent passes. */
export interface S2spServerConfig {
  /** Rows of the generated body. */
  rows: number;
  /** Tokens to mint (default 1); they share one cached body (one Table put again is stored once). */
  tokens?: number;
  /**
   * Data planes to mount, each with its own prefix and worker setting (default: one, no prefix,
   * default workers); `encodedCache: 0` turns off its cache of encoded batches; `coldStore`
   * serves a single-use store of its own that `mint-cold` fills, `freshStore` the single-use store
   * that `mint-fresh` fills, instead of the multi-use one; `prepare` is the plane's think-time
   * preparation (default: the library's).
   */
  planes?: Array<{ prefix: string; workers?: number; encodedCache?: number; coldStore?: boolean; freshStore?: boolean; prepare?: PrepareOption }>;
  /** Record each request's server time (scattered). */
  timings?: boolean;
}

const config = JSON.parse(process.argv[2] ?? '{}') as S2spServerConfig;
const tokenCount = config.tokens ?? 1;
const planes = config.planes ?? [{ prefix: '' }];

const started = performance.now();
let table: Table | undefined = benchTable(config.rows);
const store = multiUseMemoryStore({ maxBytes: 16 * 2 ** 30 });
// Single use (the real setting): each `mint-cold` token is a fresh body, gone after its one fetch.
// One store per cold plane, so each plane prepares only the bodies minted for it.
const coldStores = new Map(planes.filter((p) => p.coldStore).map((p) => [p.prefix, new MemoryStore({ maxBytes: 16 * 2 ** 30 })]));
const tokens: string[] = [];
for (let i = 0; i < tokenCount; i++) tokens.push((await store.put(table)).token);
// Single use, one shared body: every `mint-fresh` token points at the copy this never-fetched
// anchor token keeps alive (without it the body would be freed with the last consumed token).
const freshStore = new MemoryStore({ maxBytes: 16 * 2 ** 30 });
let freshBody: Table | undefined;
const outstanding: string[] = [];
if (planes.some((p) => p.freshStore)) {
  const lease = await store.lease(tokens[0]);
  freshBody = lease.body.table;
  await freshStore.put(freshBody);
  await lease.release();
}
// Only the store's shared-memory copies stay: drop the rows' table before measuring anything.
table = undefined;
collectGarbage();
const setupSeconds = (performance.now() - started) / 1000;

const app = Fastify({ logger: false });
installProbe(app, { timings: config.timings }); // root hook first: it times every route below
for (const plane of planes) {
  await app.register(s2spDataPlane, {
    store: plane.coldStore ? coldStores.get(plane.prefix)! : plane.freshStore ? freshStore : store,
    prefix: plane.prefix,
    ...(plane.workers === undefined ? {} : { workers: plane.workers }),
    ...(plane.prepare === undefined ? {} : { prepare: plane.prepare }),
    // As `s2sp serve` runs its plane: with the collector (this child runs under --expose-gc), run
    // after each preparation. (Its store's is left out: a 600 MB body dropped per fetch would
    // schedule collections into the next measurement.)
    fullGc: (globalThis as { gc?: () => void }).gc,
    ...(plane.encodedCache === undefined ? {} : { encodedCache: plane.encodedCache }),
  });
}

let prebuilt: { bytes: Buffer; type: string } | undefined;
const bare = new Map<string, { bytes: Buffer; type: string }>();
await app.register(async (bench) => {
  bench.post('/bench/prebuilt', async (_request, reply) => {
    if (prebuilt === undefined) return reply.code(503).send({ error: 'nothing prebuilt loaded' });
    return reply.type(prebuilt.type).send(prebuilt.bytes);
  });
  bench.post<{ Params: { name: string } }>('/bench/bare/:name', async (request, reply) => {
    const found = bare.get(request.params.name);
    if (found === undefined) return reply.code(404).send({ error: 'no such bare body' });
    return reply.type(found.type).send(found.bytes);
  });
});

/** Loads a captured response (saved by the client) to serve from /bench/prebuilt. */
handle('load-prebuilt', ({ file, type }) => {
  prebuilt = { bytes: readFileSync(String(file)), type: String(type) };
  return prebuilt.bytes.byteLength;
});
/**
 * Moves the prebuilt bytes to newly allocated memory (a copy; the old Buffer is left to the
 * collector), so the next send is of pages the kernel has not copied before, as a prepared
 * body's are.
 */
handle('prebuilt-to-new-memory', () => {
  if (prebuilt === undefined) throw new Error('nothing prebuilt loaded');
  prebuilt = { ...prebuilt, bytes: Buffer.from(prebuilt.bytes) };
  return prebuilt.bytes.byteLength;
});
handle('drop-prebuilt', () => {
  prebuilt = undefined;
  collectGarbage();
  return true;
});
/** Captures a small s2sp response in-process (app.inject) to serve from /bench/bare/<name>. */
handle('capture-bare', async ({ name, path, body, accept }) => {
  const response = await app.inject({
    method: 'POST',
    url: String(path),
    headers: { 'content-type': 'application/json', ...(accept ? { accept: String(accept) } : {}) },
    payload: String(body),
  });
  if (response.statusCode !== 200) throw new Error(`capture of ${name} answered ${response.statusCode}: ${response.body.slice(0, 200)}`);
  bare.set(String(name), { bytes: response.rawPayload, type: String(response.headers['content-type']) });
  return { bytes: response.rawPayload.byteLength, type: response.headers['content-type'] };
});
handle('store-stats', () => store.stats());
/** `count` fresh single-use tokens of the one shared body (a put of the same Table adds a token, not a copy). */
handle('mint-fresh', async ({ count }) => {
  if (freshBody === undefined) throw new Error('no plane serves the fresh store');
  const out: string[] = [];
  for (let i = 0; i < Number(count); i++) out.push((await freshStore.put(freshBody)).token);
  for (const token of out) outstanding.push(token); // not push(...out): a long run mints more than the stack holds
  return out;
});
/** Revokes every minted token a run left unused (consumed ones are gone already), keeping the anchor. */
handle('drop-fresh', async () => {
  let dropped = 0;
  for (const token of outstanding.splice(0, outstanding.length)) if (await freshStore.delete(token)) dropped++;
  return dropped;
});
handle('fresh-stats', () => freshStore.stats());
/**
 * A fresh copy of the body (a new body id, nothing encoded yet) behind a single-use token of the
 * cold store of plane `prefix` (default: the first cold plane's).
 */
handle('mint-cold', async ({ prefix } = {}) => {
  const coldStore = prefix === undefined ? coldStores.values().next().value : coldStores.get(String(prefix));
  if (coldStore === undefined) throw new Error(`no cold plane at ${String(prefix)}`);
  const lease = await store.lease(tokens[0]);
  try {
    return (await coldStore.put(lease.body.table)).token;
  } finally {
    await lease.release();
  }
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
ready({
  port: typeof address === 'object' && address !== null ? address.port : 0,
  tokens,
  singleUse: false,
  cachedBytes: (await store.stats()).bytes,
  setupSeconds,
  planes,
});
