/**
 * One replica of a resource server on a shared RedisStore, as its own process
 * (bench/redis-store.ts starts two): a fastify app with the `s2spDataPlane`
 * plugin over a RedisStore, the generated table built once, and IPC ops to
 * put that table (mint tokens) and read the store's figures. Started by
 * bench/lib/server-child.ts with a JSON config as its only argument.
 */
import Fastify from 'fastify';
import { RedisStore } from '../../src/cache/redis-store.js';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { benchTable } from '../lib/bench-table.js';
import { collectGarbage, handle, installProbe, ready } from './probe.js';

/** The config the parent passes. */
export interface RedisReplicaConfig {
  /** Rows of the generated body. */
  rows: number;
  /** The shared Redis. */
  url: string;
  /** Bytes of local body copies (tiny: every fetch pulls the body from Redis). */
  localMaxBytes?: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as RedisReplicaConfig;
const gc = (globalThis as { gc?: () => void }).gc;
const store = new RedisStore({ url: config.url, maxBytes: 16 * 2 ** 30, localMaxBytes: config.localMaxBytes, fullGc: gc });
await store.ready(10_000);
// The table a resource tool would return on every call: built once, kept.
const table = benchTable(config.rows);
collectGarbage();

const app = Fastify({ logger: false });
installProbe(app);
await app.register(s2spDataPlane, { store });

/** Puts the table `count` times; returns the tokens. */
handle('put', async ({ count }) => {
  const tokens: string[] = [];
  for (let i = 0; i < Number(count ?? 1); i++) tokens.push((await store.put(table)).token);
  return tokens;
});
/** Puts (and returns the token of) a small other table: warms scripts and connections without touching the body. */
handle('put-small', async () => (await store.put(tableFromRows([{ warm: 1 }]))).token);
handle('store-stats', () => store.stats());

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
ready({ port: typeof address === 'object' && address !== null ? address.port : 0 });
