/**
 * Workers: the full 1M-row JSON fetch (and, for comparison, Arrow+LZ4, the
 * other format whose chunks are encoded in workers) with 0, 1 and 2 encoder
 * threads, side by side. One server process mounts the data plane three
 * times (prefixes /w0, /w1, /w2, `workers` 0, 1, 2) over one store, so the
 * three settings serve the same cached body to the same client (curl).
 *
 *   node dist/bench/workers.js [--quick] [--reps N]
 */
import { cpus } from 'node:os';
import { ACCEPT_ARROW_LZ4 } from './lib/dataset.js';
import { bigClientName, timedPost } from './lib/http-client.js';
import { mb, ratio, secs, spread, triple, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild, quiesce } from './lib/server-child.js';

const ROWS = 1_000_000;
const SETTINGS = [0, 1, 2];

interface Summary {
  format: string;
  workers: number;
  seconds: Spread;
  bytes: number;
  mbPerSecond: number;
  rssGrowth: Spread;
}

await runScenario('workers', 'Workers: the full 1M-row fetch with 0, 1 and 2 encoder threads', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 1 : 5);
  progress('starting the s2sp server with three data planes');
  const server = await ServerChild.start(
    's2sp-server',
    // No cache of compressed buffers: every LZ4 response compresses, which is what the thread count changes.
    { rows: ROWS, planes: SETTINGS.map((workers) => ({ prefix: `/w${workers}`, workers, encodedCache: 0 })) },
    { cpuProfAll: flags.cpuProfAll, label: 'workers-s2sp' },
  );
  const bench = `MemoryStore multi-use: ${String(!server.info.singleUse)} (s2sp/testing multiUseMemoryStore, BENCH-ONLY, so one token serves every repetition)`;
  console.log(bench);
  const token = (server.info.tokens as string[])[0];
  const formats = [
    { label: 'JSON', accept: undefined as string | undefined },
    { label: 'Arrow+LZ4', accept: ACCEPT_ARROW_LZ4 },
  ];
  const summaries: Summary[] = [];
  try {
    for (const f of formats) {
      const runs = new Map<number, Array<{ seconds: number; bytes: number; growth: number }>>(SETTINGS.map((w) => [w, []]));
      const fetchWith = async (workers: number) => {
        await quiesce([server]);
        const before = await server.resetRss(false);
        const t = await timedPost(server.url(`/w${workers}/s2sp/data/${token}`), { body: '{}', accept: f.accept });
        const { peak } = await server.rss();
        if (t.status !== 200) throw new Error(`${f.label} with ${workers} workers answered ${t.status}`);
        return { seconds: t.seconds, bytes: t.bytes, growth: peak - before };
      };
      // Quick: no warm-up (its figures are indicative; the full run warms each setting once).
      if (!flags.quick) {
        progress(`${f.label}: warm-up`);
        for (const w of SETTINGS) await fetchWith(w);
      }
      const more = bounded(reps, flags.quick ? 30_000 : 120_000);
      for (let rep = 0; more(rep); rep++) {
        progress(`${f.label}: rep ${rep + 1}/${reps}`);
        for (let k = 0; k < SETTINGS.length; k++) {
          const w = SETTINGS[(rep + k) % SETTINGS.length];
          runs.get(w)!.push(await fetchWith(w));
        }
      }
      if (flags.cpuProf) {
        for (const w of SETTINGS) await server.profiled(true, `workers-${f.label.toLowerCase().replace(/\W+/g, '-')}-w${w}`, () => fetchWith(w));
      }
      for (const w of SETTINGS) {
        const mine = runs.get(w)!;
        const seconds = spread(mine.map((r) => r.seconds));
        const bytes = mine[0].bytes;
        summaries.push({
          format: f.label,
          workers: w,
          seconds,
          bytes,
          mbPerSecond: bytes / seconds.median / 1e6,
          rssGrowth: spread(mine.map((r) => r.growth)),
        });
      }
    }
  } finally {
    await server.stop();
  }
  const rows = summaries.map((s) => {
    const zero = summaries.find((x) => x.format === s.format && x.workers === 0)!;
    return [
      s.format,
      String(s.workers),
      triple(s.seconds, secs),
      s.mbPerSecond.toFixed(0),
      mb(s.bytes),
      mb(s.rssGrowth.median),
      ratio(zero.seconds.median, s.seconds.median),
    ];
  });
  const json = (w: number) => summaries.find((s) => s.format === 'JSON' && s.workers === w)!;
  return {
    tables: [
      {
        header: ['format', 'workers', 'seconds (min / median / max)', 'MB/s', 'MB on the wire', 'peak RSS growth MB', 'speed-up vs 0 workers'],
        rows,
        align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals: [],
    notes: [
      `No goal of its own; JSON with 2 workers vs 0: ${ratio(json(0).seconds.median, json(2).seconds.median)} (on this ${cpus().length}-core machine the client, curl, needs a core too).`,
      `Client: ${bigClientName()}; ${reps} repetitions per setting ${flags.quick ? 'with no warm-up (quick)' : 'after one warm-up each'}, interleaved with the order rotating. Before each request: a full gc in the server, 100 ms of quiet, then the RSS peak is reset (as in large-fetch).`,
      'Arrow+LZ4: the planes run with `encodedCache: 0`, so every response compresses every buffer (the default plane keeps them after the first response; bench/compression.ts compares both). Since the workers\' event loops turn between tasks (native-notes.md, "lz4-napi"), LZ4 in workers no longer grows the server.',
      'workers = 0: every chunk is encoded on the main thread (`workers: 0`); 1 and 2: a piscina pool of that many threads, a window of that many chunks in flight.',
      bench + '.',
    ],
    data: { rows: ROWS, reps, summaries },
  };
});
