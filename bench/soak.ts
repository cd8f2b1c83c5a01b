/**
 * Soak: a bounded mixed load on one s2sp server over 127.0.0.1. Virtual
 * clients mint bodies through MCP (Streamable HTTP), fetch them whole or in
 * part (JSON, Arrow, Arrow+LZ4), hang up mid-transfer, and send bad requests.
 * Prints requests, outcomes by kind, and the server's RSS at start, peak and
 * end (after the load stops and the tokens expire). Exits 1 on any unexpected
 * outcome, or when the end RSS is not back near the start.
 *
 *   node dist/bench/soak.js                 60 s, 50 connections
 *   node dist/bench/soak.js --short         5 s, 10 connections (the test suite's mode)
 *   node dist/bench/soak.js --duration 30 --connections 20
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryStore } from '../src/cache/memory-store.js';
import { SharedMemoryPool } from '../src/cache/shared-memory-pool.js';
import { S2SPServer } from '../src/server/s2sp-server.js';
import { tableFromRows } from '../src/table/table-from-rows.js';
import { createEncoderPool } from '../src/worker/encoder-pool.js';
import { generateRows } from './lib/dataset.js';
import { writeResults } from './lib/report.js';
import { httpRequest, type HttpOutcome } from './lib/raw-http.js';
import { DEPLOYMENT_ENV } from './lib/server-child.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const TTL_SECONDS = 3;
const MB = 1024 * 1024;
/** How often the end of a soak asks the server whether its memory has settled. */
const POLL_MS = 250;

/** "Near the start", once garbage is collected: within 100 MB (allocator slack, compiled code). */
function rssNear(start: { rss: number }, collected: { rss: number }): boolean {
  return collected.rss - start.rss < 100 * MB;
}

// ---------------------------------------------------------------- server role

type Op = 'rss' | 'reset-peak' | 'stats' | 'gc' | 'stop';

async function serve(idleTtlMs: number): Promise<void> {
  const big = tableFromRows(generateRows(100_000));
  const small = tableFromRows(generateRows(2_000));
  const store = new MemoryStore({ ttlMs: TTL_SECONDS * 1000, maxBytes: 2 * 1024 * MB, memoryPool: new SharedMemoryPool({ idleTtlMs }) });
  // Idle worker threads (their heaps, their mapped bodies) end after the same idle time.
  const workers = createEncoderPool({ threads: 2, idleTimeoutMs: idleTtlMs });
  // Failures the server logs (a transfer cut by an error) explain an unexpected outcome.
  const server = new S2SPServer({ name: 's2sp-soak', store, dataPlane: { workers }, http: { logger: { level: 'warn' } } });
  server.resourceTool('read_big', { description: '100k rows' }, () => big);
  server.resourceTool('read_small', { description: '2k rows' }, () => small);
  const url = await server.listen({ mcpPath: '/mcp' });
  let peak = process.memoryUsage.rss();
  setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20).unref();

  process.on('message', async (message: { id: number; op: Op }) => {
    if (message.op === 'reset-peak') peak = process.memoryUsage.rss();
    if (message.op === 'gc') {
      // What a full collection gives back: garbage is not a leak. Since Node 24 (V8 13.x) a plain
      // full GC keeps the heap pages it empties in a pool for reuse, still in RSS; the
      // memory-reducing one (what V8 runs before giving up on an allocation) lets them go. The plain
      // call stays first: on Node 20 the call with options alone left ~30 MB of garbage behind.
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as (options?: object) => void;
      gc();
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      await sleep(200);
    }
    if (message.op === 'stop') {
      await server.close();
      await workers.close();
      process.send!({ id: message.id, result: null }, () => process.exit(0));
      return;
    }
    const stats = await server.store.stats();
    const memory = process.memoryUsage();
    process.send!({
      id: message.id,
      result: {
        rss: memory.rss,
        peak,
        entries: stats.entries,
        bytes: stats.bytes,
        idle: stats.idleBytes ?? 0,
        arrayBuffers: memory.arrayBuffers,
        heapUsed: memory.heapUsed,
      },
    });
  });
  process.send!({ ready: url });
}

// ---------------------------------------------------------------- client role

interface ServerState {
  rss: number;
  peak: number;
  entries: number;
  bytes: number;
  idle: number;
  arrayBuffers: number;
  heapUsed: number;
}

class SoakServer {
  private nextId = 1;
  private readonly waiting = new Map<number, (value: unknown) => void>();
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (m: { id?: number; result?: unknown }) => {
      if (m.id !== undefined) this.waiting.get(m.id)?.(m.result);
    });
  }

  static start(idleTtlMs: number): Promise<SoakServer> {
    const args = ['--role', 'server', '--idle-ttl', String(idleTtlMs)];
    // The deployment setting native-notes.md recommends: a fixed mmap threshold, so glibc returns
    // freed body buffers to the system instead of keeping them in its heap.
    const env = { ...process.env, ...DEPLOYMENT_ENV };
    const child = fork(fileURLToPath(import.meta.url), args, { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      child.once('message', (m: { ready?: string }) => (m.ready ? resolve(new SoakServer(child, m.ready)) : reject(new Error('no ready'))));
      child.once('exit', (code) => reject(new Error(`soak server exited with ${code}`)));
    });
  }

  ask(op: Op): Promise<ServerState> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, (v) => resolve(v as ServerState));
      this.child.send({ id, op });
    });
  }

  /** Asks `op` every {@link POLL_MS} until the answer is `settled` or the clock passes `by`; returns the last answer. */
  async askUntil(op: Op, settled: (state: ServerState) => boolean, by: number): Promise<ServerState> {
    let state = await this.ask(op);
    while (!settled(state) && Date.now() < by) {
      await sleep(POLL_MS);
      state = await this.ask(op);
    }
    return state;
  }
}

/** Outcome kinds: `ok-*` are expected, everything else is counted as unexpected. */
type Kind = string;

class Tally {
  readonly counts = new Map<Kind, number>();
  /** What each unexpected outcome was (the first few), so a rare one can be explained from a CI log. */
  readonly details: string[] = [];
  requests = 0;
  add(kind: Kind, detail?: () => string): void {
    this.requests++;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (!kind.startsWith('ok') && this.details.length < 10) this.details.push(`${kind}${detail ? `: ${detail()}` : ''}`);
  }
  unexpected(): number {
    let n = 0;
    for (const [kind, count] of this.counts) if (!kind.startsWith('ok')) n += count;
    return n;
  }
}

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)];
}

async function mint(client: Client, tool: 'read_big' | 'read_small', tally: Tally): Promise<string | undefined> {
  const result = (await client.callTool({ name: tool, arguments: { abstract_domains: 'i1,s1' } })) as CallToolResult;
  if (result.isError) {
    tally.add(`mint tool error: ${(result.content[0] as { text: string }).text.slice(0, 80)}`);
    return undefined;
  }
  tally.add('ok mint');
  return JSON.parse((result.content[0] as { text: string }).text).resource_url as string;
}

async function virtualClient(url: string, agent: Agent, deadline: number, seed: number, tally: Tally): Promise<void> {
  let state = seed;
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff) / 0x7fffffff;
  const client = new Client({ name: `soak-${seed}`, version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    while (Date.now() < deadline) {
      const action = random();
      try {
        if (action < 0.15) {
          await badRequest(url, agent, random, tally);
          continue;
        }
        const tool = random() < 0.8 ? 'read_small' : 'read_big';
        const resourceUrl = await mint(client, tool, tally);
        if (resourceUrl === undefined) continue;
        const accept = pick([undefined, ARROW, `${ARROW}; codecs="lz4"`], random);
        const headers: Record<string, string> = { 'content-type': 'application/json', ...(accept ? { accept } : {}) };
        if (action < 0.25) {
          // Hang up mid-transfer, then fetch again: the token must still serve once.
          const cut = await httpRequest(resourceUrl, { agent, headers, body: '{}', hangUpAfterBytes: 1 });
          tally.add(cut.status === 200 || cut.status === 0 ? 'ok hang-up' : `hang-up status ${cut.status}`);
          let retry = await httpRequest(resourceUrl, { agent, headers, body: '{}' });
          for (let i = 0; i < 50 && retry.status === 409; i++) {
            await sleep(10);
            retry = await httpRequest(resourceUrl, { agent, headers, body: '{}' });
          }
          // A 404 is right when the server had already handed the whole (small) response to the
          // kernel before the hang-up: that transfer was complete (SPEC 3.4).
          const retried = retry.status === 200 && retry.complete ? 'ok retry after hang-up' : `retry after hang-up: ${retry.status}`;
          tally.add(retry.status === 404 ? 'ok 404: the response was already written in full' : retried);
          continue;
        }
        const total = tool === 'read_big' ? 100_000 : 2_000;
        const partial = action < 0.7;
        const body = partial ? JSON.stringify({ row_ids: Array.from({ length: 50 }, () => Math.floor(random() * total)), columns: ['i1', 'f1', 's2'] }) : '{}';
        const describe = (outcome: HttpOutcome) => () =>
          `${tool}, ${partial ? 'partial' : 'full'}, accept ${accept ?? 'JSON'}, ${outcome.body.length} bytes received` +
          `${outcome.complete ? '' : ' (cut)'}, content-type ${String(outcome.headers['content-type'])}, ${((deadline - Date.now()) / 1000).toFixed(2)} s before the end`;
        const first = await httpRequest(resourceUrl, { agent, headers, body });
        tally.add(first.status === 200 && first.complete ? (partial ? 'ok partial fetch' : 'ok full fetch') : `fetch: ${first.status}`, describe(first));
        let again = await httpRequest(resourceUrl, { agent, headers, body });
        for (let i = 0; i < 50 && again.status === 409; i++) {
          await sleep(10);
          again = await httpRequest(resourceUrl, { agent, headers, body });
        }
        tally.add(again.status === 404 ? 'ok 404 after use' : `second fetch: ${again.status}`, describe(again));
      } catch (error) {
        tally.add(`client error: ${(error as Error).message.slice(0, 80)}`);
      }
    }
  } finally {
    await client.close();
  }
}

async function badRequest(url: string, agent: Agent, random: () => number, tally: Tally): Promise<void> {
  const token = 'A'.repeat(43);
  const cases: Array<[string, () => ReturnType<typeof httpRequest>, number]> = [
    ['unknown token', () => httpRequest(`${url}/s2sp/data/${token}`, { agent, body: '{}', headers: { 'content-type': 'application/json' } }), 404],
    ['malformed token', () => httpRequest(`${url}/s2sp/data/..%2Fetc`, { agent, body: '{}', headers: { 'content-type': 'application/json' } }), 404],
    ['bad JSON', () => httpRequest(`${url}/s2sp/data/${token}`, { agent, body: '{"row_ids":', headers: { 'content-type': 'application/json' } }), 400],
    ['wrong method', () => httpRequest(`${url}/s2sp/data/${token}`, { agent, method: 'GET' }), 405],
    [
      'bad Accept',
      () => httpRequest(`${url}/s2sp/data/${token}`, { agent, body: '{}', headers: { 'content-type': 'application/json', accept: 'text/html' } }),
      406,
    ],
    ['text body', () => httpRequest(`${url}/s2sp/data/${token}`, { agent, body: 'x', headers: { 'content-type': 'text/plain' } }), 415],
  ];
  const [name, send, expected] = pick(cases, random);
  const outcome = await send();
  tally.add(outcome.status === expected ? 'ok rejected bad request' : `bad request "${name}": ${outcome.status}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      role: { type: 'string', default: 'client' },
      short: { type: 'boolean', default: false },
      duration: { type: 'string' },
      connections: { type: 'string' },
      'idle-ttl': { type: 'string' },
    },
  });
  if (values.role === 'server') return serve(Number(values['idle-ttl']));
  const seconds = Number(values.duration ?? (values.short ? 5 : 60));
  const connections = Number(values.connections ?? (values.short ? 10 : 50));
  // The store's pool keeps idle shared buffers for reuse; the short mode lets them go sooner.
  const idleTtlMs = values.short ? 2000 : 30_000;
  const server = await SoakServer.start(idleTtlMs);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  try {
    await sleep(500);
    const start = await server.ask('reset-peak');
    console.log(`soak: ${seconds} s, ${connections} connections on ${server.url} (server env MALLOC_MMAP_THRESHOLD_=${DEPLOYMENT_ENV.MALLOC_MMAP_THRESHOLD_})`);
    const tally = new Tally();
    const deadline = Date.now() + seconds * 1000;
    const startedAt = Date.now();
    await Promise.all(Array.from({ length: connections }, (_, i) => virtualClient(server.url, agent, deadline, i + 1, tally)));
    const elapsed = (Date.now() - startedAt) / 1000;
    const loaded = await server.ask('stats');
    // Let every token expire and the idle buffers and workers go, then look at the server's memory
    // again. Since Node 24 (V8 13.x) the heap pages of an isolate that ends (an idle worker) go to a
    // shared pool that a delayed task frees 8 s later; no GC frees them sooner. Node 22 frees them
    // at once. So the wait polls for each condition, up to the longest it can take with a margin.
    const V8_POOLED_PAGES_DELAY_MS = 8000;
    const settleBy = Date.now() + TTL_SECONDS * 1000 + idleTtlMs + V8_POOLED_PAGES_DELAY_MS + 3000;
    const end = await server.askUntil('stats', (state) => state.entries === 0 && state.idle === 0, settleBy);
    const collected = await server.askUntil('gc', (state) => rssNear(start, state), settleBy);
    console.log(`requests: ${tally.requests} in ${elapsed.toFixed(1)} s (${(tally.requests / elapsed).toFixed(0)} req/s)`);
    console.log('| outcome | count |');
    console.log('|---|---:|');
    for (const [kind, count] of [...tally.counts].sort((a, b) => b[1] - a[1])) console.log(`| ${kind} | ${count} |`);
    for (const detail of tally.details) console.log(`unexpected: ${detail}`);
    console.log(`cache when the load stopped: ${loaded.entries} entries, ${(loaded.bytes / MB).toFixed(1)} MB; after expiry: ${end.entries} entries`);
    console.log(
      `server RSS: start ${(start.rss / MB).toFixed(0)} MB, peak ${(end.peak / MB).toFixed(0)} MB, end ${(end.rss / MB).toFixed(0)} MB ` +
        `(end: heap ${(end.heapUsed / MB).toFixed(0)} MB, array buffers ${(end.arrayBuffers / MB).toFixed(0)} MB, idle pool ${(end.idle / MB).toFixed(0)} MB)`,
    );
    console.log(
      `after a full GC: RSS ${(collected.rss / MB).toFixed(0)} MB (heap ${(collected.heapUsed / MB).toFixed(0)} MB, array buffers ${(collected.arrayBuffers / MB).toFixed(0)} MB)`,
    );
    const unexpected = tally.unexpected();
    // The short mode (the test suite's) leaves the committed full-run figures alone.
    const file = values.short
      ? '(short mode: not written)'
      : writeResults('soak', {
          mode: values.short ? 'short' : 'full',
          seconds,
          connections,
          requests: tally.requests,
          outcomes: Object.fromEntries(tally.counts),
          unexpected,
          rssMB: { start: start.rss / MB, peak: end.peak / MB, end: end.rss / MB, afterFullGc: collected.rss / MB },
          date: new Date().toISOString(),
        });
    console.log(`results: ${file}`);
    console.log(`unexpected errors: ${unexpected}`);
    const rssBack = rssNear(start, collected);
    console.log(`RSS back near the start (after a full GC, within 100 MB): ${rssBack ? 'yes' : 'no'}`);
    if (unexpected > 0 || end.entries !== 0 || !rssBack) process.exitCode = 1;
  } finally {
    agent.destroy();
    await server.ask('stop');
  }
}

await main();
