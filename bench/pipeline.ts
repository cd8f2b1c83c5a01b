/**
 * Pipeline: the demo's shape at scale. A generated 1M-row x 10-column table
 * is written as an Arrow IPC file into a temp dir; `s2sp serve FILE` (the
 * CLI, a child process over stdio) serves it as `read_table`; an MCP client
 * (this process, playing the agent) calls `read_table` with
 * abstract_domains, then the consumer tool `summarize_rows` of `s2sp
 * consumer` (another CLI child) with `abstract_data="*"` and the
 * resource_url, so the consumer fetches and summarizes every row.
 *
 * The same consumer child also reads the same rows from two other resource
 * servers, each its own process holding the same generated rows:
 * - the naive port (bench/servers/naive-server.ts): rows as JS objects,
 *   `JSON.stringify` of the selection;
 * - a stand-in for the Python reference's wire format
 *   (bench/servers/reference-stand-in.ts): the reference's JSON document,
 *   whatever the Accept, token deleted before sending.
 * Neither has an MCP side, so their resource_url is minted by the bench and
 * only the consumer leg is timed for them; s2sp's line shows both legs.
 *
 * Figures: wall time of each leg (MCP request to result) and the peak RSS of
 * each process (the kernel's high-water mark, VmHWM, read before it exits).
 *
 *   node dist/bench/pipeline.js [--quick] [--reps N]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableToIPC } from 'apache-arrow';
import { tableFromRows } from '../src/table/table-from-rows.js';
import { BENCH_COLUMNS, generateRows } from './lib/dataset.js';
import { mb, ratio, secs, spread, triple, type Goal, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild } from './lib/server-child.js';
import { CALL_OPTIONS, cliChild, toolText } from './lib/cli-child.js';

const ROWS = 1_000_000;

/** Peak RSS of a process over its life so far (VmHWM), or NaN where /proc has none. */
function peakRss(pid: number | null | undefined): number {
  if (pid === null || pid === undefined) return NaN;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface Run {
  readSeconds: number;
  consumeSeconds: number;
  resourcePeak: number;
  consumerPeak: number;
  summarizedRows: number;
}

/** One pipeline's figures (bench/results/pipeline.json `data.pipelines`). */
export interface PipelineSummary {
  id: string;
  label: string;
  read?: Spread;
  consume: Spread;
  total: Spread;
  resourcePeak: Spread;
  consumerPeak: Spread;
  runs: Run[];
}

await runScenario('pipeline', 'Pipeline: s2sp serve -> read_table -> s2sp consumer (abstract_data="*"), 1M rows x 10 columns (quick: 100k)', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 1 : 3);
  // Quick: a tenth of the rows (the scenario has no goal; quick runs check that it works).
  const rowCount = flags.quick ? ROWS / 10 : ROWS;
  const budgetMs = flags.quick ? 120_000 : 400_000;
  const dir = mkdtempSync(join(tmpdir(), 's2sp-bench-pipeline-'));
  const file = join(dir, 'table.arrow');
  progress(`writing ${rowCount.toLocaleString('en-US')} rows as an Arrow IPC file`);
  {
    const table = tableFromRows(generateRows(rowCount));
    writeFileSync(file, tableToIPC(table.select([...BENCH_COLUMNS]), 'file'));
  }
  const fileBytes = readFileSync(file).byteLength;
  const runs: Record<string, Run[]> = { s2sp: [], naive: [], reference: [] };
  try {
    const more = bounded(reps, budgetMs);
    for (let rep = 0; more(rep); rep++) {
      // Every process is fresh for each repetition, so each peak belongs to one pipeline run.
      const order = ['s2sp', 'naive', 'reference'];
      for (let k = 0; k < order.length; k++) {
        const id = order[(rep + k) % order.length];
        progress(`repetition ${rep + 1}: ${id}`);
        runs[id].push(await runPipeline(id, file, rowCount));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const summaries: PipelineSummary[] = [
    summarize('s2sp', '**s2sp** (Arrow on the wire)', runs.s2sp),
    summarize('naive', 'naive port (JSON)', runs.naive),
    summarize('reference', 'Python reference wire format, Node stand-in (JSON)', runs.reference),
  ];
  const s2sp = summaries[0];
  const rows = summaries.map((s) => [
    s.label,
    s.read ? triple(s.read, secs) : 'not timed (no MCP side)',
    triple(s.consume, secs),
    ratio(s.consume.median, s2sp.consume.median),
    mb(s.resourcePeak.median),
    mb(s.consumerPeak.median),
    ratio(s.consumerPeak.median, s2sp.consumerPeak.median),
  ]);
  // No goal of its own (issue 13, item 6 asks for the figures and their ratios).
  const goals: Goal[] = [];
  const notes = [
    `Table: ${rowCount.toLocaleString('en-US')} rows x 10 columns (bench/lib/dataset.ts), written as an Arrow IPC file of ${mb(fileBytes)} MB; ${reps} repetition(s), every process fresh each time, the order of the pipelines rotating; min / **median** / max.`,
    's2sp: `s2sp serve FILE` over stdio; the agent (this process, an MCP client) calls `read_table(abstract_domains="i1,s1")`, then `summarize_rows(abstract_data="*", resource_url)` on `s2sp consumer` (stdio), which fetches every row and column with fetchBody (Arrow, uncompressed on loopback) and summarizes them.',
    'naive port and reference stand-in: the same `s2sp consumer` child, the same call, with a resource_url on that server (minted by the bench: neither has an MCP side). They answer JSON whatever the Accept, so the consumer decodes 188 MB of JSON.',
    'The s2sp consumer leg is more than its fetch: fetchBody of the same body as Arrow (bench/compression.ts, consumer column) is a part of it; the rest is the consumer tool turning 1M rows into JS objects, merging and summarizing them (issue 13, item 4 is the consumer).',
    'read_table: MCP request to result, the body cached (`s2sp serve` read the file at start, before the timing). consumer leg: MCP request to result, fetch, decode, merge and summary included. Peak RSS: VmHWM of each process (its whole life: for s2sp serve that includes reading the file), read right after its last call.',
  ];
  return {
    tables: [
      {
        header: [
          'resource server',
          'read_table s (min / median / max)',
          'consumer leg s (min / median / max)',
          'consumer leg vs s2sp',
          'resource server peak RSS MB',
          'consumer peak RSS MB',
          'consumer RSS vs s2sp',
        ],
        rows,
        align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes,
    data: { rows: rowCount, fileBytes, reps, pipelines: summaries },
  };
});

async function runPipeline(id: string, file: string, rowCount: number): Promise<Run> {
  const consumer = await cliChild(['consumer'], 's2sp-bench-agent');
  try {
    let resourceUrl: string;
    let readSeconds = NaN;
    let resourcePeak: () => number;
    let stopResource: () => Promise<void>;
    if (id === 's2sp') {
      const resource = await cliChild(['serve', file], 's2sp-bench-agent');
      stopResource = resource.close;
      resourcePeak = () => peakRss(resource.pid());
      const started = performance.now();
      const read = await resource.client.callTool({ name: 'read_table', arguments: { abstract_domains: 'i1,s1' } }, undefined, CALL_OPTIONS);
      readSeconds = (performance.now() - started) / 1000;
      const envelope = JSON.parse(toolText(read)) as { total_rows: number; resource_url: string };
      if (envelope.total_rows !== rowCount) throw new Error(`read_table: ${envelope.total_rows} rows`);
      resourceUrl = envelope.resource_url;
    } else {
      const server = await ServerChild.start(id === 'naive' ? 'naive-server' : 'reference-stand-in', { rows: rowCount });
      stopResource = () => server.stop();
      resourcePeak = () => peakRss(server.pid);
      // The naive port takes any token; the stand-in only those it minted (and deletes them on use).
      const token = id === 'naive' ? randomBytes(32).toString('base64url') : await server.request<string>('mint');
      resourceUrl = server.url(`/s2sp/data/${token}`);
    }
    try {
      const started = performance.now();
      const summary = await consumer.client.callTool(
        { name: 'summarize_rows', arguments: { abstract_data: '*', resource_url: resourceUrl } },
        undefined,
        CALL_OPTIONS,
      );
      const consumeSeconds = (performance.now() - started) / 1000;
      const summarizedRows = Number((JSON.parse(toolText(summary)) as { row_count?: number }).row_count);
      if (summarizedRows !== rowCount) throw new Error(`${id}: summarize_rows saw ${summarizedRows} rows`);
      return { readSeconds, consumeSeconds, resourcePeak: resourcePeak(), consumerPeak: peakRss(consumer.pid()), summarizedRows };
    } finally {
      await stopResource();
    }
  } finally {
    await consumer.close();
  }
}

function summarize(id: string, label: string, runs: Run[]): PipelineSummary {
  const read = runs.every((r) => Number.isFinite(r.readSeconds)) ? spread(runs.map((r) => r.readSeconds)) : undefined;
  return {
    id,
    label,
    read,
    consume: spread(runs.map((r) => r.consumeSeconds)),
    total: spread(runs.map((r) => (Number.isFinite(r.readSeconds) ? r.readSeconds : 0) + r.consumeSeconds)),
    resourcePeak: spread(runs.map((r) => r.resourcePeak)),
    consumerPeak: spread(runs.map((r) => r.consumerPeak)),
    runs,
  };
}
