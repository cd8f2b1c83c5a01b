/**
 * Small requests under load: autocannon, 50 connections, 10 s (`--duration`;
 * quick: 2 s), each request 50 rows x 3 columns of the 1M-row body, JSON and
 * Arrow, against a bare fastify route in the SAME server process answering
 * the same bytes (captured from s2sp) with the same content type: the HTTP
 * stack's limit. autocannon runs in this process, the server is a child.
 * The naive port's indexed route (rows[id] + JSON.stringify, its own
 * process) is the reference the 3x goals compare with, for JSON and Arrow
 * alike (it speaks JSON only).
 *
 * Every s2sp request carries a fresh single-use token (the real workload):
 * before each run the server mints enough tokens of one cached body through
 * its single-use MemoryStore (`put` of the same Table adds a token, not a
 * copy), and each request takes the next one. A token that ran out or failed
 * is a non-2xx response, and any non-2xx fails the scenario.
 *
 * `--fresh-rows` gives every request (of every target) the next of 4,096
 * lists of 50 ids instead of the same list each time. By default the rows
 * repeat, and V8 then finds each float's text in its number-string cache:
 * an answer over rows it has not formatted lately costs more, as a real
 * fetch's does (bench/analysis.md, "Small requests at 60%?"). The bare route
 * answers its one captured response either way.
 *
 *   node dist/bench/small-requests.js [--quick] [--duration S] [--reps N] [--fresh-rows]
 */
import autocannon, { type Request } from 'autocannon';
import { ACCEPT_ARROW, rowIdLists } from './lib/dataset.js';
import { fixed, goal, int, ms, spread, triple, type Goal, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild } from './lib/server-child.js';

const ROWS = 1_000_000;
const CONNECTIONS = 50;
/** Tokens minted per run: this many times the fastest rate seen in the warm-up, times the run's seconds. */
const TOKEN_HEADROOM = 2;

type Target = 's2sp' | 'bare' | 'naive';

/** The naive port speaks JSON only. */
function targetsFor(format: string): Target[] {
  return format === 'json' ? ['s2sp', 'bare', 'naive'] : ['s2sp', 'bare'];
}

interface Run {
  reqPerSecond: number;
  p50: number;
  p97_5: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** s2sp: tokens taken by requests (each at most once), and minted for the run. */
  tokensUsed: number;
  tokensMinted: number;
  /** The answering server's main-thread CPU per completed request over the run, µs; null without /proc. */
  cpuMicrosPerRequest: number | null;
}

interface Summary {
  format: string;
  target: string;
  reqPerSecond: Spread;
  p50: Spread;
  p97_5: Spread;
  p99: Spread;
  /** Main-thread CPU per request, µs; null without /proc. */
  cpuPerRequest: Spread | null;
  bytes: number;
  runs: Run[];
}

await runScenario('small-requests', 'Small requests under load: 50 rows x 3 columns, autocannon', async (flags) => {
  const duration = flags.duration ?? (flags.quick ? 2 : 10);
  const reps = flags.reps ?? (flags.quick ? 1 : 3);
  progress('starting the s2sp server (single-use tokens of one cached body)');
  const [server, naive] = await Promise.all([
    ServerChild.start(
      's2sp-server',
      { rows: ROWS, tokens: 1, planes: [{ prefix: '', freshStore: true }] },
      { cpuProfAll: flags.cpuProfAll, label: 'small-requests-s2sp' },
    ),
    ServerChild.start('naive-server', { rows: ROWS }, { cpuProfAll: flags.cpuProfAll, label: 'small-requests-naive' }),
  ]);
  const mint = (count: number) => server.request<string[]>('mint-fresh', { count });
  let minted = 0;
  const idLists = rowIdLists(ROWS, 5);
  const requestBody = () => JSON.stringify({ row_ids: idLists.next(50), columns: ['i1', 'f1', 's1'] });
  const body = requestBody();
  const freshRows = flags.argv.includes('--fresh-rows');
  /** With --fresh-rows, the bodies requests take in turn (all the same length give or take a few digits). */
  const bodies = freshRows ? Array.from({ length: 4_096 }, requestBody) : [body];
  const formats = [
    { id: 'json', label: 'JSON', accept: undefined as string | undefined },
    { id: 'arrow', label: 'Arrow', accept: ACCEPT_ARROW },
  ];
  const summaries: Summary[] = [];
  try {
    const sizes = new Map<string, number>();
    for (const f of formats) {
      const [token] = await mint(1);
      const captured = await server.request<{ bytes: number }>('capture-bare', { name: f.id, path: `/s2sp/data/${token}`, body, accept: f.accept });
      sizes.set(f.id, captured.bytes);
    }
    /** The fastest rate any target reached so far: sizes the next run's tokens. */
    let fastest = 5_000;
    const load = async (format: (typeof formats)[number], target: Target, seconds: number): Promise<Run> => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (format.accept !== undefined) headers.accept = format.accept;
      // Every target pays the same per-request setupRequest on the client (the load generator shares the CPUs).
      let path = target === 'bare' ? `/bench/bare/${format.id}` : '/naive/indexed';
      let tokens: string[] = [];
      if (target === 's2sp') {
        tokens = await mint(Math.ceil(fastest * TOKEN_HEADROOM * seconds) + 4 * CONNECTIONS);
        minted += tokens.length;
      }
      let next = 0;
      let nextBody = 0;
      const setupRequest = (request: Request): Request => {
        // Past the last token the path is a consumed one: its 404 fails the run (never reused silently).
        if (target === 's2sp') path = `/s2sp/data/${tokens[Math.min(next++, tokens.length - 1)]}`;
        request.path = path;
        request.body = bodies[nextBody++ % bodies.length];
        return request;
      };
      const answering = target === 'naive' ? naive : server;
      const cpuBefore = await answering.mainThreadCpu();
      const result = await autocannon({
        url: answering.url('/'),
        connections: CONNECTIONS,
        duration: seconds,
        timeout: 10,
        requests: [{ method: 'POST', path, headers, body, setupRequest }],
      });
      const cpuAfter = await answering.mainThreadCpu();
      if (target === 's2sp') await server.request('drop-fresh');
      const reqPerSecond = result.requests.total / result.duration;
      fastest = Math.max(fastest, reqPerSecond);
      return {
        reqPerSecond,
        p50: result.latency.p50,
        p97_5: result.latency.p97_5,
        p99: result.latency.p99,
        total: result.requests.total,
        non2xx: result.non2xx,
        errors: result.errors,
        tokensUsed: target === 's2sp' ? next : 0,
        tokensMinted: tokens.length,
        cpuMicrosPerRequest: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / result.requests.total,
      };
    };
    progress('warm-up, 1 s per target');
    // Bare first, so the fastest rate bounds the s2sp tokens of every later run.
    for (const f of formats) for (const t of [...targetsFor(f.id)].reverse()) await load(f, t, 1);
    const runs = new Map<string, Run[]>();
    const more = bounded(reps, (duration * 6 + 10) * reps * 1000);
    for (let rep = 0; more(rep); rep++) {
      for (const f of formats) {
        const targets = targetsFor(f.id);
        for (let k = 0; k < targets.length; k++) {
          const t = targets[(rep + k) % targets.length]; // rotate who goes first
          progress(`rep ${rep + 1}/${reps}: ${f.label} ${t}, ${duration} s`);
          const run = await load(f, t, duration);
          if (run.non2xx > 0 || run.errors > 0) {
            const tokens = t === 's2sp' ? ` (${run.tokensUsed} of ${run.tokensMinted} tokens taken)` : '';
            throw new Error(`${f.label} ${t}: ${run.non2xx} non-2xx responses, ${run.errors} errors${tokens}`);
          }
          const key = `${f.id}:${t}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
        }
      }
    }
    if (flags.cpuProf) {
      // One more s2sp run per format under the profiler, not recorded (the profiler slows it).
      for (const f of formats) await server.profiled(true, `small-requests-s2sp-${f.id}`, () => load(f, 's2sp', duration));
    }
    for (const f of formats) {
      for (const t of targetsFor(f.id)) {
        const mine = runs.get(`${f.id}:${t}`)!;
        summaries.push({
          format: f.label,
          target: t,
          reqPerSecond: spread(mine.map((r) => r.reqPerSecond)),
          p50: spread(mine.map((r) => r.p50)),
          p97_5: spread(mine.map((r) => r.p97_5)),
          p99: spread(mine.map((r) => r.p99)),
          cpuPerRequest: mine.every((r) => r.cpuMicrosPerRequest !== null) ? spread(mine.map((r) => r.cpuMicrosPerRequest!)) : null,
          bytes: sizes.get(f.id)!,
          runs: mine,
        });
      }
    }
  } finally {
    await Promise.all([server.stop(), naive.stop()]);
  }

  const rows: string[][] = [];
  const goals: Goal[] = [];
  // The naive port speaks JSON only: its JSON rate is the reference of both formats.
  const naiveJson = summaries.find((x) => x.format === 'JSON' && x.target === 'naive')!;
  for (const f of formats) {
    const s = summaries.find((x) => x.format === f.label && x.target === 's2sp')!;
    const b = summaries.find((x) => x.format === f.label && x.target === 'bare')!;
    const share = (100 * s.reqPerSecond.median) / b.reqPerSecond.median;
    const overNaive = s.reqPerSecond.median / naiveJson.reqPerSecond.median;
    const n = summaries.find((x) => x.format === f.label && x.target === 'naive');
    for (const x of n ? [s, b, n] : [s, b]) {
      rows.push([
        f.label,
        x.target === 's2sp' ? '**s2sp, fresh token per request**' : x.target === 'bare' ? 'bare route, same bytes' : 'naive port, indexed (reference)',
        triple(x.reqPerSecond, int),
        ms(x.p50.median),
        ms(x.p97_5.median),
        ms(x.p99.median),
        x.cpuPerRequest === null ? '-' : fixed(x.cpuPerRequest.median, 0),
        String(x.bytes),
        x.target === 's2sp' ? `**${fixed(share, 1)}%**` : `${fixed((100 * x.reqPerSecond.median) / b.reqPerSecond.median, 1)}%`,
        `${fixed(x.reqPerSecond.median / naiveJson.reqPerSecond.median, 2)}x`,
      ]);
    }
    goals.push(
      goal(
        `Small requests, ${f.label}: s2sp req/s as a share of the bare route's`,
        share,
        '>=',
        60,
        '%',
        `${int(s.reqPerSecond.median)} vs ${int(b.reqPerSecond.median)} req/s`,
      ),
    );
    goals.push(
      goal(
        `Small requests, ${f.label}: s2sp req/s over the naive port's (JSON)`,
        overNaive,
        '>=',
        3,
        'x',
        `${int(s.reqPerSecond.median)} vs ${int(naiveJson.reqPerSecond.median)} req/s`,
      ),
    );
  }
  const used = summaries.filter((x) => x.target === 's2sp').flatMap((x) => x.runs.map((r) => r.tokensUsed));
  return {
    tables: [
      {
        header: [
          'format',
          'route',
          'req/s (min / median / max)',
          'p50 ms',
          'p97.5 ms',
          'p99 ms',
          'server CPU µs/req',
          'response bytes',
          'share of bare',
          'over naive JSON',
        ],
        rows,
        align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes: [
      `autocannon (programmatic API) in the bench process, the server in a child process; ${CONNECTIONS} connections, ${duration} s per run, ${reps} runs per target (alternating which goes first), after a 1 s warm-up each. req/s = requests completed / run duration; latency percentiles are the median over runs.`,
      `Request: \`POST\` \`{"row_ids": [50 seeded random ids], "columns": ["i1","f1","s1"]}\` (${body.length} bytes), ${freshRows ? 'with the next of 4,096 id lists on every request (--fresh-rows)' : 'the same ids on every request (--fresh-rows varies them)'}. The bare route (\`/bench/bare/:name\`, same process, same JSON body parser) answers the s2sp response captured once with app.inject, with its content type.`,
      `Every s2sp request takes a fresh single-use token (MemoryStore, single use as in production), minted through the store before the run (${TOKEN_HEADROOM}x the fastest rate seen so far times the run's seconds; unused ones revoked after it); all point at one cached copy of the body. Tokens taken per measured run: ${used.map(int).join(', ')}. Every target's requests go through the same autocannon setupRequest, so the client's per-request cost is the same.`,
      "server CPU µs/req: the answering server's main thread (user + system, from /proc at the kernel's 10 ms tick) over the run, per completed request; median over runs. It moves less with the machine's state than req/s does: on this 2-core host the bare route's own rate swings 2x between runs, and with it the share (bench/analysis.md, \"Small requests at 60%?\").",
      'Every run had zero non-2xx responses (a token that ran out, was reused or failed would be a 404) and zero errors (checked).',
      'naive port, indexed: a separate server process holding the rows as JS objects, `POST /naive/indexed` (sorted unique ids, `rows[id]`, keys copied, `JSON.stringify`); JSON only; the reference of the 3x goals for JSON and Arrow alike.',
    ],
    data: { rows: ROWS, connections: CONNECTIONS, duration, reps, freshRows, tokensMinted: minted, summaries },
  };
});
