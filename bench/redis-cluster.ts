/**
 * The shared store on one Redis node against a three-master Redis Cluster on
 * this machine, in one run, as ratios (cluster / one node):
 *
 * - mint-and-fetch throughput: small tables put by this process's RedisStore
 *   (one replica) and fetched whole over HTTP from a replica process that
 *   pulls each body from Redis (another replica), several loops at once;
 * - a full Arrow fetch of a 1M x 10 body through that replica, which pulls
 *   the body from Redis on every fetch (its local copies are capped below
 *   the body's size).
 *
 *   node dist/bench/redis-cluster.js [--quick] [--duration S] [--reps N]
 */
import { loadavg } from 'node:os';
import type { Table } from 'apache-arrow';
import { RedisStore } from '../src/cache/redis-store.js';
import { tableFromRows } from '../src/table/table-from-rows.js';
import { benchTable } from './lib/bench-table.js';
import { ACCEPT_ARROW } from './lib/dataset.js';
import { bigClientName, keepAliveClient, timedPost } from './lib/http-client.js';
import { ratio, secs, spread, triple, type Spread } from './lib/report.js';
import { progress, runScenario } from './lib/scenario.js';
import { ServerChild, quiesce } from './lib/server-child.js';
import { startRedisCluster } from '../test/support/redis-cluster.js';
import { startRedisServer } from '../test/support/redis-server.js';

const ROWS = 1_000_000;
/** Mint-and-fetch loops running at once. */
const LOOPS = 8;

interface Measured {
  /** Tokens minted and fetched whole per second. */
  perSecond: number;
  /** Milliseconds of one mint plus its fetch (median). */
  cycleMs: number;
  fetch: Spread;
  fetchedBytes: number;
}

await runScenario('redis-cluster', 'Shared store: one Redis node against a three-master Redis Cluster', async (flags) => {
  const seconds = flags.duration ?? (flags.quick ? 2 : 10);
  const reps = flags.reps ?? (flags.quick ? 1 : 5);
  progress('starting one redis-server and a three-master cluster');
  const single = await startRedisServer();
  const cluster = await startRedisCluster();
  progress(`building the ${ROWS.toLocaleString('en-US')}-row table`);
  const big = benchTable(ROWS);
  try {
    const measure = async (label: string, url: string): Promise<Measured> => {
      // This process is the replica that mints; the child is the one that fetches, pulling every body.
      const minter = new RedisStore({ url, maxBytes: 16 * 2 ** 30, localMaxBytes: 4 * 2 ** 30, commandTimeoutMs: 30_000 });
      const fetcher = await ServerChild.start('redis-replica', { rows: 1, url, localMaxBytes: 1024 * 1024 });
      try {
        await minter.ready(10_000);
        const fetch = (token: string) => fetcher.url(`/s2sp/data/${token}`);
        let salt = 0;
        const small = (): Table => {
          salt++;
          return tableFromRows(Array.from({ length: 100 }, (_, i) => ({ id: i, label: `row ${i} of ${salt}`, x: i * salt })));
        };
        // Warm up: scripts loaded, connections made on every node.
        const warm = keepAliveClient();
        for (let i = 0; i < 20; i++) await warm.post(fetch((await minter.put(small())).token), { body: '{}', accept: ACCEPT_ARROW });
        warm.close();

        progress(`${label}: mint-and-fetch for ${seconds} s, ${LOOPS} loops`);
        const cycles: number[] = [];
        const until = performance.now() + seconds * 1000;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: LOOPS }, async () => {
            const client = keepAliveClient();
            try {
              while (performance.now() < until) {
                const at = performance.now();
                const { token } = await minter.put(small());
                const res = await client.post(fetch(token), { body: '{}', accept: ACCEPT_ARROW });
                if (res.status !== 200) throw new Error(`${label}: fetch answered ${res.status}`);
                cycles.push(performance.now() - at);
              }
            } finally {
              client.close();
            }
          }),
        );
        const perSecond = cycles.length / ((performance.now() - started) / 1000);

        progress(`${label}: putting the ${ROWS.toLocaleString('en-US')}-row body`);
        const tokens: string[] = [];
        for (let i = 0; i < reps; i++) tokens.push((await minter.put(big)).token);
        const fetches: number[] = [];
        let fetchedBytes = 0;
        for (const [i, token] of tokens.entries()) {
          progress(`${label}: full fetch ${i + 1}/${reps}`);
          await quiesce([fetcher]);
          const transfer = await timedPost(fetch(token), { body: '{}', accept: ACCEPT_ARROW });
          if (transfer.status !== 200) throw new Error(`${label}: full fetch answered ${transfer.status}`);
          fetchedBytes = transfer.bytes;
          fetches.push(transfer.seconds);
        }
        return { perSecond, cycleMs: spread(cycles).median, fetch: spread(fetches), fetchedBytes };
      } finally {
        await fetcher.stop();
        await minter.close();
      }
    };

    const one = await measure('one node', single.url);
    const three = await measure('cluster', cluster.url);
    const row = (label: string, m: Measured) => [
      label,
      m.perSecond.toFixed(0),
      m.cycleMs.toFixed(1),
      triple(m.fetch, secs),
      (m.fetchedBytes / 1e6 / m.fetch.median).toFixed(0),
    ];
    return {
      tables: [
        {
          title: 'One node against a three-master cluster',
          header: [
            'store',
            'mint-and-fetch per s',
            'ms per mint + fetch (median)',
            `full ${ROWS.toLocaleString('en-US')}-row fetch, s (median, min-max)`,
            'MB/s',
          ],
          rows: [row('one Redis node (redis://)', one), row('Redis Cluster, 3 masters (redis-cluster://)', three)],
          align: ['l', 'r', 'r', 'r', 'r'],
        },
        {
          title: 'Ratios (cluster / one node)',
          header: ['ratio', 'value'],
          rows: [
            ['mint-and-fetch throughput', ratio(three.perSecond, one.perSecond)],
            ['full fetch time (median)', ratio(three.fetch.median, one.fetch.median)],
          ],
          align: ['l', 'r'],
        },
      ],
      goals: [],
      notes: [
        `Both stores on this machine: one redis-server, and three redis-servers joined by redis-cli --cluster create (no replicas), persistence off, started by the bench. Mint-and-fetch: this process's RedisStore puts a fresh 100-row table (a new body each time) and ${LOOPS} loops at once fetch each token whole (Arrow) from a replica process (bench/servers/redis-replica.ts) whose local copies are capped at 1 MiB, so it pulls every body from Redis; ${seconds} s per store.`,
        `Full fetch: the ${ROWS.toLocaleString('en-US')} x 10 generated table (${(one.fetchedBytes / 1e6).toFixed(0)} MB as Arrow) put once, fetched with a fresh token ${reps} times through that replica, which pulls the whole body (chunks of just under 1 MiB, 8 in flight) before streaming it. A body lives on one master (its keys share one hash tag), so a single fetch does not gain from the cluster; the bodies of many tokens spread over the masters (test/cache/redis-cluster-store.test.ts checks it). Client: ${bigClientName()}.`,
        `Machine load average during the run: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(
            ' / ',
          )} (2 cores, shared with the four redis-servers): the cluster's extra processes compete with the replicas for the same cores here, which a real deployment spreads over machines.`,
      ],
      data: { rows: ROWS, seconds, reps, loops: LOOPS, one, three, loadAverage: loadavg() },
    };
  } finally {
    await cluster.stop();
    await single.stop();
  }
});
