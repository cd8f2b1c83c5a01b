/**
 * The shared store: two replicas (two server processes) on one redis-server,
 * a 1M x 10 body, and three figures measured in one run:
 *
 * - a full Arrow fetch through a replica that must pull the body from Redis
 *   (its local copies are capped below the body's size, so every fetch pulls)
 *   against the same fetch through the replica that put the body and holds it;
 * - the bytes the body takes in Redis (used_memory after the put minus
 *   before) against the body's Arrow IPC bytes;
 * - the RSS of a replica after 40 puts of one table (what 40 read_table calls
 *   on one table do), against the RSS after one put.
 *
 *   node dist/bench/redis-store.js [--quick] [--reps N]
 */
import { loadavg } from 'node:os';
import { createClient } from '@redis/client';
import { ACCEPT_ARROW } from './lib/dataset.js';
import { bigClientName, timedPost } from './lib/http-client.js';
import { goal, mb, ratio, secs, spread, triple } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';
import { ServerChild, quiesce } from './lib/server-child.js';
import { startRedisServer } from '../test/support/redis-server.js';

const ROWS = 1_000_000;

await runScenario('redis-store', 'Shared store: 1M x 10 through Redis, two replicas', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 2 : 5);
  const rows = flags.quick ? 200_000 : ROWS;
  progress('starting redis-server');
  const redis = await startRedisServer();
  const admin = createClient({ url: redis.url });
  await admin.connect();
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
  let holder: ServerChild | undefined;
  let puller: ServerChild | undefined;
  try {
    progress(`starting two replicas (${rows.toLocaleString('en-US')} rows each)`);
    holder = await ServerChild.start('redis-replica', { rows, url: redis.url });
    puller = await ServerChild.start('redis-replica', { rows, url: redis.url, localMaxBytes: 1024 * 1024 });
    const put = async (count = 1) => holder!.request<string[]>('put', { count });

    // Warm up on a small other table: scripts loaded and connections made before the baselines.
    for (const replica of [holder, puller]) {
      const warm = await replica.request<string>('put-small');
      await timedPost(replica.url(`/s2sp/data/${warm}`), { body: '{}', accept: ACCEPT_ARROW });
    }
    const rssBefore = await holder.resetRss();
    const redisBefore = await usedMemory();
    const [first] = await put();
    const redisAfter = await usedMemory();
    const rssOne = await holder.resetRss();
    // Redis shrinks the query buffer of a client idle for 2 s; the body's own bytes are what stays.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const redisSettled = await usedMemory();
    let keyBytes = 0;
    for (const key of await admin.keys('{s2sp:b:*')) keyBytes += (await admin.memoryUsage(key)) ?? 0;
    const stats = await holder.request<{ bytes: number; entries: number; bodies: number; localBytes: number }>('store-stats');
    const bodyBytes = stats.bytes;
    const redisBytes = redisSettled - redisBefore;
    progress(`body ${mb(bodyBytes)} MB; Redis grew by ${mb(redisBytes)} MB`);

    const more = await put(39);
    const rssForty = await holder.resetRss();
    const after40 = await holder.request<{ bytes: number; entries: number; bodies: number; localBytes: number }>('store-stats');
    progress(`40 tokens: ${after40.entries} entries, ${after40.bodies} body, RSS ${mb(rssOne)} -> ${mb(rssForty)} MB`);

    const tokens = [first, ...more];
    const local: number[] = [];
    const pulled: number[] = [];
    let fetchedBytes = 0;
    const go = bounded(reps, flags.quick ? 60_000 : 240_000);
    for (let rep = 0; go(rep) && tokens.length >= 2; rep++) {
      progress(`fetch rep ${rep + 1}/${reps}`);
      await quiesce([holder, puller]);
      const l = await timedPost(holder.url(`/s2sp/data/${tokens.pop()}`), { body: '{}', accept: ACCEPT_ARROW });
      await quiesce([holder, puller]);
      const p = await timedPost(puller.url(`/s2sp/data/${tokens.pop()}`), { body: '{}', accept: ACCEPT_ARROW });
      if (l.status !== 200 || p.status !== 200) throw new Error(`fetch answered ${l.status} / ${p.status}`);
      if (l.bytes !== p.bytes) throw new Error(`the replicas answered ${l.bytes} and ${p.bytes} bytes`);
      fetchedBytes = l.bytes;
      local.push(l.seconds);
      pulled.push(p.seconds);
    }
    const localSpread = spread(local);
    const pulledSpread = spread(pulled);
    const pullerStats = await puller.request<{ localBytes: number }>('store-stats');
    return {
      tables: [
        {
          title: 'Full Arrow fetch (uncompressed) of one body',
          header: ['replica', 'seconds (median, min-max)', 'MB/s', 'bytes'],
          rows: [
            ['holds the body (it put it)', triple(localSpread, secs), (fetchedBytes / 1e6 / localSpread.median).toFixed(0), String(fetchedBytes)],
            [
              'pulls the body from Redis on every fetch',
              triple(pulledSpread, secs),
              (fetchedBytes / 1e6 / pulledSpread.median).toFixed(0),
              String(fetchedBytes),
            ],
          ],
          align: ['l', 'r', 'r', 'r'],
        },
        {
          title: 'Memory',
          header: ['figure', 'value'],
          rows: [
            ['body (Arrow IPC bytes, store.stats().bytes)', `${mb(bodyBytes)} MB`],
            ['Redis used_memory growth for the body, right after the put', `${mb(redisAfter - redisBefore)} MB`],
            ['Redis used_memory growth for the body, 3 s later (idle query buffers shrunk)', `${mb(redisBytes)} MB`],
            ['MEMORY USAGE summed over the body keys', `${mb(keyBytes)} MB`],
            ['replica RSS before the put', `${mb(rssBefore)} MB`],
            ['replica RSS after 1 put', `${mb(rssOne)} MB`],
            ['replica RSS after 40 puts of the same table', `${mb(rssForty)} MB`],
            ['entries / bodies / bytes after 40 puts', `${after40.entries} / ${after40.bodies} / ${mb(after40.bytes)} MB`],
          ],
          align: ['l', 'r'],
        },
        {
          title: 'Ratios',
          header: ['ratio', 'value'],
          rows: [
            ['full fetch: pulling from Redis / holding the body (median time)', ratio(pulledSpread.median, localSpread.median)],
            ['bytes in Redis / Arrow bytes of the body', ratio(redisBytes, bodyBytes)],
            ['replica RSS growth: 40 puts / 1 put', ratio(rssForty - rssBefore, rssOne - rssBefore)],
            ['replica RSS growth after 40 puts / body bytes', ratio(rssForty - rssBefore, bodyBytes)],
          ],
          align: ['l', 'r'],
        },
      ],
      goals: [goal('Bytes in Redis / Arrow bytes of the body', redisBytes / bodyBytes, '<=', 1.05, 'x', `${mb(redisBytes)} MB vs ${mb(bodyBytes)} MB`)],
      notes: [
        `Two replica processes (bench/servers/redis-replica.ts), each a data plane over a RedisStore on one redis-server (started by the bench, persistence off). The body is ${rows.toLocaleString('en-US')} generated rows x 10 columns, put by the first replica, which keeps a local copy; the second replica's local copies are capped at 1 MiB, so each of its fetches pulls the whole body from Redis (chunks of just under 1 MiB, 8 in flight) before streaming. Client: ${bigClientName()}; each fetch uses a fresh token (single use), ${reps} reps each, alternating.`,
        'Bytes in Redis: INFO memory used_memory 3 s after the put minus before it (scripts loaded and connections made before the baseline); right after the put it also counts the query buffer Redis grew to read the chunks, which it shrinks once the connection is idle for 2 s.',
        `Machine load average during the run: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' / ')} (2 cores, shared): fetch times are noisy.`,
        `RSS: the first replica after a full gc, before its first put, after it, and after 39 more puts of the same Table object (one body, 40 tokens; without shared bodies that would be 40 copies, ${mb(40 * bodyBytes)} MB). The puller held ${mb(pullerStats.localBytes)} MB of local copies at the end.`,
      ],
      data: {
        rows,
        bodyBytes,
        redisBytes,
        redisRightAfter: redisAfter - redisBefore,
        keyBytes,
        loadAverage: loadavg(),
        rssBefore,
        rssOne,
        rssForty,
        local,
        pulled,
        fetchedBytes,
        after40,
      },
    };
  } finally {
    await holder?.stop();
    await puller?.stop();
    await admin.close().catch(() => admin.destroy());
    await redis.stop();
  }
});
