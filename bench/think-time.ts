/**
 * Think time: every token is single use, so every real fetch is the first
 * fetch of a fresh body. Between the resource tool's answer and the
 * consumer's fetch an LLM reads the abstract; the data plane uses that gap to
 * prepare the body (src/data/body-preparation.ts). For a fresh 1M x 10 body
 * fetched whole as JSON, Arrow+LZ4 and Arrow+ZSTD, side by side in one run:
 *
 * - prepared, after the gap: minted on a plane that prepares that form (as
 *   `prepare: 'auto'` does once a tool's fetches ask for it), fetched
 *   `--gap` seconds later (default 3);
 * - prepared, no gap: the same plane, fetched at once (the fetch joins the
 *   preparation under way);
 * - today, no gap: minted on a plane with `prepare: 'off'`, fetched at once;
 * - prebuilt bytes: the same response sent from one Buffer by the same process;
 * - prebuilt bytes in new memory: that Buffer copied into newly allocated memory
 *   just before the fetch (untimed), so the kernel sends it from pages it has
 *   not copied before, as much of a prepared body is (bench/analysis.md,
 *   "Think time after the gap: the kernel's first copy"); full runs only.
 *
 * Each fresh body is a new copy (mint-cold): nothing of it is encoded before
 * its put. The five (four in quick runs) are interleaved, rotating who goes first.
 *
 *   node dist/bench/think-time.js [--quick] [--reps N] [--gap S]   (quick: 1 round, a 2 s gap)
 */
import { unlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACCEPT_ARROW_LZ4, ACCEPT_ARROW_ZSTD } from './lib/dataset.js';
import { timedPost } from './lib/http-client.js';
import { goal, mb, ratio, secs, spread, triple, type Goal, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild, quiesce } from './lib/server-child.js';
import type { PreparedForm } from '../src/data/body-preparation.js';

const ROWS = 1_000_000;

const FORMS = [
  { id: 'json', label: 'JSON', accept: undefined as string | undefined, limit: 3 },
  { id: 'lz4', label: 'Arrow+LZ4', accept: ACCEPT_ARROW_LZ4 as string | undefined, limit: 1.5 },
  { id: 'zstd', label: 'Arrow+ZSTD', accept: ACCEPT_ARROW_ZSTD as string | undefined, limit: 1.5 },
];

type Target = 'prepared-gap' | 'prepared-now' | 'today-now' | 'prebuilt' | 'prebuilt-new-memory';
const TARGETS: Target[] = ['prepared-gap', 'prepared-now', 'today-now', 'prebuilt', 'prebuilt-new-memory'];

/** "Today, no gap" may be this much faster before "prepared, no gap" reads as slower: the run-to-run noise of a 1M-row fetch here. */
const NO_GAP_TOLERANCE = 1.1;

interface FormSummary {
  id: string;
  label: string;
  bytes: number;
  seconds: Partial<Record<Target, Spread>> & Record<Exclude<Target, 'prebuilt-new-memory'>, Spread>;
}

await runScenario('think-time', 'Think time: a fresh 1M x 10 body prepared while the LLM reads the abstract', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 1 : 5);
  // Quick: a 2 s gap (preparing a 1M x 10 body as JSON takes ~1 s on two idle cores) and one round.
  const gapAt = flags.argv.indexOf('--gap');
  const gapSeconds = gapAt >= 0 ? Number(flags.argv[gapAt + 1]) : flags.quick ? 2 : 3;
  if (!Number.isFinite(gapSeconds) || gapSeconds < 0) throw new Error(`--gap needs seconds >= 0, got ${flags.argv[gapAt + 1]}`);
  const formBudgetMs = flags.quick ? 60_000 : 180_000;
  // Quick runs measure the goals' lines only: prebuilt bytes in new memory are context, for full runs.
  const withNewMemory = !flags.quick;
  const targets = withNewMemory ? TARGETS : TARGETS.filter((target) => target !== 'prebuilt-new-memory');
  progress(`starting the s2sp server (${ROWS.toLocaleString('en-US')} rows)`);
  const server = await ServerChild.start(
    's2sp-server',
    {
      rows: ROWS,
      planes: [
        ...FORMS.map((form) => ({ prefix: `/prepared-${form.id}`, coldStore: true, prepare: [form.id as PreparedForm] })),
        { prefix: '/today', coldStore: true, prepare: 'off' as const },
      ],
    },
    { cpuProfAll: flags.cpuProfAll, label: 'think-time' },
  );
  const summaries: FormSummary[] = [];
  try {
    for (const form of FORMS) {
      progress(`${form.label}`);
      const file = join(tmpdir(), `s2sp-bench-${process.pid}-think-${form.id}.bin`);
      const fresh = async (prefix: string) => server.url(`${prefix}/s2sp/data/${await server.request<string>('mint-cold', { prefix })}`);
      // The capture is also the warm-up (workers started, code paths compiled).
      const captured = await timedPost(await fresh('/today'), { body: '{}', accept: form.accept, saveTo: file });
      if (captured.status !== 200) throw new Error(`${form.label}: answered ${captured.status}`);
      await server.request('load-prebuilt', { file, type: captured.contentType });
      const measure = async (target: Target): Promise<number> => {
        await quiesce([server]);
        let url: string;
        if (target === 'prebuilt-new-memory') await server.request('prebuilt-to-new-memory');
        if (target === 'prebuilt' || target === 'prebuilt-new-memory') url = server.url('/bench/prebuilt');
        else url = await fresh(target === 'today-now' ? '/today' : `/prepared-${form.id}`);
        if (target === 'prepared-gap') await sleep(gapSeconds * 1000);
        const transfer = await timedPost(url, { body: '{}', accept: form.accept });
        if (transfer.status !== 200) throw new Error(`${form.label} ${target}: answered ${transfer.status}`);
        if (transfer.bytes !== captured.bytes) throw new Error(`${form.label} ${target}: ${transfer.bytes} bytes, captured ${captured.bytes}`);
        return transfer.seconds;
      };
      const runs: Record<Target, number[]> = { 'prepared-gap': [], 'prepared-now': [], 'today-now': [], prebuilt: [], 'prebuilt-new-memory': [] };
      // The Arrow answers take tens of milliseconds, where one scheduling hiccup moves a ratio by
      // half: twice the repetitions (each costs little more than the gap).
      const more = bounded(form.id === 'json' ? reps : 2 * reps, formBudgetMs);
      for (let rep = 0; more(rep); rep++) {
        for (let k = 0; k < targets.length; k++) {
          const target = targets[(rep + k) % targets.length];
          runs[target].push(await measure(target));
        }
      }
      await server.request('drop-prebuilt');
      unlinkSync(file);
      summaries.push({
        id: form.id,
        label: form.label,
        bytes: captured.bytes,
        seconds: {
          'prepared-gap': spread(runs['prepared-gap']),
          'prepared-now': spread(runs['prepared-now']),
          'today-now': spread(runs['today-now']),
          prebuilt: spread(runs.prebuilt),
          ...(withNewMemory ? { 'prebuilt-new-memory': spread(runs['prebuilt-new-memory']) } : {}),
        },
      });
    }
  } finally {
    await server.stop();
  }

  const names: Record<Target, string> = {
    'prepared-gap': `**prepared, fetched after ${gapSeconds} s**`,
    'prepared-now': 'prepared, fetched at once',
    'today-now': "today (`prepare: 'off'`), fetched at once",
    prebuilt: 'prebuilt bytes',
    'prebuilt-new-memory': 'prebuilt bytes in new memory',
  };
  const rows: string[][] = [];
  const goals: Goal[] = [];
  for (const s of summaries) {
    const base = s.seconds.prebuilt.median;
    for (const target of targets) rows.push([s.label, names[target], triple(s.seconds[target]!, secs), mb(s.bytes), ratio(s.seconds[target]!.median, base)]);
    const limit = FORMS.find((f) => f.id === s.id)!.limit;
    goals.push(
      goal(
        `${s.label}: a fresh body fetched ${gapSeconds} s after its put / prebuilt bytes`,
        s.seconds['prepared-gap'].median / base,
        '<=',
        limit,
        'x',
        `${secs(s.seconds['prepared-gap'].median)} s vs ${secs(base)} s`,
      ),
      goal(
        `${s.label}: no think time, prepared / today`,
        s.seconds['prepared-now'].median / s.seconds['today-now'].median,
        '<=',
        NO_GAP_TOLERANCE,
        'x',
        `${secs(s.seconds['prepared-now'].median)} s vs ${secs(s.seconds['today-now'].median)} s`,
      ),
    );
  }
  return {
    tables: [
      {
        header: ['form', 'fetch', 'seconds (min / median / max)', 'MB on the wire', 'vs prebuilt'],
        rows,
        align: ['l', 'l', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes: [
      `A fresh body per fetch: a new copy of the 1M x 10 body behind a new single-use token (nothing of it encoded before its put); ${reps} repetitions per JSON line and ${2 * reps} per Arrow line, interleaved, order rotating; min / **median** / max.`,
      `The think time is simulated by waiting ${gapSeconds} s (\`--gap\`) between the put and the fetch; each form's bodies are minted on a plane that prepares that form, as \`prepare: 'auto'\` does once a tool's fetches ask for it (each plane has its own pool of encoder threads; only one works at a time).`,
      `"No think time, prepared / today" allows ${NO_GAP_TOLERANCE}x: the spread of a fresh 1M-row fetch between runs on this machine.`,
      ...(withNewMemory
        ? [
            'Prebuilt bytes in new memory (full runs only): the prebuilt Buffer copied into newly allocated memory just before each such fetch (untimed), so the kernel sends it from pages it has not copied before. On this machine that costs several times the plain prebuilt line (bench/analysis.md, "Think time after the gap: the kernel\'s first copy"); prepared bytes sit in buffers the encoder workers allocated moments before, partly such pages. The goals compare with plain prebuilt bytes.',
          ]
        : []),
    ],
    data: { rows: ROWS, gapSeconds, reps, forms: summaries },
  };
});
