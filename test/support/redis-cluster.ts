/**
 * Test support: a private Redis Cluster for one test file, built from
 * Debian's redis-server in cluster mode (startRedisServer's
 * `clusterNodeTimeoutMs`) and joined by `redis-cli --cluster create`: three
 * masters by default, optionally a replica each for failover tests. Every
 * node listens on a random loopback port and keeps nothing on disk.
 *
 * Waits are on the cluster's own state (CLUSTER INFO, ROLE), polled within a
 * deadline: a cluster has no event to subscribe to from outside.
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startRedisServer, type RedisServer } from './redis-server.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';

export interface RedisCluster {
  /** Every node, masters first as created (roles change after a failover). */
  readonly nodes: readonly RedisServer[];
  /** `redis-cluster://127.0.0.1:P1,127.0.0.1:P2,...`: every node as a seed. */
  readonly url: string;
  /** The nodes that are masters now. */
  masters(): Promise<RedisServer[]>;
  /** Sends one command to one node through redis-cli and returns its raw text reply. */
  command(node: RedisServer, ...args: string[]): Promise<string>;
  /** The number of keys each master holds now (DBSIZE), in masters() order. */
  keysPerMaster(): Promise<number[]>;
  /**
   * Ends `master`'s process (unless it has ended already) and resolves once
   * one of its replicas serves its slots and every live node says the
   * cluster is ok. Needs replicas.
   */
  failOver(master: RedisServer): Promise<void>;
  /** Resolves once every live node reports `cluster_state:ok`. */
  settled(): Promise<void>;
  /** Ends every node; safe to call twice. */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** Masters (at least 3, Redis's minimum for a cluster that can fail over). Default 3. */
  masters?: number;
  /** Replicas per master. Default 0. */
  replicasPerMaster?: number;
  /** How long peers wait before they call a node failed. Default 1000 ms. */
  nodeTimeoutMs?: number;
}

/** Starts the nodes, joins them into a cluster and resolves once every slot is served. */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const nodes: RedisServer[] = [];
  const down = new Set<RedisServer>();
  const stopAll = (): Promise<unknown> => Promise.all(nodes.map((node) => node.stop()));
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) nodes.push(await startRedisServer({ clusterNodeTimeoutMs: nodeTimeoutMs }));
    // redis-cli makes the first `masters` addresses masters and waits until every node agrees on the slot map.
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: 30_000,
    });
  } catch (error) {
    await stopAll();
    throw error;
  }

  const command = async (node: RedisServer, ...args: string[]): Promise<string> =>
    (await run('redis-cli', ['-h', HOST, '-p', String(node.port), ...args], { timeout: 5000 })).stdout.trim();
  const live = (): RedisServer[] => nodes.filter((node) => !down.has(node));
  const isMaster = async (node: RedisServer): Promise<boolean> => (await command(node, 'ROLE')).split('\n')[0] === 'master';
  const until = async (what: string, check: () => Promise<boolean>, withinMs: number): Promise<void> => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`redis cluster: ${what} not reached within ${withinMs} ms`);
      await sleep(50);
    }
  };
  // A replica can take over only once it holds its master's data: every
  // replica's link is up as well as every node's view of the slots.
  const settled = (): Promise<void> =>
    until(
      'cluster_state:ok on every live node, every replica in sync',
      async () => {
        const states = await Promise.all(live().map(async (node) => [await command(node, 'CLUSTER', 'INFO'), await command(node, 'INFO', 'replication')]));
        return states.every(([info, replication]) => info.includes('cluster_state:ok') && !replication.includes('master_link_status:down'));
      },
      10 * nodeTimeoutMs + 10_000,
    );
  await settled().catch(async (error: unknown) => {
    await stopAll();
    throw error;
  });

  const cluster: RedisCluster = {
    nodes,
    url: `redis-cluster://${nodes.map((n) => `${HOST}:${n.port}`).join(',')}`,
    async masters() {
      const flags = await Promise.all(live().map(isMaster));
      return live().filter((_, i) => flags[i]);
    },
    command,
    async keysPerMaster() {
      return Promise.all((await cluster.masters()).map(async (node) => Number(await command(node, 'DBSIZE'))));
    },
    async failOver(master) {
      if (replicas === 0) throw new Error('failOver needs a cluster with replicas');
      // Counted out first: a test that loses writes on purpose ends the master itself, then calls this.
      down.add(master);
      const before = new Set(await cluster.masters());
      await master.down();
      await until('a replica promoted', async () => (await cluster.masters()).some((node) => !before.has(node)), 10 * nodeTimeoutMs + 10_000);
      await settled();
    },
    settled,
    async stop() {
      await stopAll();
    },
  };
  return cluster;
}
