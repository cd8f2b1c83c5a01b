/**
 * Large fetch: the 1M-row x 10-column body, in full and projected to 3
 * columns, as JSON, Arrow and Arrow+LZ4, against two baselines in the same
 * run, on the same data, with the same client (curl):
 *
 * - prebuilt: the very bytes of the s2sp response (captured once by the
 *   client) sent from one Buffer by the same fastify process: the HTTP
 *   stack's physical limit for that many bytes;
 * - naive: a separate server keeping the rows as JS objects and answering
 *   `JSON.stringify` of the selection (JSON cases only: it has no Arrow).
 *
 * The three are interleaved (the order rotates each repetition), and every
 * server's RSS is reset (after a gc) right before its request, so the peak
 * it reports is that request's.
 *
 *   node dist/bench/large-fetch.js [--quick] [--reps N] [--cpu-prof | --cpu-prof-all]
 */
import { unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACCEPT_ARROW, ACCEPT_ARROW_LZ4 } from './lib/dataset.js';
import { bigClientName, timedPost, type Transfer } from './lib/http-client.js';
import { goal, mb, ratio, secs, spread, triple, type Goal, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { PROFILE_DIR, ServerChild, quiesce } from './lib/server-child.js';

const ROWS = 1_000_000;
const PROJECTION = JSON.stringify({ columns: ['i1', 'f1', 's1'] });

interface Case {
  id: string;
  label: string;
  body: string;
  accept?: string;
  json: boolean;
}

// LZ4 last: its first response compresses the body's buffers, which the data plane then keeps
// (bench/compression.ts measures that step on its own); the cases before it see none of it.
const CASES: Case[] = [
  { id: 'full-json', label: 'full, JSON', body: '{}', json: true },
  { id: 'full-arrow', label: 'full, Arrow', body: '{}', accept: ACCEPT_ARROW, json: false },
  { id: 'cols3-json', label: '3 columns, JSON', body: PROJECTION, json: true },
  { id: 'cols3-arrow', label: '3 columns, Arrow', body: PROJECTION, accept: ACCEPT_ARROW, json: false },
  { id: 'full-arrow-lz4', label: 'full, Arrow+LZ4', body: '{}', accept: ACCEPT_ARROW_LZ4, json: false },
  { id: 'cols3-arrow-lz4', label: '3 columns, Arrow+LZ4', body: PROJECTION, accept: ACCEPT_ARROW_LZ4, json: false },
];

type Target = 's2sp' | 'prebuilt' | 'naive';

interface Run extends Transfer {
  rssBefore: number;
  rssPeak: number;
  rssGrowth: number;
}

/** One target's figures for one case. */
export interface TargetSummary {
  seconds: Spread;
  bytes: number;
  mbPerSecond: number;
  rssGrowth: Spread;
  rssPeak: Spread;
  runs: Run[];
}

/** One case's figures (bench/results/large-fetch.json `data.cases`). */
export interface CaseSummary {
  id: string;
  label: string;
  s2sp: TargetSummary;
  prebuilt: TargetSummary;
  naive?: TargetSummary;
}

await runScenario('large-fetch', 'Large fetch: 1M rows x 10 columns', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 1 : 7);
  const caseBudgetMs = flags.quick ? 45_000 : 150_000;
  progress(`starting the s2sp and naive servers (${ROWS.toLocaleString('en-US')} rows each)`);
  const [s2sp, naive] = await Promise.all([
    ServerChild.start('s2sp-server', { rows: ROWS }, { cpuProfAll: flags.cpuProfAll, label: 'large-fetch-s2sp' }),
    ServerChild.start('naive-server', { rows: ROWS }, { cpuProfAll: flags.cpuProfAll, label: 'large-fetch-naive' }),
  ]);
  const bench = `MemoryStore multi-use: ${String(!s2sp.info.singleUse)} (s2sp/testing multiUseMemoryStore, BENCH-ONLY, so one token serves every repetition)`;
  console.log(bench);
  const token = (s2sp.info.tokens as string[])[0];
  const cachedBytes = Number(s2sp.info.cachedBytes);
  const summaries: CaseSummary[] = [];
  try {
    // Quick: the full-body cases only (the goals'); the 3-column projections are context, for full runs.
    for (const c of flags.quick ? CASES.filter((each) => each.body !== PROJECTION) : CASES) {
      progress(`case ${c.label}`);
      const s2spUrl = s2sp.url(`/s2sp/data/${token}`);
      const file = join(tmpdir(), `s2sp-bench-${process.pid}-${c.id}.bin`);
      // The capture is also the s2sp warm-up (workers started, code paths compiled).
      const captured = await timedPost(s2spUrl, { body: c.body, accept: c.accept, saveTo: file });
      if (captured.status !== 200) throw new Error(`${c.label}: s2sp answered ${captured.status}`);
      const spec = { body: c.body, accept: c.accept };
      const measure = async (target: Target): Promise<Run> => {
        const server = target === 'naive' ? naive : s2sp;
        if (target === 'prebuilt') await s2sp.request('load-prebuilt', { file, type: captured.contentType });
        const url = target === 's2sp' ? s2spUrl : target === 'prebuilt' ? s2sp.url('/bench/prebuilt') : naive.url('/naive/data');
        await quiesce([s2sp, naive]);
        const rssBefore = await server.resetRss(false);
        const transfer = await timedPost(url, spec);
        const { peak } = await server.rss();
        if (target === 'prebuilt') await s2sp.request('drop-prebuilt');
        if (transfer.status !== 200) throw new Error(`${c.label}: ${target} answered ${transfer.status}`);
        if (target === 'prebuilt' && transfer.bytes !== captured.bytes)
          throw new Error(`${c.label}: prebuilt sent ${transfer.bytes} bytes, captured ${captured.bytes}`);
        return { ...transfer, rssBefore, rssPeak: peak, rssGrowth: peak - rssBefore };
      };
      const targets: Target[] = c.json ? ['s2sp', 'prebuilt', 'naive'] : ['s2sp', 'prebuilt'];
      await measure('prebuilt'); // warm-ups, not recorded
      if (c.json) await measure('naive');
      const runs: Record<Target, Run[]> = { s2sp: [], prebuilt: [], naive: [] };
      const more = bounded(reps, caseBudgetMs);
      for (let rep = 0; more(rep); rep++) {
        for (let k = 0; k < targets.length; k++) {
          const target = targets[(rep + k) % targets.length]; // rotate who goes first
          runs[target].push(await measure(target));
        }
      }
      if (flags.cpuProf) {
        // One more run of each server under the profiler, not recorded (the profiler slows it).
        await s2sp.profiled(true, `large-fetch-s2sp-${c.id}`, () => timedPost(s2spUrl, spec));
        if (c.json) await naive.profiled(true, `large-fetch-naive-${c.id}`, () => timedPost(naive.url('/naive/data'), spec));
      }
      unlinkSync(file);
      summaries.push({
        id: c.id,
        label: c.label,
        s2sp: summarize(runs.s2sp),
        prebuilt: summarize(runs.prebuilt),
        ...(c.json ? { naive: summarize(runs.naive) } : {}),
      });
    }
  } finally {
    await Promise.all([s2sp.stop(), naive.stop()]);
  }

  const rows: string[][] = [];
  for (const s of summaries) {
    const base = s.prebuilt.seconds.median;
    const line = (name: string, t: TargetSummary, extra: string) => [
      s.label,
      name,
      triple(t.seconds, secs),
      t.mbPerSecond.toFixed(0),
      mb(t.bytes),
      `${mb(t.rssGrowth.median)} (${mb(t.rssPeak.median)})`,
      ratio(t.seconds.median, base),
      extra,
    ];
    rows.push(line('**s2sp**', s.s2sp, s.naive ? `**${ratio(s.naive.seconds.median, s.s2sp.seconds.median)}**` : '-'));
    rows.push(line('prebuilt bytes', s.prebuilt, '-'));
    if (s.naive) rows.push(line('naive port', s.naive, '-'));
  }

  const byId = (id: string) => summaries.find((s) => s.id === id)!;
  const arrow = byId('full-arrow');
  const json = byId('full-json');
  const goals: Goal[] = [
    goal(
      'Arrow full fetch time / prebuilt-bytes time',
      arrow.s2sp.seconds.median / arrow.prebuilt.seconds.median,
      '<=',
      1.3,
      'x',
      `${secs(arrow.s2sp.seconds.median)} s vs ${secs(arrow.prebuilt.seconds.median)} s`,
    ),
    goal(
      'JSON full fetch time / prebuilt-bytes time',
      json.s2sp.seconds.median / json.prebuilt.seconds.median,
      '<=',
      6,
      'x',
      `${secs(json.s2sp.seconds.median)} s vs ${secs(json.prebuilt.seconds.median)} s`,
    ),
    goal(
      'JSON full fetch: naive port time / s2sp time',
      json.naive!.seconds.median / json.s2sp.seconds.median,
      '>=',
      4,
      'x',
      `${secs(json.naive!.seconds.median)} s vs ${secs(json.s2sp.seconds.median)} s`,
    ),
    goal(
      'JSON full fetch: s2sp server peak RSS growth / cached bytes',
      json.s2sp.rssGrowth.median / cachedBytes,
      '<=',
      1.5,
      'x',
      `growth ${mb(json.s2sp.rssGrowth.median)} MB (max ${mb(json.s2sp.rssGrowth.max)}), absolute peak ${mb(json.s2sp.rssPeak.median)} MB, cached ${mb(cachedBytes)} MB`,
    ),
  ];

  const notes = [
    `Client: ${bigClientName()} (a separate process), \`POST\` with \`content-type: application/json\`; ${reps} repetitions per target, interleaved, order rotating; min / **median** / max.`,
    bench + '.',
    `Cached body (store.stats().bytes): ${mb(cachedBytes)} MB for ${ROWS.toLocaleString('en-US')} rows.`,
    'Peak RSS: the server child samples its own RSS every 5 ms (in a worker thread, so a blocked event loop cannot hide a peak) and reads the kernel high-water mark (VmHWM, reset through /proc/self/clear_refs); the larger is reported. Before each request both servers run a full gc, then 100 ms of quiet, then the peak is reset. The column shows the median growth over the RSS just before the request, and (in parentheses) the absolute peak. The goal uses the growth.',
    'prebuilt bytes: the s2sp response of that case, saved by curl once, loaded into one Buffer by the s2sp server process and sent on another route (loaded before, dropped after each of its requests, so the s2sp runs never carry it).',
    'naive port: rows held as JS objects with `_row_id`, `JSON.stringify({body, total_rows, columns_returned})` of the selection (bench/servers/naive-server.ts); it speaks JSON only, so the Arrow cases have no naive line.',
    'MB/s: bytes on the wire / median seconds.',
    "The LZ4 cases run last. Their first response (the capture, not measured) compresses the body's buffers in the encoder workers; the data plane keeps them (62 MB for LZ4), so the measured LZ4 runs send cached compressed buffers, and the absolute RSS column of the LZ4 lines includes them. bench/compression.ts measures the first compression, ZSTD, and RSS over repeated compressing fetches.",
  ];
  if (flags.cpuProf || flags.cpuProfAll) notes.push(`CPU profiles: ${PROFILE_DIR}`);
  return {
    tables: [
      {
        header: [
          'case',
          'server',
          'seconds (min / median / max)',
          'MB/s',
          'MB on the wire',
          'peak RSS growth MB (absolute)',
          'time vs prebuilt',
          'naive / s2sp',
        ],
        rows,
        align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes,
    data: { rows: ROWS, cachedBytes, client: bigClientName(), reps, cases: summaries },
  };
});

function summarize(runs: Run[]): TargetSummary {
  const seconds = spread(runs.map((r) => r.seconds));
  const bytes = runs[runs.length - 1]?.bytes ?? NaN;
  return {
    seconds,
    bytes,
    mbPerSecond: bytes / seconds.median / 1e6,
    rssGrowth: spread(runs.map((r) => r.rssGrowth)),
    rssPeak: spread(runs.map((r) => r.rssPeak)),
    runs,
  };
}
