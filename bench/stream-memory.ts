/**
 * A benchmark probe, run as a child process (`node --expose-gc`): streams a big
 * result through a resource tool into the cache, then through a consumer
 * tool, sampling memory as the batches pass, and prints one JSON line.
 *
 *   node --expose-gc dist/bench/stream-memory.js <MB> [collect] [rows]
 *
 * `collect`: the store lacks putBatches, so the batches are gathered into a
 * Table first (what streaming avoids). `rows`: the consumer handler takes
 * merged rows instead of batches. `live`: a full collection before each
 * sample, caching and consuming, so the figures count what the cache and
 * the consumer still hold, not garbage the collector has yet to take
 * (Node 24's V8 leaves 90-145 MB of consumed batches' buffers for later;
 * Node 20 about 90-100; of the produced batches already cached, 50-160 MB).
 * test/hardening/stream-memory.test.ts runs it at 200 MB with `live` and
 * asserts the bounds; native-notes.md has the figures.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { tableFromArrays, type RecordBatch } from 'apache-arrow';
import type { BodyStore } from '../src/cache/body-store.js';
import { MemoryStore } from '../src/cache/memory-store.js';
import { S2SPServer } from '../src/server/s2sp-server.js';

const [mbText = '200', ...flags] = process.argv.slice(2);
const BATCH_ROWS = 65_536;
/** Two Float64 columns: 16 bytes a row (the cache adds 4 for _row_id). */
const ROW_BYTES = 16;
const totalRows = Math.floor((Number(mbText) * 1e6) / ROW_BYTES);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const live = flags.includes('live');

let peakRss = 0;
let peakHeap = 0;
let peakArrayBuffers = 0;
function sample(): void {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakArrayBuffers = Math.max(peakArrayBuffers, m.arrayBuffers);
}
function settle(): NodeJS.MemoryUsage {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  peakRss = m.rss;
  peakHeap = m.heapUsed;
  peakArrayBuffers = m.arrayBuffers;
  return m;
}

async function* produce(): AsyncGenerator<RecordBatch> {
  for (let start = 0; start < totalRows; start += BATCH_ROWS) {
    const n = Math.min(BATCH_ROWS, totalRows - start);
    const a = new Float64Array(n);
    const b = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      a[i] = start + i;
      b[i] = (start + i) * 0.5;
    }
    yield* tableFromArrays({ a, b }).batches;
    if (live) gc?.();
    sample();
  }
}

const memory = new MemoryStore({ maxBytes: 4 * 2 ** 30 });
// Without putBatches: the resource tool has to gather the batches into a Table for put().
const store: BodyStore = flags.includes('collect')
  ? {
      put: (t, o) => memory.put(t, o),
      lease: (t) => memory.lease(t),
      delete: (t) => memory.delete(t),
      has: (t) => memory.has(t),
      stats: () => memory.stats(),
      close: () => memory.close(),
      ttlMs: memory.ttlMs,
    }
  : memory;
const resource = new S2SPServer({ name: 'probe-resource', store, dataPlane: { workers: 0 } });
resource.resourceTool('big', { description: 'big' }, () => produce());
await resource.listen();
const consumer = new S2SPServer({ name: 'probe-consumer', tools: { consumer: { maxBodyBytes: 2 ** 31 - 1 } } });
let consumedRows = 0;
let sum = 0;
if (flags.includes('rows')) {
  consumer.consumerTool('load', { description: 'l' }, ({ rows }) => {
    sample();
    for (const row of rows) sum += row.b as number;
    consumedRows = rows.length;
    return { rows: rows.length };
  });
} else {
  consumer.consumerTool(
    'load',
    { description: 'l' },
    async ({ batches }) => {
      for await (const batch of batches) {
        const b = batch.getChild('b')?.toArray() as Float64Array;
        for (let i = 0; i < b.length; i++) sum += b[i];
        consumedRows += batch.numRows;
        if (live) gc();
        sample();
      }
      return { rows: consumedRows };
    },
    { batches: true },
  );
}

async function clientOf(server: S2SPServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'probe', version: '0' });
  await client.connect(clientSide);
  return client;
}
const resourceClient = await clientOf(resource);
const consumerClient = await clientOf(consumer);

const before = settle();
const read = (await resourceClient.callTool({ name: 'big', arguments: { abstract_domains: 'a' } })) as CallToolResult;
sample();
const cacheRss = peakRss - before.rss;
const cacheArrayBuffers = peakArrayBuffers - before.arrayBuffers;
const envelope = read.structuredContent as { total_rows: number; resource_url: string };
const cachedBytes = (await memory.stats()).bytes;

const cached = settle();
const loaded = (await consumerClient.callTool({ name: 'load', arguments: { abstract_data: '*', resource_url: envelope.resource_url } })) as CallToolResult;
sample();
if (loaded.isError) throw new Error(JSON.stringify(loaded.content));

process.stdout.write(
  `${JSON.stringify({
    mode: { store: flags.includes('collect') ? 'collect' : 'stream', consumer: flags.includes('rows') ? 'rows' : 'batches', live },
    totalRows: envelope.total_rows,
    consumedRows,
    sumOk: sum === (totalRows * (totalRows - 1)) / 4,
    cachedBytes,
    cache: { peakRssGrowth: cacheRss, peakArrayBuffersGrowth: cacheArrayBuffers },
    consume: {
      peakRssGrowth: peakRss - cached.rss,
      peakHeapGrowth: peakHeap - cached.heapUsed,
      peakArrayBuffersGrowth: peakArrayBuffers - cached.arrayBuffers,
    },
  })}\n`,
);
await consumerClient.close();
await resourceClient.close();
await consumer.close();
await resource.close();
