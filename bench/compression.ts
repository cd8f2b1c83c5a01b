/**
 * Compression: the full 1M-row x 10-column body as Arrow+LZ4 and Arrow+ZSTD
 * (and uncompressed Arrow for scale), side by side in one run:
 *
 * - warm: a body whose buffers an earlier response already compressed (the
 *   data plane keeps them, per body), against the same bytes sent prebuilt
 *   from one Buffer by the same server: the goal;
 * - cold: a fresh body (a new single-use token each time), so every buffer
 *   is compressed during the response, in the encoder workers; and a plane
 *   without the cache, which compresses every response;
 * - server RSS over 20 consecutive LZ4 fetches that each compress in the
 *   workers (the plane without the cache), a full gc after each;
 * - the consumer: fetchBody of a fresh body (a new single-use token, the
 *   real workload) with each codec, on loopback, which is how fetchBody's
 *   default codec was chosen (full runs only: context, not a goal, and
 *   consumer-read measures fetchBody itself).
 *
 *   node dist/bench/compression.js [--quick] [--reps N]
 */
import { unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchBody, type BodyCodec } from '../src/consumer/fetch-body.js';
import { ACCEPT_ARROW, ACCEPT_ARROW_LZ4, ACCEPT_ARROW_ZSTD } from './lib/dataset.js';
import { bigClientName, timedPost } from './lib/http-client.js';
import { goal, mb, ratio, secs, spread, triple, type Goal, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { DEPLOYMENT_ENV, ServerChild, quiesce } from './lib/server-child.js';

const ROWS = 1_000_000;
const RSS_FETCHES = 20;

interface Codec {
  id: 'none' | 'lz4' | 'zstd';
  label: string;
  accept: string;
}

const CODECS: Codec[] = [
  { id: 'none', label: 'Arrow (uncompressed)', accept: ACCEPT_ARROW },
  { id: 'lz4', label: 'Arrow+LZ4', accept: ACCEPT_ARROW_LZ4 },
  { id: 'zstd', label: 'Arrow+ZSTD', accept: ACCEPT_ARROW_ZSTD },
];

/** One codec's figures (bench/results/compression.json `data.codecs`). */
export interface CodecSummary {
  id: string;
  bytes: number;
  warm: Spread;
  prebuilt: Spread;
  cold?: Spread;
  noCache?: Spread;
  consumer: Spread;
}

await runScenario('compression', 'Compression: Arrow+LZ4 and Arrow+ZSTD, 1M rows x 10 columns', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 2 : 5);
  const budgetMs = flags.quick ? 40_000 : 120_000;
  // Quick runs leave out the consumer columns: context, not a goal (consumer-read measures fetchBody).
  const withConsumer = !flags.quick;
  progress(`starting the s2sp server (${ROWS.toLocaleString('en-US')} rows)`);
  const server = await ServerChild.start(
    's2sp-server',
    { rows: ROWS, planes: [{ prefix: '' }, { prefix: '/nocache', encodedCache: 0 }, { prefix: '/cold', coldStore: true, prepare: 'off' }] },
    // As a long-running deployment runs (and the soak): the RSS goal is about that server's drift.
    { env: DEPLOYMENT_ENV },
  );
  const token = (server.info.tokens as string[])[0];
  const cachedBytes = Number(server.info.cachedBytes);
  const full = { body: '{}' };
  const summaries: CodecSummary[] = [];
  const rssAfter: number[] = [];
  try {
    for (const codec of CODECS) {
      progress(`${codec.label}: warm vs prebuilt`);
      const spec = { ...full, accept: codec.accept };
      const file = join(tmpdir(), `s2sp-bench-${process.pid}-compression-${codec.id}.bin`);
      // The first response compresses every buffer (and is the capture for the prebuilt line).
      const captured = await timedPost(server.url(`/s2sp/data/${token}`), { ...spec, saveTo: file });
      if (captured.status !== 200 || !captured.contentType.startsWith(codec.accept))
        throw new Error(`${codec.label}: answered ${captured.status} ${captured.contentType}`);
      const warm: number[] = [];
      const prebuilt: number[] = [];
      const more = bounded(reps, budgetMs);
      for (let rep = 0; more(rep); rep++) {
        for (const target of rep % 2 === 0 ? ['s2sp', 'prebuilt'] : ['prebuilt', 's2sp']) {
          if (target === 'prebuilt') await server.request('load-prebuilt', { file, type: captured.contentType });
          await quiesce([server]);
          const url = target === 's2sp' ? server.url(`/s2sp/data/${token}`) : server.url('/bench/prebuilt');
          const t = await timedPost(url, spec);
          if (target === 'prebuilt') await server.request('drop-prebuilt');
          if (t.status !== 200 || t.bytes !== captured.bytes)
            throw new Error(`${codec.label} ${target}: ${t.status}, ${t.bytes} bytes (captured ${captured.bytes})`);
          (target === 's2sp' ? warm : prebuilt).push(t.seconds);
        }
      }
      unlinkSync(file);
      const summary: CodecSummary = { id: codec.id, bytes: captured.bytes, warm: spread(warm), prebuilt: spread(prebuilt), consumer: spread([NaN]) };
      if (codec.id !== 'none') {
        progress(`${codec.label}: cold (a fresh body each time) and without the cache`);
        const cold: number[] = [];
        const noCache: number[] = [];
        const moreCold = bounded(reps, budgetMs);
        for (let rep = 0; moreCold(rep); rep++) {
          const fresh = await server.request<string>('mint-cold');
          await quiesce([server]);
          const c = await timedPost(server.url(`/cold/s2sp/data/${fresh}`), spec);
          await quiesce([server]);
          const n = await timedPost(server.url(`/nocache/s2sp/data/${token}`), spec);
          if (c.status !== 200 || n.status !== 200 || c.bytes !== captured.bytes || n.bytes !== captured.bytes)
            throw new Error(`${codec.label}: cold ${c.status}/${c.bytes}, no cache ${n.status}/${n.bytes}`);
          cold.push(c.seconds);
          noCache.push(n.seconds);
        }
        summary.cold = spread(cold);
        summary.noCache = spread(noCache);
      }
      summaries.push(summary);
    }

    progress(`server RSS over ${RSS_FETCHES} consecutive LZ4 fetches, each compressed in the workers (no cache)`);
    rssAfter.push(await server.gc());
    for (let i = 0; i < RSS_FETCHES; i++) {
      const t = await timedPost(server.url(`/nocache/s2sp/data/${token}`), { ...full, accept: ACCEPT_ARROW_LZ4 });
      if (t.status !== 200) throw new Error(`LZ4 fetch ${i + 1}: ${t.status}`);
      rssAfter.push(await server.gc());
    }

    const consumer: Record<string, number[]> = { none: [], lz4: [], zstd: [] };
    if (withConsumer) progress('the consumer (fetchBody) of a fresh body with each codec, loopback');
    const moreConsumer = bounded(withConsumer ? reps : 0, budgetMs);
    for (let rep = 0; moreConsumer(rep); rep++) {
      for (let k = 0; k < CODECS.length; k++) {
        const codec = CODECS[(rep + k) % CODECS.length];
        const fresh = await server.request<string>('mint-cold');
        await quiesce([server]);
        const started = performance.now();
        const fetched = await fetchBody(server.url(`/cold/s2sp/data/${fresh}`), { format: 'arrow', codec: codec.id as BodyCodec });
        const seconds = (performance.now() - started) / 1000;
        if (fetched.totalRows !== ROWS || fetched.compressed !== (codec.id !== 'none'))
          throw new Error(`consumer ${codec.id}: ${fetched.totalRows} rows, compressed ${fetched.compressed}`);
        consumer[codec.id].push(seconds);
      }
      (globalThis as { gc?: () => void }).gc?.();
    }
    if (withConsumer) for (const s of summaries) s.consumer = spread(consumer[s.id]);
  } finally {
    await server.stop();
  }

  const byId = (id: string) => summaries.find((s) => s.id === id)!;
  const none = byId('none');
  const rows = summaries.map((s) => [
    CODECS.find((c) => c.id === s.id)!.label,
    mb(s.bytes),
    ratio(s.bytes, none.bytes),
    triple(s.warm, secs),
    triple(s.prebuilt, secs),
    `**${ratio(s.warm.median, s.prebuilt.median)}**`,
    s.cold ? triple(s.cold, secs) : '-',
    s.noCache ? triple(s.noCache, secs) : '-',
    ...(withConsumer ? [triple(s.consumer, secs), ratio(s.consumer.median, none.consumer.median)] : []),
  ]);
  const fastestConsumer = [...summaries]
    .sort((a, b) => a.consumer.median - b.consumer.median)
    .map((s) => ({ ...s, label: CODECS.find((c) => c.id === s.id)!.label }))[0];
  const lz4 = byId('lz4');
  const zstd = byId('zstd');
  const firstFive = spread(rssAfter.slice(1, 6)).median;
  const lastFive = spread(rssAfter.slice(-5)).median;
  const rssRows = [[rssAfter.map((b) => (b / 1e6).toFixed(0)).join(', ')]];
  const goals: Goal[] = [
    goal(
      'Arrow+LZ4 full fetch (buffers compressed by an earlier response) / the same bytes prebuilt',
      lz4.warm.median / lz4.prebuilt.median,
      '<=',
      1.5,
      'x',
      `${secs(lz4.warm.median)} s vs ${secs(lz4.prebuilt.median)} s; a fresh body ${lz4.cold ? secs(lz4.cold.median) : '-'} s`,
    ),
    goal(
      `Server RSS growth over ${RSS_FETCHES} consecutive Arrow+LZ4 fetches compressed in workers (median of the last 5 minus the first 5, after a gc each)`,
      (lastFive - firstFive) / 1e6,
      '<=',
      20,
      'MB',
      `${mb(firstFive)} MB -> ${mb(lastFive)} MB`,
    ),
  ];
  const notes = [
    `Client: ${bigClientName()} for the server columns, \`POST {}\`; ${reps} repetitions per line, interleaved; min / **median** / max. The server: one process, a pool of 2 encoder workers, the MemoryStore holding the body (${mb(cachedBytes)} MB), singleUse: false (BENCH-ONLY) on the warm and no-cache planes.`,
    "warm: the body's buffers were compressed by an earlier response (the data plane keeps them per body, stored batch and column, and assembles every later whole-batch response from them). prebuilt: the same response bytes, saved once, sent from one Buffer by the same server.",
    'a fresh body: a new single-use token over a new copy of the body before each fetch, so every buffer is compressed during that response, in the encoder workers. no cache: a plane with `encodedCache: 0`, which compresses every response.',
    `The server runs with MALLOC_MMAP_THRESHOLD_=${DEPLOYMENT_ENV.MALLOC_MMAP_THRESHOLD_}, the long-running deployment setting native-notes.md recommends (glibc then returns freed compression buffers to the system).`,
    `ZSTD is level 1 (node:zlib). ZSTD / LZ4 wire size: ${ratio(zstd.bytes, lz4.bytes)}.`,
    ...(withConsumer
      ? [
          `consumer: fetchBody of every row and column of a fresh body (a new single-use token each time, the real workload: its buffers are compressed during that response) with \`format: "arrow"\` and each \`codec\`, in the bench process, to the response decoded as an Arrow Table; on loopback. Fastest here: ${fastestConsumer.label} (${secs(fastestConsumer.consumer.median)} s); fetchBody's \`codec: "auto"\` asks for no codec on loopback.`,
        ]
      : []),
  ];
  return {
    tables: [
      {
        header: [
          'format',
          'MB on the wire',
          'size vs Arrow',
          'warm s (min / median / max)',
          'prebuilt s',
          'warm / prebuilt',
          'fresh body s',
          'no cache s',
          ...(withConsumer ? ['consumer, fresh body s', 'consumer vs Arrow'] : []),
        ],
        rows,
        align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', ...(withConsumer ? (['r', 'r'] as const) : [])],
      },
      {
        title: `Server RSS in MB after a gc: at the start, then after each of ${RSS_FETCHES} Arrow+LZ4 fetches compressed in the workers (no cache)`,
        header: ['RSS MB'],
        rows: rssRows,
        align: ['l'],
      },
    ],
    goals,
    notes,
    data: { rows: ROWS, cachedBytes, reps, codecs: summaries, rssAfter },
  };
});
