/**
 * bench/README.md and bench/results/large-fetch.svg, rebuilt from the
 * results of a full run. If bench/analysis.md exists (a hand-written reading
 * of the misses, with profiles), it is included as is.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseSummary } from '../large-fetch.js';
import { BENCH_DIR, RESULTS_DIR, goalsTable, scenarioMarkdown, secs, type ScenarioResult } from './report.js';
import { barChartSvg } from './svg-chart.js';

const CHART_FILE = 'large-fetch.svg';

/** Writes bench/results/large-fetch.svg from the large-fetch results. */
export function writeLargeFetchChart(result: ScenarioResult): string {
  const data = result.data as { cases: CaseSummary[]; client: string; reps: number };
  const svg = barChartSvg({
    title: 'Large fetch, 1M rows x 10 columns: seconds per request (lower is better)',
    subtitle: `median of ${data.reps} (whisker: min-max), client ${data.client}, 127.0.0.1; ${result.machine.cores} cores, ${result.machine.cpu}, Node ${result.machine.node}, ${result.machine.date.slice(0, 10)}`,
    axis: 'seconds (median)',
    series: [
      { name: 's2sp', color: '#2b6cb0' },
      { name: 'prebuilt bytes', color: '#a0aec0' },
      { name: 'naive port', color: '#c53030' },
    ],
    groups: data.cases.map((c) => ({
      label: c.label,
      bars: [
        { series: 's2sp', value: c.s2sp.seconds.median, min: c.s2sp.seconds.min, max: c.s2sp.seconds.max },
        { series: 'prebuilt bytes', value: c.prebuilt.seconds.median, min: c.prebuilt.seconds.min, max: c.prebuilt.seconds.max },
        ...(c.naive ? [{ series: 'naive port', value: c.naive.seconds.median, min: c.naive.seconds.min, max: c.naive.seconds.max }] : []),
      ],
    })),
    format: (v) => `${secs(v)} s`,
    tickFormat: (v, step) => `${v.toFixed(Math.max(0, -Math.floor(Math.log10(step))))} s`,
  });
  const file = join(RESULTS_DIR, CHART_FILE);
  writeFileSync(file, svg);
  return file;
}

/** The summary of goals across scenarios, as markdown. */
export function summaryMarkdown(results: readonly ScenarioResult[]): string {
  const goals = results.flatMap((r) => r.goals.map((g) => ({ g, scenario: r.scenario })));
  return goalsTable(
    goals.map((x) => x.g),
    goals.map((x) => x.scenario),
  );
}

/** Rebuilds bench/README.md. */
export function writeReadme(results: readonly ScenarioResult[], wallSeconds: number): string {
  const machine = results[0].machine;
  const goals = results.flatMap((r) => r.goals);
  const met = goals.filter((g) => g.met).length;
  const analysisFile = join(BENCH_DIR, 'analysis.md');
  const analysis = existsSync(analysisFile) ? readFileSync(analysisFile, 'utf8').trim() : undefined;
  const hasChart = results.some((r) => r.scenario === 'large-fetch');
  const parts = [
    '# s2sp benchmarks',
    '_This file is written by `npm run bench` (a full run, not `--quick`); edit bench/lib/readme.ts, or bench/analysis.md for the analysis section, not this file._',
    "Every scenario runs s2sp and its baseline in the same run, on the same data, with the same client, and prints ratios. The machine is shared and noisy: every figure is repeated and shown as min / **median** / max; goals and ratios use medians. Servers run in their own child processes (so each one's RSS is its own), on 127.0.0.1 only.",
    '## Summary (latest full run)',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.totalMemoryGiB} GiB, Node ${machine.node}, ${machine.platform}; ${machine.date.slice(0, 16).replace('T', ' ')} UTC; whole run ${Math.round(wallSeconds)} s; load average ${machine.loadAverage1m} when it started (other work shares this machine). ${met} of ${goals.length} goals met.`,
    summaryMarkdown(results),
    ...(hasChart ? ['## Large fetch chart', `![Large fetch: seconds per request, s2sp vs prebuilt bytes vs naive port](results/${CHART_FILE})`] : []),
    '## How to run',
    [
      '```sh',
      'npm run bench                      # every scenario (about 11 minutes here), rewrites this file',
      'npm run bench -- --quick           # every scenario, fewer repetitions (about 4 minutes here); results JSON only',
      'npm run bench -- --only large-fetch,scattered',
      'node dist/bench/<scenario>.js [--quick]   # one scenario alone (after npx tsc -p .)',
      '```',
      '',
      "Scenarios: `ingest`, `memory`, `control-plane`, `inline-threshold`, `large-fetch`, `compression`, `scattered`, `small-requests`, `workers`, `pipeline`, `query-rows` (query_rows: a 1M-row join across two `s2sp serve` children against DuckDB on local Parquet files). Other flags: `--duration S` (seconds per autocannon run, small-requests; default 10, quick 2), `--fresh-rows` (small-requests: every request asks for the next of 4,096 id lists instead of the same 50 rows, so V8's number-string cache does not hold their float texts), `--reps N` (repetitions, every scenario), `--cpu-prof` (large-fetch, small-requests and workers add one unrecorded run per case with the server's main thread under the V8 profiler), `--cpu-prof-all` (server children run under `node --cpu-prof`: every thread, including the encoder workers, whole lifetime), `--report` (rebuild this file from bench/results/*.json without running). Profiles go to `$TMPDIR/s2sp-bench-profiles/`; `node dist/bench/profile-top.js FILE [N]` lists a profile's top self-time functions; `node dist/bench/compare.js BEFORE_DIR AFTER_DIR` puts the goals of two runs (copies of bench/results/) side by side.",
      '',
      'Each scenario prints a markdown table and its goals, and writes `bench/results/<scenario>.json` (every measurement, the machine, the notes). The data-plane scenarios use the `multiUseMemoryStore` of s2sp/testing, a BENCH-ONLY store that lets one token be fetched repeatedly; each one prints that it did. small-requests is the exception: every s2sp request there takes a fresh single-use token, minted through the store before the run.',
    ].join('\n'),
    ...(analysis ? ['## Where the time goes (the misses)', analysis] : []),
    '## Scenarios',
    ...results.map((r) => scenarioMarkdown(r, 3)),
  ];
  const file = join(BENCH_DIR, 'README.md');
  writeFileSync(file, `${parts.join('\n\n')}\n`);
  return file;
}
