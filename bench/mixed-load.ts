/**
 * Big transfers never stall small ones: while full fetches of the 1M x 10
 * body run back to back (JSON, Arrow, Arrow+LZ4), a few connections keep
 * asking for 50 rows x 3 columns, each on a fresh single-use token. The
 * server child reports its own event-loop delay over the loaded window
 * (`monitorEventLoopDelay`, beyond its 10 ms resolution); the client times
 * each small request. The same small load with nothing else running gives
 * the idle latency the loaded one is held to. A last window puts fresh
 * bodies instead (a new copy each, on a plane that prepares JSON, LZ4 and
 * ZSTD in think time: src/data/body-preparation.ts) and fetches each as JSON
 * after a simulated think time, so the idle workers' background encoding
 * runs beside the small requests.
 *
 *   node dist/bench/mixed-load.js [--quick] [--reps N]
 */
import http from 'node:http';
import { ACCEPT_ARROW, ACCEPT_ARROW_LZ4, rowIdLists } from './lib/dataset.js';
import { fixed, goal, int, ms, type Goal } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild } from './lib/server-child.js';
import type { LoopDelay } from './servers/probe.js';

const ROWS = 1_000_000;
/** Connections making small requests at once. */
const SMALL_CONNECTIONS = 4;
const LOOP_P99_LIMIT_MS = 20;
const SMALL_P99_FACTOR = 3;
/** Tokens minted at once when a window runs out (about 1 ms of the server's loop). */
const REFILL_TOKENS = 200;
/** Full fetches per window at most: a fast format repeats until the window is long enough to sample. */
const MAX_BIG_FETCHES = 40;

const FORMATS = [
  { id: 'json', label: 'JSON', accept: 'application/json' },
  { id: 'arrow', label: 'Arrow', accept: ACCEPT_ARROW },
  { id: 'arrow-lz4', label: 'Arrow+LZ4', accept: ACCEPT_ARROW_LZ4 },
] as const;
/** The window of fresh bodies prepared in think time (JSON, LZ4, ZSTD), each fetched as JSON after THINK_TIME_MS. */
const THINK_TIME = { id: 'think-time', label: 'Think time (fresh bodies prepared, then JSON)', accept: 'application/json' } as const;
/** The simulated think time between a fresh body's put and its fetch. */
const THINK_TIME_MS = 1_500;

/** Small-request latencies of one window, ms. */
interface Latency {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

function latencyOf(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

/** POSTs `body` and reads the whole answer, keeping only its size; rejects on a non-2xx status. */
function post(agent: http.Agent, url: string, accept: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', accept, 'content-length': Buffer.byteLength(body) } },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => {
          if (response.statusCode === 200 && response.complete) resolve(bytes);
          else reject(new Error(`${url.slice(-8)}: status ${response.statusCode}, complete ${response.complete}`));
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

await runScenario('mixed-load', 'Mixed load: small requests while full 1M-row fetches run', async (flags) => {
  const idleMs = flags.quick ? 1_500 : 3_000;
  const bigFetches = flags.reps ?? (flags.quick ? 1 : 3);
  /** A window lasts at least this long (and at least `bigFetches` full fetches). */
  const windowMs = flags.quick ? 1_500 : 3_000;
  progress('starting the s2sp server (single-use tokens of one cached body)');
  const server = await ServerChild.start(
    's2sp-server',
    {
      rows: ROWS,
      tokens: 1,
      planes: [
        { prefix: '', freshStore: true },
        { prefix: '/think', coldStore: true, prepare: ['lz4', 'zstd', 'json'] },
      ],
    },
    {
      cpuProfAll: flags.cpuProfAll,
      label: 'mixed-load',
    },
  );
  const smallAgent = new http.Agent({ keepAlive: true, maxSockets: SMALL_CONNECTIONS });
  const bigAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const ids = rowIdLists(ROWS, 11);
  const smallBody = () => JSON.stringify({ row_ids: ids.next(50), columns: ['i1', 'f1', 's1'] });
  const mint = async (count: number) => server.request<string[]>('mint-fresh', { count });
  const tokenUrl = (token: string) => server.url(`/s2sp/data/${token}`);
  /**
   * Revokes the tokens a window left unused: thousands of deletes in one go (5-11 ms of the
   * server's loop for 5,000-10,000 tokens here), so it runs after the window's loop delay is
   * read, not inside the window it would count in.
   */
  const dropUnused = async () => server.request('drop-fresh');

  /**
   * Small JSON requests on SMALL_CONNECTIONS connections until `keepGoing()`
   * is false; the latency of each. `tokens` are minted before the window (a
   * mint is work on the server's loop); should they run out, a few more are.
   */
  const smallLoad = async (tokens: string[], keepGoing: () => boolean, budgetMs: number): Promise<number[]> => {
    const samples: number[] = [];
    const more = bounded(Number.MAX_SAFE_INTEGER, budgetMs);
    const connection = async () => {
      for (let i = 0; keepGoing() && more(i); i++) {
        if (tokens.length === 0) tokens.push(...(await mint(REFILL_TOKENS)));
        const token = tokens.pop() as string;
        const started = performance.now();
        await post(smallAgent, tokenUrl(token), 'application/json', smallBody());
        samples.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: SMALL_CONNECTIONS }, connection));
    return samples;
  };

  const rows: string[][] = [];
  const goals: Goal[] = [];
  const data: Record<string, unknown> = {};
  try {
    progress('warm-up: small requests and one full fetch of each format');
    await smallLoad(await mint(2_000), () => true, 500);
    await dropUnused();
    for (const format of FORMATS) await post(bigAgent, tokenUrl((await mint(1))[0]), format.accept, '{}');
    await server.gc();

    progress(`idle: small requests for ${idleMs} ms`);
    const idleTokens = await mint(Math.ceil((idleMs / 1000) * 5_000));
    await server.request('loop-delay-start');
    const idle = latencyOf(await smallLoad(idleTokens, () => true, idleMs));
    const idleLoop = await server.request<LoopDelay>('loop-delay-stop');
    await dropUnused();
    rows.push(['idle', '-', fixed(idleLoop.p99, 1), fixed(idleLoop.max, 1), int(idle.count), ms(idle.p50), ms(idle.p99), ms(idle.max)]);
    data.idle = { latency: idle, loop: idleLoop };

    let previousWindowMs = 0;
    for (const format of [...FORMATS, THINK_TIME]) {
      const thinking = format === THINK_TIME;
      const tokens = thinking ? [] : await mint(MAX_BIG_FETCHES);
      const smallTokens = await mint(Math.ceil((idle.count / idleMs) * Math.max(windowMs, previousWindowMs) * 1.5));
      await server.gc();
      progress(`${format.label}: at least ${bigFetches} full fetches and ${windowMs} ms, small requests alongside`);
      let running = true;
      await server.request('loop-delay-start');
      const started = performance.now();
      let fetched = 0;
      const big = (async () => {
        let bytes = 0;
        try {
          while (fetched < MAX_BIG_FETCHES && (fetched < bigFetches || performance.now() - started < windowMs)) {
            if (thinking) {
              // A fresh body: its put starts the preparation, which runs through the think time.
              const token = await server.request<string>('mint-cold', { prefix: '/think' });
              await new Promise((resolve) => setTimeout(resolve, THINK_TIME_MS));
              bytes = await post(bigAgent, server.url(`/think/s2sp/data/${token}`), format.accept, '{}');
            } else bytes = await post(bigAgent, tokenUrl(tokens[fetched]), format.accept, '{}');
            fetched++;
          }
        } finally {
          running = false;
        }
        return bytes;
      })();
      const [bytes, samples] = await Promise.all([big, smallLoad(smallTokens, () => running, 120_000)]);
      const seconds = (performance.now() - started) / 1000;
      previousWindowMs = seconds * 1000;
      const loop = await server.request<LoopDelay>('loop-delay-stop');
      await dropUnused();
      const loaded = latencyOf(samples);
      rows.push([
        format.label,
        `${fixed(seconds / fetched, 2)} s x ${fetched} (${fixed(bytes / 1e6, 1)} MB)`,
        fixed(loop.p99, 1),
        fixed(loop.max, 1),
        int(loaded.count),
        ms(loaded.p50),
        ms(loaded.p99),
        ms(loaded.max),
      ]);
      data[format.id] = { latency: loaded, loop, bigSeconds: seconds / fetched, bigFetches: fetched, bigBytes: bytes };
      goals.push(
        goal(
          `${format.label} full fetches: server event-loop delay p99 while they run`,
          loop.p99,
          '<=',
          LOOP_P99_LIMIT_MS,
          'ms',
          `max ${fixed(loop.max, 1)} ms`,
        ),
        goal(
          `${format.label} full fetches: small-request p99 latency over the idle p99 (${ms(loaded.p99)} vs ${ms(idle.p99)})`,
          loaded.p99 / idle.p99,
          '<=',
          SMALL_P99_FACTOR,
          'x',
        ),
      );
    }
  } finally {
    smallAgent.destroy();
    bigAgent.destroy();
    await server.stop();
  }
  return {
    tables: [
      {
        title: `Small requests (50 rows x 3 columns, JSON, ${SMALL_CONNECTIONS} connections, a fresh token each) idle and while full fetches run; server event-loop delay beyond its 10 ms sampling`,
        header: ['window', 'full fetches', 'loop p99 ms', 'loop max ms', 'small requests', 'small p50', 'small p99', 'small max'],
        rows,
        align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes: [
      `The event-loop delay is the server process's own (monitorEventLoopDelay at 10 ms resolution, minus that resolution), over the window from the first full fetch to the last one's end; a window holds at least ${bigFetches} full fetches and lasts at least ${windowMs} ms (up to ${MAX_BIG_FETCHES} fetches).`,
      'Small requests run on 4 keep-alive connections back to back; each takes a fresh single-use token minted before the window.',
    ],
    data,
  };
});
