/**
 * RedisStore's connection: one interface over the two ways Redis and Valkey
 * are deployed, so the store above it has one code path.
 *
 * - A single node, `redis://[user:pass@]host:port[/db]` or `rediss://` for
 *   TLS: node-redis's client.
 * - A Redis or Valkey Cluster, `redis-cluster://[user:pass@]host:port[,host:port...]`
 *   or `rediss-cluster://` for TLS: node-redis's cluster client. The nodes
 *   named are seeds: the client learns the slot map from whichever answers,
 *   routes each command by its key's slot, follows MOVED and ASK during a
 *   resharding by itself, and learns the map again when a node it uses stops
 *   answering (a failover moves its slots to a replica).
 *
 * Both take the store's scripts as their `scripts` option (redis-scripts.ts,
 * declared once) and send them as EVALSHA, with EVAL once when a node answers
 * NOSCRIPT (first use, a restart, a promoted replica).
 *
 * Both fail a command at once while disconnected (no offline queue): a
 * queued command would hang a tool call or a fetch until Redis returns. Both
 * reconnect by themselves; a cluster whose seeds all refused at start is
 * asked again every {@link CONNECT_RETRY_MS}.
 */
import { createClient, createCluster, RESP_TYPES } from '@redis/client';
import { invalidOption } from '../option-checks.js';
import { STORE_SCRIPTS, type StoreScriptName } from './redis-scripts.js';

/** How often a cluster whose seeds all refused is asked again. */
const CONNECT_RETRY_MS = 500;
/**
 * How long a cluster node may be reconnecting before the client learns the
 * slot map again (node-redis's default is 5 s): a failover moves the slots
 * of a master that stopped answering to its replica, and until the client
 * knows, every command for those slots fails.
 */
const TOPOLOGY_REFRESH_MS = 500;
/** How long a master's count of replicas (CLUSTER NODES) is trusted. */
const REPLICAS_MAX_AGE_MS = 1000;

/** A reply as RedisStore reads it. */
export type Reply = number | string | Buffer | null | Reply[];

/** What a URL names: one node, or the seeds of a cluster. */
export interface RedisTarget {
  readonly cluster: boolean;
  readonly tls: boolean;
  /** `host:port` of every node named (one for a single node). */
  readonly nodes: readonly string[];
  readonly username?: string;
  readonly password?: string;
}

/** Options of {@link connectRedis}. */
export interface RedisConnectionOptions {
  /** Deadline of a connection attempt, in milliseconds. */
  connectTimeoutMs: number;
  /** Called with every connection error: without a listener, an 'error' event would end the process. */
  onError(error: Error): void;
}

/** RedisStore's view of a connection; see the module comment. */
export interface RedisConnection {
  /** True once commands can be sent (a cluster: once its slot map is known). */
  readonly isReady: boolean;
  /** One command, sent to the node that serves `key`'s slot; Buffers for bulk strings when `buffers`. */
  send(key: string, args: ReadonlyArray<string | Buffer>, buffers?: boolean): Promise<Reply>;
  /** One of the store's scripts: every key in `keys` shares one slot, and the script runs on its node. */
  run(script: StoreScriptName, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<Reply>;
  /**
   * Whether the writes made so far on the node that serves `key` would
   * survive a failover: true on a single node (nothing fails over), and on a
   * cluster once a replica acknowledged them within `waitMs` (WAIT), or when
   * the node has no replica the cluster could promote (none, or all failed).
   * A replica merely disconnected still counts: it may be promoted without
   * the write, so a master that lost its link to it answers false.
   */
  replicated(key: string, waitMs: number): Promise<boolean>;
  /** Closes gracefully (pending replies arrive first). */
  close(): Promise<void>;
  /** Closes at once, failing whatever is pending. */
  destroy(): void;
}

const BUFFERS = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } };
const CLUSTER_URL = /^(rediss?)-cluster:\/\/(?:([^@/?#]*)@)?([^/?#@]+)\/?$/i;
const NODE = /^(\[[0-9a-f:.]+\]|[^\s:[\]/,]+):(\d{1,5})$/i;
const EXPECTED = 'a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL';

/**
 * What `url` names. @throws S2SPError `S2SP_ERR_OPTION_INVALID` for anything
 * but a redis:// or rediss:// URL, or a cluster URL with at least one
 * host:port and no database (a cluster has database 0 only).
 */
export function redisTargetOf(url: unknown): RedisTarget {
  if (typeof url !== 'string') throw invalidOption('url', EXPECTED, url);
  const cluster = CLUSTER_URL.exec(url);
  if (cluster !== null) {
    const [, scheme, userinfo, hosts] = cluster;
    const nodes = hosts.split(',');
    if (!nodes.every((node) => NODE.test(node) && Number(NODE.exec(node)![2]) <= 65535)) throw invalidOption('url', EXPECTED, redactedUrl(url));
    const colon = userinfo?.indexOf(':') ?? -1;
    const decode = (part: string) => {
      try {
        return decodeURIComponent(part);
      } catch {
        throw invalidOption('url', `${EXPECTED} with percent-encoded credentials`, redactedUrl(url));
      }
    };
    return {
      cluster: true,
      tls: scheme.toLowerCase() === 'rediss',
      nodes,
      username: userinfo === undefined || colon === 0 ? undefined : decode(colon === -1 ? userinfo : userinfo.slice(0, colon)) || undefined,
      password: userinfo === undefined || colon === -1 ? undefined : decode(userinfo.slice(colon + 1)),
    };
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'redis:' && parsed?.protocol !== 'rediss:') throw invalidOption('url', EXPECTED, redactedUrl(url));
  return { cluster: false, tls: parsed.protocol === 'rediss:', nodes: [parsed.host] };
}

/** `url` without its user and password, fit for an error message or a log line. */
export function redactedUrl(url: string): string {
  return url.replace(/^([a-z-]+:\/\/)[^@/]*@/i, '$1');
}

/** Connects in the background, retrying until Redis answers: a replica may start while Redis is down. */
export function connectRedis(url: string, options: RedisConnectionOptions): RedisConnection {
  const target = redisTargetOf(url);
  const socket = {
    connectTimeout: options.connectTimeoutMs,
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000),
  };
  if (!target.cluster) {
    const client = createClient({ url, disableOfflineQueue: true, socket, scripts: STORE_SCRIPTS });
    client.on('error', options.onError);
    client.connect().catch(() => {});
    return {
      get isReady() {
        return client.isReady;
      },
      send: (_key, args, buffers) => client.sendCommand([...args], buffers ? BUFFERS : undefined) as Promise<Reply>,
      run: (script, keys, args) => client[script](keys, args) as Promise<Reply>,
      replicated: async () => true,
      close: () => client.close(),
      destroy: () => client.destroy(),
    };
  }

  const scheme = target.tls ? 'rediss' : 'redis';
  const cluster = createCluster({
    rootNodes: target.nodes.map((node) => ({ url: `${scheme}://${node}` })),
    // Every node's connection is made from these (the seeds' URLs only serve discovery).
    defaults: {
      username: target.username,
      password: target.password,
      disableOfflineQueue: true,
      socket: target.tls ? { ...socket, tls: true } : socket,
    },
    scripts: STORE_SCRIPTS,
    topologyRefreshOnReconnectionAttemptStrategy: TOPOLOGY_REFRESH_MS,
  });
  cluster.on('error', options.onError);
  cluster.on('node-error', options.onError);
  const replicaCounts = new WeakMap<object, { at: number; replicas: number }>();
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = () => {
    cluster.connect().catch((error: Error) => {
      options.onError(error);
      if (!closed) retry = setTimeout(connect, CONNECT_RETRY_MS).unref();
    });
  };
  connect();
  const stop = () => {
    closed = true;
    clearTimeout(retry);
  };
  return {
    get isReady() {
      return cluster.isReady;
    },
    send: (key, args, buffers) => cluster.sendCommand(key, false, [...args], buffers ? BUFFERS : undefined) as Promise<Reply>,
    run: (script, keys, args) => cluster[script](keys, args) as Promise<Reply>,
    async replicated(key, waitMs) {
      const node = await cluster.getNodeClientForKey(key);
      let known = replicaCounts.get(node);
      if (known === undefined || Date.now() - known.at > REPLICAS_MAX_AGE_MS) {
        known = { at: Date.now(), replicas: promotableReplicasOf(String(await node.sendCommand(['CLUSTER', 'NODES']))) };
        replicaCounts.set(node, known);
      }
      // No replica that could take over: nothing can come back from before this write.
      if (known.replicas === 0) return true;
      // WAIT counts the replicas that hold every write made on this connection so far.
      return ((await node.sendCommand(['WAIT', '1', String(Math.max(1, Math.round(waitMs)))])) as number) >= 1;
    },
    async close() {
      stop();
      if (cluster.isOpen) await cluster.close();
    },
    destroy() {
      stop();
      if (cluster.isOpen) cluster.destroy();
    },
  };
}

/**
 * Replicas of the node whose CLUSTER NODES this is (the line flagged
 * `myself`) that the cluster could promote: every replica of it not flagged
 * `fail` (a `fail?`, suspected by this node alone, still counts).
 */
export function promotableReplicasOf(clusterNodes: string): number {
  const lines = clusterNodes.split('\n').map((line) => line.trim().split(' '));
  const me = lines.find((fields) => fields[2]?.split(',').includes('myself'))?.[0];
  return lines.filter((fields) => {
    const flags = fields[2]?.split(',') ?? [];
    return fields[3] === me && (flags.includes('slave') || flags.includes('replica')) && !flags.includes('fail');
  }).length;
}
