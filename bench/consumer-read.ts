/**
 * Consumer read: fetchBody of the whole 1M-row x 10-column body, as JSON and
 * as Arrow (uncompressed: loopback), each read in a fresh child process so
 * its peak RSS is its own (bench/lib/consumer-child.ts). The server is the
 * s2sp bench server, a multi-use token (BENCH-ONLY), so every read gets the
 * same bytes. Issue 13, item 4: JSON within 3 s, Arrow at about 1 s, memory
 * bounded by decoding the JSON as it arrives.
 *
 *   node dist/bench/consumer-read.js [--quick] [--reps N] [--cpu-prof]
 *
 * `--cpu-prof` profiles the first read of each format (the child's whole
 * life) into the bench profile directory.
 */
import { fork } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsumerReading } from './lib/consumer-child.js';
import { goal, mb, secs, spread, triple, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { PROFILE_DIR, ServerChild, quiesce } from './lib/server-child.js';

const ROWS = 1_000_000;
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'lib', 'consumer-child.js');
/** `json-whole`: the JSON body buffered whole, then decoded (the consumer before it streamed). */
const FORMATS = ['json', 'arrow', 'json-whole'] as const;
type Format = (typeof FORMATS)[number];

/** One format's figures (bench/results/consumer-read.json `data.formats`). */
export interface FormatSummary {
  format: Format;
  bytes: number;
  seconds: Spread;
  rssPeak: Spread;
  readings: ConsumerReading[];
}

function readOnce(url: string, format: Format, profile: boolean): Promise<ConsumerReading> {
  const execArgv = ['--expose-gc'];
  if (profile) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=consumer-read-${format}-${Date.now()}.cpuprofile`);
  }
  return new Promise((resolve, reject) => {
    const child = fork(CHILD, [url, format], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let reading: ConsumerReading | undefined;
    child.on('message', (m: ConsumerReading) => (reading = m));
    child.on('error', reject);
    child.on('exit', (code) => (reading !== undefined && code === 0 ? resolve(reading) : reject(new Error(`consumer child (${format}) exited ${code}`))));
  });
}

await runScenario('consumer-read', 'Consumer read: fetchBody of 1M rows x 10 columns, JSON and Arrow', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 1 : 5);
  const budgetMs = flags.quick ? 60_000 : 180_000;
  progress(`starting the s2sp server (${ROWS.toLocaleString('en-US')} rows)`);
  const server = await ServerChild.start('s2sp-server', { rows: ROWS });
  const url = server.url(`/s2sp/data/${(server.info.tokens as string[])[0]}`);
  const readings: Record<Format, ConsumerReading[]> = { json: [], arrow: [], 'json-whole': [] };
  // Quick: json and arrow (the goals'); json-whole, the reference, only in full runs.
  const formats = flags.quick ? FORMATS.filter((format) => format !== 'json-whole') : FORMATS;
  try {
    const more = bounded(reps, budgetMs);
    for (let rep = 0; more(rep); rep++) {
      for (let k = 0; k < formats.length; k++) {
        const format = formats[(rep + k) % formats.length];
        await quiesce([server]);
        const reading = await readOnce(url, format, flags.cpuProf && rep < formats.length);
        if (reading.rows !== ROWS) throw new Error(`${format}: ${reading.rows} rows`);
        progress(`${format}: ${secs(reading.seconds)} s, peak RSS ${mb(reading.rssPeak)} MB`);
        readings[format].push(reading);
      }
    }
  } finally {
    await server.stop();
  }
  const summaries: FormatSummary[] = formats.map((format) => ({
    format,
    bytes: readings[format][0].bytes,
    seconds: spread(readings[format].map((r) => r.seconds)),
    rssPeak: spread(readings[format].map((r) => r.rssPeak)),
    readings: readings[format],
  }));
  const [json, arrow] = summaries;
  const whole = summaries.find((s) => s.format === 'json-whole');
  return {
    tables: [
      {
        header: ['format', 'MB on the wire', 's (min / median / max)', 'consumer peak RSS MB (min / median / max)'],
        rows: summaries.map((s) => [s.format, mb(s.bytes), triple(s.seconds, secs), triple(s.rssPeak, mb)]),
        align: ['l', 'r', 'r', 'r'],
      },
    ],
    goals: [
      goal(
        'Consumer reads 1M x 10 as JSON (fetchBody to a Table)',
        json.seconds.median,
        '<=',
        3,
        's',
        `peak RSS ${mb(json.rssPeak.median)} MB` +
          (whole === undefined ? '' : `; buffered whole, then decoded: ${secs(whole.seconds.median)} s, ${mb(whole.rssPeak.median)} MB`),
      ),
      goal('Consumer reads 1M x 10 as Arrow (fetchBody to a Table)', arrow.seconds.median, '<=', 1.2, 's', `peak RSS ${mb(arrow.rssPeak.median)} MB`),
    ],
    notes: [
      `fetchBody(url, { format }) of every row and column, each read in a fresh child process (peak RSS: its VmHWM, the whole process, Node itself included); ${reps} repetitions per format, alternating; min / median / max.`,
      'json: fetchBody, which decodes a JSON answer as it arrives. json-whole: the body buffered whole and then decoded by bodyFromJson, as fetchBody did before (the same decoder, kept as the reference).',
      'The server: the s2sp bench server, one process, the body in a MemoryStore (multi-use token, BENCH-ONLY); Arrow is uncompressed, as fetchBody asks on loopback.',
    ],
    data: { rows: ROWS, reps, formats: summaries },
  };
});
