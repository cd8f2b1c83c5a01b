/**
 * `s2sp serve [FILE]`: serves one table as the resource tool `read_table`
 * (SPEC 2.1). Without FILE it serves the bundled USGS earthquakes feed.
 */
import { basename } from 'node:path';
import type { Table } from 'apache-arrow';
import { RedisStore } from '../cache/redis-store.js';
import { describeStoreSpec, storeFromSpec } from '../cache/store-from-spec.js';
import { S2SPServer } from '../server/s2sp-server.js';
import type { PrepareOption } from '../data/body-preparation.js';
import { dataColumns } from '../control/envelope.js';
import { defaultDatasetPath } from './default-dataset.js';
import { exposeFullGc } from './full-gc.js';
import { readTableFile } from './input/read-table-file.js';
import { listenForTransport, listenOptions, metricsRegistryFor, type TransportFlags } from './transport-flags.js';

/** Flags of `s2sp serve`. */
export interface ServeFlags extends TransportFlags {
  file?: string;
  tool: string;
  ttlSeconds?: number;
  /** `memory` (default), a redis:// / rediss:// URL, or a redis-cluster:// / rediss-cluster:// one: where bodies are cached. */
  store?: string;
  /** Seconds a transfer's lease lasts without renewal (default 30). */
  leaseTimeoutSeconds?: number;
  /** Deadline of each command to a shared store (Redis) in seconds (default 5). */
  storeTimeoutSeconds?: number;
  /** Abstract rows per envelope (default 1,000). */
  abstractLimit?: number;
  /** What idle workers prepare after each put (default 'auto'). */
  prepare?: PrepareOption;
}

/** The description of the table tool: what it holds and which columns it has. */
export function describeTable(source: string, table: Table): string {
  return (
    `Reads the table ${source} (${table.numRows} rows). Columns: ${dataColumns(table).join(', ')}. ` +
    'Pass abstract_domains to receive only those columns plus _row_id; the rest stays on the server behind resource_url.'
  );
}

/** Builds the server for `s2sp serve` (exported for tests). */
export async function createServeServer(flags: ServeFlags, log: (line: string) => void): Promise<S2SPServer> {
  const path = flags.file ?? defaultDatasetPath();
  const { table } = await readTableFile(path, { onProgress: log });
  const source = flags.file === undefined ? 'USGS earthquakes (vega-datasets earthquakes.json)' : basename(path);
  const spec = flags.store ?? 'memory';
  let lastError = '';
  // The process is ours: the store collects dropped bodies with it, the data plane after a preparation.
  const fullGc = exposeFullGc();
  const store = storeFromSpec(spec, {
    ttlMs: flags.ttlSeconds === undefined ? undefined : flags.ttlSeconds * 1000,
    leaseTimeoutMs: flags.leaseTimeoutSeconds === undefined ? undefined : flags.leaseTimeoutSeconds * 1000,
    commandTimeoutMs: flags.storeTimeoutSeconds === undefined ? undefined : flags.storeTimeoutSeconds * 1000,
    fullGc,
  });
  store.observe?.((event) => {
    // One line per distinct failure: a reconnect loop repeats the same error every second.
    if (event.type !== 'connection-error' || event.error.message === lastError) return;
    lastError = event.error.message;
    log(`s2sp serve: store ${describeStoreSpec(spec)}: ${event.error.message}`);
  });
  if (store instanceof RedisStore) {
    await store.ready().then(
      () => log(`s2sp serve: store ${describeStoreSpec(spec)} connected`),
      () => log(`s2sp serve: store ${describeStoreSpec(spec)} not reachable yet; tool calls and fetches fail with S2SP_ERR_STORE_UNAVAILABLE until it is`),
    );
  }
  const server = new S2SPServer({
    ...listenOptions('s2sp-serve', flags),
    store,
    tools: { abstractRowLimit: flags.abstractLimit },
    dataPlane: { prepare: flags.prepare, fullGc },
    registry: await metricsRegistryFor(flags),
  });
  // The file's rows as the tool returns them: without the `_row_id` the reader added, so a plain
  // MCP call answers the rows themselves (SPEC 2.1); S2SP calls add ids again, without copying.
  const rows = table.select(dataColumns(table));
  server.resourceTool(flags.tool, { title: `Read ${source}`, description: describeTable(source, table) }, () => rows);
  log(`s2sp serve: ${source}: ${table.numRows} rows x ${dataColumns(table).length} columns as tool ${flags.tool}`);
  return server;
}

/** Runs `s2sp serve` until the transport closes. */
export async function runServe(flags: ServeFlags, log: (line: string) => void): Promise<S2SPServer> {
  const server = await createServeServer(flags, log);
  await listenForTransport(server, flags, log);
  return server;
}
