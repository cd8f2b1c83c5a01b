/**
 * Scattered selection: 50 random row ids (a seeded sequence, a new list per
 * request, the same lists for every target) x 3 columns from the 1M-row
 * body. Server-side time (fastify onRequest to response finish, recorded in
 * the server) and end-to-end latency (node:http, one keep-alive connection),
 * s2sp JSON and Arrow against the naive port (and its indexed variant, to
 * show the baseline at its best). Requests are interleaved target by target.
 *
 *   node dist/bench/scattered.js [--quick] [--reps N]
 */
import { tableFromIPC } from 'apache-arrow';
import { ACCEPT_ARROW, rowIdLists } from './lib/dataset.js';
import { keepAliveClient } from './lib/http-client.js';
import { goal, ms, ratio, spread, triple, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild } from './lib/server-child.js';
import type { RequestTiming } from './servers/probe.js';

const ROWS = 1_000_000;
const IDS = 50;
const COLUMNS = ['i1', 'f1', 's1'];

interface Target {
  id: string;
  label: string;
  server: 's2sp' | 'naive';
  path: string;
  route: string;
  accept?: string;
}

interface TargetSummary {
  id: string;
  label: string;
  serverMs: Spread;
  endToEndMs: Spread;
  serverP99: number;
  endToEndP99: number;
  bytes: Spread;
}

await runScenario('scattered', 'Scattered selection: 50 random rows x 3 columns of 1M', async (flags) => {
  const requests = flags.reps ?? (flags.quick ? 50 : 200);
  progress('starting the s2sp and naive servers');
  const [s2sp, naive] = await Promise.all([
    ServerChild.start('s2sp-server', { rows: ROWS, timings: true }, { cpuProfAll: flags.cpuProfAll, label: 'scattered-s2sp' }),
    ServerChild.start('naive-server', { rows: ROWS, timings: true }, { cpuProfAll: flags.cpuProfAll, label: 'scattered-naive' }),
  ]);
  const bench = `MemoryStore multi-use: ${String(!s2sp.info.singleUse)} (s2sp/testing multiUseMemoryStore, BENCH-ONLY, so one token serves every request)`;
  console.log(bench);
  const token = (s2sp.info.tokens as string[])[0];
  const targets: Target[] = [
    { id: 's2sp-json', label: '**s2sp**, JSON', server: 's2sp', path: `/s2sp/data/${token}`, route: '/s2sp/data/:token' },
    { id: 's2sp-arrow', label: '**s2sp**, Arrow', server: 's2sp', path: `/s2sp/data/${token}`, route: '/s2sp/data/:token', accept: ACCEPT_ARROW },
    { id: 'naive', label: 'naive port (Set + filter), JSON', server: 'naive', path: '/naive/data', route: '/naive/data' },
    { id: 'naive-indexed', label: 'naive port, indexed rows[id], JSON', server: 'naive', path: '/naive/indexed', route: '/naive/indexed' },
  ];
  const client = keepAliveClient();
  const serverOf = (t: Target) => (t.server === 's2sp' ? s2sp : naive);
  const post = (t: Target, body: string) => client.post(serverOf(t).url(t.path), { body, accept: t.accept });
  const summaries: TargetSummary[] = [];
  let checked = '';
  try {
    // Same answer from s2sp and the naive port, before timing anything.
    const probe = JSON.stringify({ row_ids: rowIdLists(ROWS, 99).next(IDS), columns: COLUMNS });
    const fromS2sp = JSON.parse((await post(targets[0], probe)).body.toString('utf8'));
    const fromNaive = JSON.parse((await post(targets[2], probe)).body.toString('utf8'));
    const fromIndexed = JSON.parse((await post(targets[3], probe)).body.toString('utf8'));
    const arrowTable = tableFromIPC((await post(targets[1], probe)).body);
    if (JSON.stringify(fromS2sp) !== JSON.stringify(fromNaive) || JSON.stringify(fromNaive) !== JSON.stringify(fromIndexed)) {
      throw new Error('s2sp and the naive port answered different rows for the same request');
    }
    if (arrowTable.numRows !== IDS || arrowTable.numCols !== COLUMNS.length + 1) throw new Error('the Arrow answer has the wrong shape');
    checked = `Checked first: s2sp JSON, the naive port and its indexed variant answer the same document for one request; the Arrow answer has ${IDS} rows x ${COLUMNS.length + 1} columns.`;

    progress('warm-up');
    const warm = rowIdLists(ROWS, 11);
    for (let i = 0; i < 30; i++) {
      const body = JSON.stringify({ row_ids: warm.next(IDS), columns: COLUMNS });
      for (const t of targets) await post(t, body);
    }
    await s2sp.timings();
    await naive.timings();

    progress(`${requests} requests per target, interleaved`);
    const lists = rowIdLists(ROWS);
    const endToEnd = new Map<string, number[]>(targets.map((t) => [t.id, []]));
    const bytes = new Map<string, number[]>(targets.map((t) => [t.id, []]));
    const more = bounded(requests, flags.quick ? 30_000 : 120_000);
    for (let i = 0; more(i); i++) {
      const body = JSON.stringify({ row_ids: lists.next(IDS), columns: COLUMNS });
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(i + k) % targets.length];
        const response = await post(t, body);
        if (response.status !== 200) throw new Error(`${t.id} answered ${response.status}: ${response.body.toString('utf8').slice(0, 200)}`);
        endToEnd.get(t.id)!.push(response.ms);
        bytes.get(t.id)!.push(response.body.byteLength);
      }
    }
    const serverTimes: Record<'s2sp' | 'naive', RequestTiming[]> = { s2sp: await s2sp.timings(), naive: await naive.timings() };
    for (const t of targets) {
      const mine = serverTimes[t.server].filter((r) => r.route === t.route && (t.accept === undefined ? !r.accept.includes('arrow') : r.accept === t.accept));
      const serverMs = mine.map((r) => r.ms);
      const e2e = endToEnd.get(t.id)!;
      summaries.push({
        id: t.id,
        label: t.label,
        serverMs: spread(serverMs),
        endToEndMs: spread(e2e),
        serverP99: percentile(serverMs, 0.99),
        endToEndP99: percentile(e2e, 0.99),
        bytes: spread(bytes.get(t.id)!),
      });
    }
  } finally {
    client.close();
    await Promise.all([s2sp.stop(), naive.stop()]);
  }

  const naiveServer = summaries.find((s) => s.id === 'naive')!.serverMs.median;
  const rows = summaries.map((s) => [
    s.label,
    triple(s.serverMs, ms),
    ms(s.serverP99),
    triple(s.endToEndMs, ms),
    ms(s.endToEndP99),
    String(Math.round(s.bytes.median)),
    ratio(naiveServer, s.serverMs.median),
  ]);
  const json = summaries.find((s) => s.id === 's2sp-json')!;
  const arrow = summaries.find((s) => s.id === 's2sp-arrow')!;
  return {
    tables: [
      {
        header: [
          'target',
          'server ms (min / median / max)',
          'server p99',
          'end-to-end ms (min / median / max)',
          'e2e p99',
          'bytes',
          'naive server time / this',
        ],
        rows,
        align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals: [
      goal('Scattered selection, s2sp JSON: server time', json.serverMs.median, '<=', 2, 'ms'),
      goal('Scattered selection, s2sp Arrow: server time', arrow.serverMs.median, '<=', 2, 'ms'),
    ],
    notes: [
      `${json.serverMs.n} requests per target (a fresh seeded list of ${IDS} distinct ids each, the same lists for every target), interleaved, after 30 warm-up requests each.`,
      'Server time: fastify `reply.elapsedTime` in an onResponse hook (onRequest to the response handed to the socket), recorded by the server child and fetched afterwards. End-to-end: node:http with a keep-alive agent, request written to response fully read.',
      bench + '.',
      checked,
    ],
    data: { rows: ROWS, ids: IDS, columns: COLUMNS, requests, targets: summaries },
  };
});

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}
