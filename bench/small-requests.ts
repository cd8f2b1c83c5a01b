/**
 * Small requests under load: autocannon, 50 connections, 10 s (`--duration`;
 * quick: 3 s), each request 50 rows x 3 columns of the 1M-row body, JSON and
 * Arrow, against a bare fastify route in the SAME server process answering
 * the same bytes (captured from s2sp) with the same content type: the HTTP
 * stack's limit. autocannon runs in this process, the server is a child.
 * For JSON, the naive port's indexed route (rows[id] + JSON.stringify, its
 * own process) is measured too, as a reference line outside the goal.
 *
 * Every connection fetches the same token: the store is multi-use
 * (`singleUse: false`, BENCH-ONLY), which keeps the entry after each
 * transfer and lets transfers of one token run at once.
 *
 *   node dist/bench/small-requests.js [--quick] [--duration S] [--reps N]
 */
import autocannon from 'autocannon';
import { ACCEPT_ARROW, rowIdLists } from './lib/dataset.js';
import { fixed, goal, int, ms, spread, triple, type Goal, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild } from './lib/server-child.js';

const ROWS = 1_000_000;
const CONNECTIONS = 50;

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
}

interface Summary {
  format: string;
  target: string;
  reqPerSecond: Spread;
  p50: Spread;
  p97_5: Spread;
  p99: Spread;
  bytes: number;
  runs: Run[];
}

await runScenario('small-requests', 'Small requests under load: 50 rows x 3 columns, autocannon', async (flags) => {
  const duration = flags.duration ?? (flags.quick ? 3 : 10);
  const reps = flags.reps ?? (flags.quick ? 2 : 3);
  progress('starting the s2sp server (one multi-use token)');
  const [server, naive] = await Promise.all([
    ServerChild.start('s2sp-server', { rows: ROWS, tokens: 1 }, { cpuProfAll: flags.cpuProfAll, label: 'small-requests-s2sp' }),
    ServerChild.start('naive-server', { rows: ROWS }, { cpuProfAll: flags.cpuProfAll, label: 'small-requests-naive' }),
  ]);
  const bench = `MemoryStore singleUse: ${String(server.info.singleUse)} (BENCH-ONLY multi-use setting, so each connection fetches its token again and again)`;
  console.log(bench);
  const tokens = server.info.tokens as string[];
  const body = JSON.stringify({ row_ids: rowIdLists(ROWS, 5).next(50), columns: ['i1', 'f1', 's1'] });
  const formats = [
    { id: 'json', label: 'JSON', accept: undefined as string | undefined },
    { id: 'arrow', label: 'Arrow', accept: ACCEPT_ARROW },
  ];
  const summaries: Summary[] = [];
  try {
    const sizes = new Map<string, number>();
    for (const f of formats) {
      const captured = await server.request<{ bytes: number }>('capture-bare', { name: f.id, path: `/s2sp/data/${tokens[0]}`, body, accept: f.accept });
      sizes.set(f.id, captured.bytes);
    }
    const load = async (format: (typeof formats)[number], target: Target, seconds: number): Promise<Run> => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (format.accept !== undefined) headers.accept = format.accept;
      let next = 0;
      const result = await autocannon({
        url: target === 'naive' ? naive.url('/') : server.url('/'),
        connections: CONNECTIONS,
        duration: seconds,
        timeout: 10,
        setupClient: (client) => {
          const path =
            target === 's2sp' ? `/s2sp/data/${tokens[next++ % tokens.length]}` : target === 'bare' ? `/bench/bare/${format.id}` : '/naive/indexed';
          client.setRequests([{ method: 'POST', path, headers, body }]);
        },
      });
      return {
        reqPerSecond: result.requests.total / result.duration,
        p50: result.latency.p50,
        p97_5: result.latency.p97_5,
        p99: result.latency.p99,
        total: result.requests.total,
        non2xx: result.non2xx,
        errors: result.errors,
      };
    };
    progress('warm-up, 1 s per target');
    for (const f of formats) for (const t of targetsFor(f.id)) await load(f, t, 1);
    const runs = new Map<string, Run[]>();
    const more = bounded(reps, (duration * 6 + 10) * reps * 1000);
    for (let rep = 0; more(rep); rep++) {
      for (const f of formats) {
        const targets = targetsFor(f.id);
        for (let k = 0; k < targets.length; k++) {
          const t = targets[(rep + k) % targets.length]; // rotate who goes first
          progress(`rep ${rep + 1}/${reps}: ${f.label} ${t}, ${duration} s`);
          const run = await load(f, t, duration);
          if (run.non2xx > 0 || run.errors > 0) throw new Error(`${f.label} ${t}: ${run.non2xx} non-2xx responses, ${run.errors} errors`);
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
  for (const f of formats) {
    const s = summaries.find((x) => x.format === f.label && x.target === 's2sp')!;
    const b = summaries.find((x) => x.format === f.label && x.target === 'bare')!;
    const share = (100 * s.reqPerSecond.median) / b.reqPerSecond.median;
    const n = summaries.find((x) => x.format === f.label && x.target === 'naive');
    for (const x of n ? [s, b, n] : [s, b]) {
      rows.push([
        f.label,
        x.target === 's2sp' ? '**s2sp**' : x.target === 'bare' ? 'bare route, same bytes' : 'naive port, indexed (reference)',
        triple(x.reqPerSecond, int),
        ms(x.p50.median),
        ms(x.p97_5.median),
        ms(x.p99.median),
        String(x.bytes),
        x.target === 's2sp' ? `**${fixed(share, 1)}%**` : `${fixed((100 * x.reqPerSecond.median) / b.reqPerSecond.median, 1)}%`,
      ]);
    }
    goals.push(goal(`Small requests, ${f.label}: s2sp req/s as a share of the bare route's`, share, '>=', 70, '%', `${int(s.reqPerSecond.median)} vs ${int(b.reqPerSecond.median)} req/s`));
  }
  return {
    tables: [
      {
        header: ['format', 'route', 'req/s (min / median / max)', 'p50 ms', 'p97.5 ms', 'p99 ms', 'response bytes', 'share of bare'],
        rows,
        align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes: [
      `autocannon (programmatic API) in the bench process, the server in a child process; ${CONNECTIONS} connections, ${duration} s per run, ${reps} runs per target (alternating which goes first), after a 1 s warm-up each. req/s = requests completed / run duration; latency percentiles are the median over runs.`,
      `Request: \`POST\` \`{"row_ids": [50 seeded random ids], "columns": ["i1","f1","s1"]}\` (${body.length} bytes). The bare route (\`/bench/bare/:name\`, same process, same JSON body parser) answers the s2sp response captured once with app.inject, with its content type.`,
      bench + `; all ${CONNECTIONS} connections share one token (one cached copy of the body).`,
      'Every run had zero non-2xx responses and zero errors (checked).',
      'naive port, indexed: a separate server process holding the rows as JS objects, `POST /naive/indexed` (sorted unique ids, `rows[id]`, keys copied, `JSON.stringify`); JSON only; a reference for what a hand-written route does under the same load, not part of the goal.',
    ],
    data: { rows: ROWS, connections: CONNECTIONS, duration, reps, summaries },
  };
});
