/**
 * A BodyStore on Redis or Valkey, shared by every replica of a resource
 * server: a token minted on one replica is fetched on any other, exactly once.
 *
 * - Single use, leases, TTL and the store-wide byte budget are Lua scripts
 *   (redis-scripts.ts), atomic on the Redis server across replicas.
 * - Bodies are content-addressed (SHA-256 of their Arrow IPC stream) and
 *   stored once in chunks of at most `chunkBytes` under one hash tag; tokens
 *   point at them, and a body goes with its last token. A Table object put
 *   again is neither encoded nor hashed again (it is remembered weakly).
 * - Tokens are stored as their SHA-256: a reader of Redis learns no token.
 * - Each replica keeps local copies of bodies it put or pulled
 *   (local-body-cache.ts), so a large transfer pulls its body once.
 * - One Redis node or a Redis/Valkey Cluster, through one code path
 *   (redis-connection.ts): every script's keys share one slot, and the
 *   byte budget is kept in ACCOUNT_SHARDS accounts spread over the slots, so
 *   no single slot takes every put (README, Deploying, says how accurate the
 *   sum is). On a cluster whose masters have replicas, a commit counts only
 *   once a replica holds the consume, so a failover cannot bring a consumed
 *   token back; a slot migration's TRYAGAIN is asked again until it ends.
 * - Redis unreachable: every call fails fast with
 *   `S2SP_ERR_STORE_UNAVAILABLE` (no offline queue), the client reconnects by
 *   itself, and calls succeed again once Redis is back.
 * - Redis that stops answering with its connection open (SIGSTOP, a
 *   partition): every command has a deadline (`commandTimeoutMs`), also once
 *   written to the socket, where the client's own timeout no longer applies.
 *   Past it the call fails with `S2SP_ERR_STORE_UNAVAILABLE` and the
 *   connection is replaced, which fails the commands stuck on it at once; the
 *   fresh one becomes ready when Redis answers again.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Table } from 'apache-arrow';
import { S2SPError, isS2SPError } from '../errors.js';
import { Listeners, type Listener, type ProgressEvent, type Unsubscribe } from '../observe.js';
import { optionsObject, positiveOption } from '../option-checks.js';
import {
  DEFAULT_LEASE_TIMEOUT_MS,
  type BodyLease,
  type BodyStore,
  type PutOptions,
  type PutResult,
  type StoreEvent,
  type StreamedPutResult,
  type StoreStats,
} from './body-store.js';
import type { FullGc } from './gc-nudge.js';
import { LocalBodyCache, type PinnedBody } from './local-body-cache.js';
import { DEFAULT_MAX_BYTES, DEFAULT_TTL_MS } from './memory-store.js';
import { connectRedis, redisTargetOf, type RedisConnection, type Reply } from './redis-connection.js';
import { ACCOUNT_SHARDS, type StoreScriptName } from './redis-scripts.js';
import { CLUSTER_SLOTS, slotOf } from './redis-slot.js';
import { SharedMemoryPool } from './shared-memory-pool.js';
import { ipcPlanOf, writeIpcPlan, type IpcPlan } from '../ipc/shared-body.js';
import { mintToken } from '../protocol/token.js';
import { tableFromBatchStream, type BatchStream } from '../table/batch-stream.js';
import { bodyTableOf } from '../table/body-table.js';

/**
 * Bytes per chunk value: 1 MiB less room for Redis's string header, so each
 * chunk fills one allocator size class instead of spilling into the next.
 */
export const DEFAULT_CHUNK_BYTES = 1024 * 1024 - 64;
/** Default bytes of local body copies per replica: 512 MiB. */
export const DEFAULT_LOCAL_MAX_BYTES = 512 * 1024 * 1024;
/**
 * Default deadline of each Redis command, from the call to its reply: 5 s. A
 * healthy Redis answers in well under a millisecond on a LAN; a chunk of a
 * body (1 MiB) takes milliseconds, so this is only reached by a Redis that is
 * gone or stuck.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5000;
/** Chunk reads in flight while a body is pulled: bounds the transient copies. */
const PULL_WINDOW = 8;
/**
 * How long this replica trusts its last reading of the budget's accounts when
 * a put stays under half the budget (README, Deploying, says why that is
 * accurate enough); nearer the budget every new body reads them all.
 */
const ACCOUNTS_MAX_AGE_MS = 250;
/** Pause before a command answered TRYAGAIN (a slot migration under way) is sent again. */
const TRY_AGAIN_MS = 20;

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * `redis://[user:pass@]host:port[/db]` (`rediss://` for TLS) for one Redis or
   * Valkey node, or `redis-cluster://[user:pass@]host:port[,host:port...]`
   * (`rediss-cluster://` for TLS) for a Redis or Valkey Cluster: the nodes
   * named are seeds, the others are found from them.
   */
  url: string;
  /** Time to live of each token in milliseconds (default 600,000). */
  ttlMs?: number;
  /** Budget for all bodies in Redis together, across replicas, in bytes (default 1 GiB). */
  maxBytes?: number;
  /** Milliseconds a lease lasts without renewal (default 30,000): how long a dead replica holds a token. */
  leaseTimeoutMs?: number;
  /** Bytes of local body copies this replica keeps (default 512 MiB). */
  localMaxBytes?: number;
  /** Prefix of every key (default `s2sp`); replicas that share bodies use the same one. */
  keyPrefix?: string;
  /** Largest chunk value in bytes (default just under 1 MiB). */
  chunkBytes?: number;
  /**
   * Deadline of each Redis command in milliseconds, from the call to its
   * reply, written to the socket or not (default 5,000). Past it the call
   * fails with `S2SP_ERR_STORE_UNAVAILABLE` and the connection is replaced.
   */
  commandTimeoutMs?: number;
  /** A full garbage collection the local copies' buffer pool may ask for (`globalThis.gc` under `--expose-gc`). */
  fullGc?: FullGc;
}

/** What this replica knows of a body table it put: where it lives in Redis. */
interface KnownBody {
  readonly id: string;
  readonly byteLength: number;
  readonly totalRows: number;
}

/** A BodyStore shared through Redis/Valkey; see the module comment. */
export class RedisStore implements BodyStore {
  readonly ttlMs: number;
  readonly maxBytes: number;
  readonly leaseTimeoutMs: number;
  readonly chunkBytes: number;
  /** Replaced (never reused) when a command misses its deadline: see {@link RedisStore.#reconnect}. */
  #client: RedisConnection;
  readonly #url: string;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #pool: SharedMemoryPool;
  readonly #local: LocalBodyCache;
  readonly #known = new WeakMap<Table, KnownBody>();
  /** The hash tag of each account the budget is kept in. */
  readonly #accounts: readonly string[];
  /** This replica's last reading of each account's bytes, and when it was made. */
  readonly #accountBytes: number[] = Array.from({ length: ACCOUNT_SHARDS }, () => 0);
  #accountsReadAt = -Infinity;
  readonly #observers = new Listeners<StoreEvent>();
  #closed = false;

  constructor(options: RedisStoreOptions) {
    options = optionsObject(options);
    redisTargetOf(options.url);
    this.ttlMs = positiveOption(options.ttlMs, 'ttlMs') ?? DEFAULT_TTL_MS;
    this.maxBytes = positiveOption(options.maxBytes, 'maxBytes') ?? DEFAULT_MAX_BYTES;
    this.leaseTimeoutMs = positiveOption(options.leaseTimeoutMs, 'leaseTimeoutMs') ?? DEFAULT_LEASE_TIMEOUT_MS;
    this.chunkBytes = positiveOption(options.chunkBytes, 'chunkBytes') ?? DEFAULT_CHUNK_BYTES;
    this.#timeoutMs = positiveOption(options.commandTimeoutMs, 'commandTimeoutMs') ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.#prefix = options.keyPrefix ?? 's2sp';
    const localMaxBytes = positiveOption(options.localMaxBytes, 'localMaxBytes') ?? DEFAULT_LOCAL_MAX_BYTES;
    this.#pool = new SharedMemoryPool({ maxIdleBytes: Math.min(256 * 1024 * 1024, localMaxBytes / 4), fullGc: options.fullGc });
    this.#local = new LocalBodyCache(localMaxBytes, this.#pool);
    this.#url = options.url;
    this.#accounts = accountTagsOf(this.#prefix);
    this.#client = this.#connect();
  }

  /** A connection made in the background, retrying until Redis is up: a replica starts while Redis is down, and works once it is up. */
  #connect(): RedisConnection {
    return connectRedis(this.#url, {
      connectTimeoutMs: this.#timeoutMs,
      onError: (error) => this.#observers.emit({ type: 'connection-error', error }),
    });
  }

  /**
   * Drops `client` (when it is still the current one) for a fresh connection.
   * A command written to a Redis that stopped answering waits for its reply
   * for ever, and every later command queues behind it on that connection;
   * destroying the connection fails them all at once. The fresh connection is
   * not ready until Redis answers its handshake, and meanwhile calls fail fast
   * (no offline queue).
   */
  #reconnect(client: RedisConnection): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = this.#connect();
    client.destroy();
  }

  /** Resolves once connected to Redis (or rejects after `timeoutMs`); calls made before then fail with a code. */
  async ready(timeoutMs = this.#timeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#client.isReady) {
      if (this.#closed || Date.now() > deadline) throw new S2SPError('S2SP_ERR_STORE_UNAVAILABLE');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  put(table: Table, options: PutOptions = {}): Promise<PutResult> {
    return this.#observed(this.#put(table, options));
  }

  async #put(table: Table, options: PutOptions): Promise<PutResult> {
    if (this.#closed) throw new S2SPError('S2SP_ERR_CACHE_CLOSED');
    const ttlMs = Math.ceil(positiveOption(options.ttlMs, 'ttlMs') ?? this.ttlMs);
    const bodyTable = bodyTableOf(table);
    let plan: IpcPlan | undefined;
    let known = this.#known.get(bodyTable);
    if (known === undefined) {
      plan = ipcPlanOf(bodyTable);
      if (plan.byteLength > this.maxBytes) throw this.#full(plan.byteLength, 0);
      known = { id: contentIdOf(plan), byteLength: plan.byteLength, totalRows: bodyTable.numRows };
      this.#known.set(bodyTable, known);
    }
    const token = mintToken();
    const hash = tokenHashOf(token);
    let reservedNow = false;
    try {
      const account = this.#accountOf(known.id);
      const [state, used, expired] = await this.#reserve(account, known, ttlMs, hash);
      this.#expired(expired);
      this.#accountBytes[account] = used;
      if (state === 0) throw this.#full(known.byteLength, used + this.#othersBytes(account));
      reservedNow = state === 1;
      if (reservedNow) {
        const total = await this.#totalBytes(used + this.#othersBytes(account));
        if (total > this.maxBytes) {
          // Uncounted before the refusal is answered: nothing of the body was written yet.
          reservedNow = false;
          await this.#forgetBody(known.id);
          this.#accountBytes[account] -= known.byteLength;
          throw this.#full(known.byteLength, total - known.byteLength);
        }
      }
      if (!(await this.#addToken(known.id, hash, ttlMs))) {
        await this.#writeBody(known, () => plan ?? ipcPlanOf(bodyTable), ttlMs, options.observe);
        if (!(await this.#addToken(known.id, hash, ttlMs))) throw new S2SPError('S2SP_ERR_STORE_UNAVAILABLE');
        // Counted already, yet missing: its last token may have gone on another replica meanwhile,
        // which uncounted it. Count it again (a no-op when it still is).
        if (state === 2) await this.#reserve(account, known, ttlMs, hash);
      } else options.observe?.({ type: 'progress', bytes: known.byteLength, totalBytes: known.byteLength });
      await this.#send(['SET', this.#indexKey(hash), known.id, 'PX', String(ttlMs)]);
    } catch (error) {
      this.#send(['ZREM', this.#acctKey(this.#accountOf(known.id), 'tokens'), hash]).catch(() => {});
      // A body this put counted but could not write whole (Redis refused memory halfway): its
      // chunks would hold memory and budget until their TTL. Best effort: Redis may be gone.
      if (reservedNow) this.#abandon(known).catch(() => {});
      if (isOutOfMemory(error)) throw new S2SPError('S2SP_ERR_CACHE_FULL', { problem: 'storeMemory', neededBytes: known.byteLength }, { cause: error });
      throw storeError(error);
    }
    const expiresAt = Date.now() + ttlMs;
    // This replica's copy, when it has one, for think-time preparation (README › Deploying).
    this.#observers.emit({ type: 'minted', body: this.#local.peek(known.id), expiresAt, origin: options.origin });
    return { token, expiresAt };
  }

  /**
   * Streamed batches are gathered and put: a Redis body is written from one
   * IPC plan, and going through `put` keeps one registration path (one
   * `minted` per token, however the body came in).
   */
  async putBatches(batches: BatchStream, options: Pick<PutOptions, 'ttlMs' | 'origin'> = {}): Promise<StreamedPutResult> {
    const table = bodyTableOf(await tableFromBatchStream(batches));
    return { ...(await this.put(table, options)), table };
  }

  lease(token: string): Promise<BodyLease> {
    return this.#observed(this.#lease(token));
  }

  async #lease(token: string): Promise<BodyLease> {
    const hash = tokenHashOf(token);
    const id = await this.#bodyIdOf(hash);
    if (id === undefined) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
    const leaseId = randomUUID();
    const keys = this.#tokenKeys(id, hash);
    const taken = (await this.#run('s2spLease', [keys.token, keys.lease, keys.meta], [leaseId, this.leaseTimeoutMs])) as number[];
    if (taken[0] === 0) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
    if (taken[0] === -1) throw new S2SPError('S2SP_ERR_TOKEN_IN_FLIGHT');
    const [, byteLength, chunks, totalRows, chunkBytes] = taken;
    const renew = async () => ((await this.#run('s2spRenew', [keys.token, keys.lease], [leaseId, this.leaseTimeoutMs])) as number) === 1;
    let pinned: PinnedBody;
    try {
      pinned = this.#local.pin(id) ?? (await this.#pull(id, { byteLength, chunks, totalRows, chunkBytes }, renew));
    } catch (error) {
      this.#run('s2spRelease', [keys.lease], [leaseId]).catch(() => {});
      throw storeError(error);
    }
    this.#observers.emit({ type: 'leased' });
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      pinned.unpin();
      this.#observers.emit({ type: 'settled' });
      return true;
    };
    const commit = async () => {
      if (!settle()) return false;
      // Recorded once the script answered: the accounting after it is tidying (it also heals at the
      // token's TTL), so its failure must not cut a transfer whose single use is already on record.
      const consumed = await this.#consume(id, hash, leaseId, false, (tidying) =>
        tidying.catch((error) => this.#observers.emit({ type: 'connection-error', error: error as Error })),
      );
      if (consumed) this.#observers.emit({ type: 'consumed' });
      return consumed;
    };
    const release = async () => {
      if (settle()) await this.#run('s2spRelease', [keys.lease], [leaseId]);
    };
    return {
      body: pinned.body,
      timeoutMs: this.leaseTimeoutMs,
      renew: async () => !settled && (await renew()),
      commit: () => this.#observed(commit()),
      release: () => this.#observed(release()),
    };
  }

  delete(token: string): Promise<boolean> {
    return this.#observed(this.#delete(token));
  }

  async #delete(token: string): Promise<boolean> {
    const hash = tokenHashOf(token);
    const id = await this.#bodyIdOf(hash);
    if (id === undefined) return false;
    const revoked = await this.#consume(id, hash, '', true);
    if (revoked) this.#observers.emit({ type: 'revoked' });
    return revoked;
  }

  has(token: string): Promise<boolean> {
    return this.#observed(this.#has(token));
  }

  async #has(token: string): Promise<boolean> {
    const hash = tokenHashOf(token);
    const id = await this.#bodyIdOf(hash);
    if (id === undefined) return false;
    return ((await this.#send(['EXISTS', this.#tokenKeys(id, hash).token])) as number) === 1;
  }

  stats(): Promise<StoreStats> {
    return this.#observed(this.#stats());
  }

  async #stats(): Promise<StoreStats> {
    const { entries, bodies, bytes } = await this.#readAccounts();
    return { entries, bytes, maxBytes: this.maxBytes, bodies, localBytes: this.#local.bytes, idleBytes: this.#pool.stats().bytes };
  }

  /**
   * Reads every account of the budget (each forgets what expired first) and
   * keeps the reading for {@link RedisStore.#othersBytes}.
   */
  async #readAccounts(): Promise<{ entries: number; bodies: number; bytes: number }> {
    const readAt = Date.now();
    const replies = (await Promise.all(this.#accounts.map((_, account) => this.#run('s2spStats', this.#acctKeys(account), [])))) as number[][];
    const sum = { entries: 0, bodies: 0, bytes: 0 };
    replies.forEach(([entries, bodies, bytes, expired], account) => {
      this.#expired(expired);
      this.#accountBytes[account] = bytes;
      sum.entries += entries;
      sum.bodies += bodies;
      sum.bytes += bytes;
    });
    this.#accountsReadAt = readAt;
    return sum;
  }

  /** Bytes of the accounts other than `account`, as last read. */
  #othersBytes(account: number): number {
    return this.#accountBytes.reduce((sum, bytes, i) => (i === account ? sum : sum + bytes), 0);
  }

  /**
   * The budget's total after a body was counted in its account: `estimate`
   * (that account now, the others as last read) when the reading is fresh
   * and the estimate under half the budget, else every account read now.
   * Read after the count, the total includes every body counted before:
   * of two puts that together pass the budget, the later reader refuses.
   */
  async #totalBytes(estimate: number): Promise<number> {
    if (estimate <= this.maxBytes / 2 && Date.now() - this.#accountsReadAt <= ACCOUNTS_MAX_AGE_MS) return estimate;
    return (await this.#readAccounts()).bytes;
  }

  observe(listener: Listener<StoreEvent>): Unsubscribe {
    return this.#observers.add(listener);
  }

  /** Reports a failed call to the observers when Redis could not be reached, once per call. */
  async #observed<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (isS2SPError(error, 'S2SP_ERR_STORE_UNAVAILABLE')) this.#observers.emit({ type: 'failed', error: error as S2SPError });
      throw error;
    }
  }

  /** Tokens an accounting script found past their time (a number from a script; older scripts send none). */
  #expired(count: number | undefined): void {
    if (typeof count === 'number' && count > 0) this.#observers.emit({ type: 'expired', count });
  }

  /** Disconnects and drops this replica's local copies; the bodies in Redis stay for the other replicas. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#local.clear();
    this.#pool.clear();
    const client = this.#client;
    if (client.isReady) await client.close().catch(() => client.destroy());
    else client.destroy();
  }

  /**
   * Consumes (commit) or revokes (force) a token; true when this call took a
   * live token (a commit whose lease another transfer holds takes nothing).
   * @param tidy what to do with the accounting that follows the script (default: wait for it)
   */
  async #consume(id: string, hash: string, leaseId: string, force: boolean, tidy = (tidying: Promise<unknown>) => tidying): Promise<boolean> {
    const keys = this.#tokenKeys(id, hash);
    const [existed, freed] = (await this.#run('s2spConsume', [keys.token, keys.lease, keys.set, keys.meta], [leaseId, hash, force ? '1' : '0'])) as number[];
    if (existed === -1) return false;
    // A commit is this token's one complete transfer only once a failover cannot bring the token
    // back: a replica holds the consume (SPEC 5: unrecorded, the transfer is cut).
    if (!force && existed === 1 && !(await this.#replicated(keys.token))) throw new S2SPError('S2SP_ERR_STORE_UNAVAILABLE');
    const account = this.#accountOf(id);
    await tidy(
      Promise.all([
        this.#send(['DEL', this.#indexKey(hash)]),
        this.#send(['ZREM', this.#acctKey(account, 'tokens'), hash]),
        freed === 1 ? this.#forgetBody(id) : undefined,
      ]),
    );
    return existed === 1;
  }

  /** Removes what a failed write left of a body (unless another token uses it) and uncounts it. */
  async #abandon(known: KnownBody): Promise<void> {
    const base = this.#bodyBase(known.id);
    if (((await this.#send(['SCARD', `${base}ts`])) as number) > 0) return;
    const chunks = Math.ceil(known.byteLength / this.chunkBytes);
    const keys = [`${base}m`, ...Array.from({ length: chunks }, (_, i) => `${base}c:${i}`)];
    await this.#send(['DEL', ...keys]);
    await this.#forgetBody(known.id);
  }

  /**
   * Counts body `known` in its account (the RESERVE script of redis-scripts.ts): answers its
   * [state (0 no room, 1 counted now, 2 counted before), the account's bytes, tokens expired now].
   */
  async #reserve(account: number, known: KnownBody, ttlMs: number, hash: string): Promise<number[]> {
    return (await this.#run('s2spReserve', this.#acctKeys(account), [known.id, known.byteLength, ttlMs, this.maxBytes, hash])) as number[];
  }

  /** Uncounts body `id` from its account's budget. */
  async #forgetBody(id: string): Promise<void> {
    const account = this.#accountOf(id);
    await this.#run('s2spForgetBody', [this.#acctKey(account, 'sizes'), this.#acctKey(account, 'bodies')], [id]);
  }

  /** Adds a token to the body `id` in Redis; false when the body is not there (complete). */
  async #addToken(id: string, hash: string, ttlMs: number): Promise<boolean> {
    const keys = this.#tokenKeys(id, hash);
    return ((await this.#run('s2spAddToken', [keys.meta, keys.set, keys.token], [hash, ttlMs])) as number) === 1;
  }

  /**
   * Writes a body to Redis: its chunks, then its metadata (a body is complete
   * once its metadata is there). The bytes come from this replica's local
   * copy, made now (and kept) when there is none.
   */
  async #writeBody(known: KnownBody, planOf: () => IpcPlan, ttlMs: number, progress?: Listener<ProgressEvent>): Promise<void> {
    let pinned = this.#local.pin(known.id);
    if (pinned === undefined) {
      const plan = planOf();
      const ipc = writeIpcPlan(plan, this.#local.allocate(plan.byteLength));
      pinned = this.#local.adopt(known.id, ipc, known.totalRows);
    }
    try {
      const { ipc } = pinned.body;
      const chunks = Math.ceil(ipc.byteLength / this.chunkBytes);
      const base = this.#bodyBase(known.id);
      const writes: Array<Promise<unknown>> = [];
      // Chunks complete in any order: progress is the bytes of those done, so it only grows.
      let stored = 0;
      progress?.({ type: 'progress', bytes: 0, totalBytes: ipc.byteLength });
      for (let i = 0; i < chunks; i++) {
        const view = Buffer.from(ipc.buffer, ipc.byteOffset + i * this.chunkBytes, Math.min(this.chunkBytes, ipc.byteLength - i * this.chunkBytes));
        const write = this.#send(['SET', `${base}c:${i}`, view, 'PX', String(ttlMs)]);
        writes.push(
          progress === undefined ? write : write.then(() => progress({ type: 'progress', bytes: (stored += view.byteLength), totalBytes: ipc.byteLength })),
        );
      }
      await Promise.all(writes);
      const meta = `${base}m`;
      await Promise.all([
        this.#send([
          'HSET',
          meta,
          'bytes',
          String(ipc.byteLength),
          'chunks',
          String(chunks),
          'rows',
          String(known.totalRows),
          'chunk',
          String(this.chunkBytes),
        ]),
        this.#send(['PEXPIRE', meta, String(ttlMs)]),
      ]);
    } finally {
      pinned.unpin();
    }
  }

  /** Copies a body from Redis into a local shared buffer, renewing the lease while it runs. */
  async #pull(
    id: string,
    shape: { byteLength: number; chunks: number; totalRows: number; chunkBytes: number },
    renew: () => Promise<boolean>,
  ): Promise<PinnedBody> {
    const ipc = this.#local.allocate(shape.byteLength);
    const renewal = setInterval(() => void renew().catch(() => {}), Math.max(10, this.leaseTimeoutMs / 3)).unref();
    try {
      const base = this.#bodyBase(id);
      let next = 0;
      const worker = async () => {
        while (next < shape.chunks) {
          const i = next++;
          const chunk = (await this.#send(['GET', `${base}c:${i}`], true)) as Buffer | null;
          const expected = Math.min(shape.chunkBytes, shape.byteLength - i * shape.chunkBytes);
          // Gone meanwhile (its last token expired or was consumed elsewhere): the token is gone too.
          if (chunk === null || chunk.byteLength !== expected) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
          ipc.set(chunk, i * shape.chunkBytes);
        }
      };
      await Promise.all(Array.from({ length: Math.min(PULL_WINDOW, shape.chunks) }, worker));
    } catch (error) {
      this.#local.discard(ipc);
      throw error;
    } finally {
      clearInterval(renewal);
    }
    return this.#local.adopt(id, ipc, shape.totalRows);
  }

  async #bodyIdOf(hash: string): Promise<string | undefined> {
    const id = (await this.#send(['GET', this.#indexKey(hash)])) as string | null;
    return id ?? undefined;
  }

  /**
   * One command, answered within the store's deadline, sent to the node that
   * serves its key (every command the store sends names its key first).
   */
  #send(args: Array<string | Buffer>, buffers = false): Promise<Reply> {
    return this.#withDeadline((client) => client.send(String(args[1]), args, buffers));
  }

  /** One of the store's scripts (declared once, in redis-scripts.ts), within the store's deadline. */
  #run(script: StoreScriptName, keys: string[], args: Array<string | number>): Promise<Reply> {
    return this.#withDeadline((client) => client.run(script, keys, args));
  }

  /** Whether what was written for `key` so far would survive a failover (a replica holds it). */
  #replicated(key: string): Promise<boolean> {
    return this.#withDeadline((client) => client.replicated(key, this.#timeoutMs / 2));
  }

  /**
   * `call`'s answer within the store's deadline; any failure becomes an
   * S2SPError with a code. The client's own `timeout` ends only a command not
   * yet written; this deadline also ends one waiting for its reply.
   */
  async #withDeadline<T>(call: (client: RedisConnection) => Promise<T>): Promise<T> {
    if (this.#closed) throw new S2SPError('S2SP_ERR_CACHE_CLOSED');
    const client = this.#client;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(new S2SPError('S2SP_ERR_STORE_UNAVAILABLE'));
        this.#reconnect(client);
      }, this.#timeoutMs);
    });
    try {
      for (;;) {
        try {
          return await Promise.race([call(client), deadline]);
        } catch (error) {
          // A multi-key script on a slot being migrated, its keys split between two nodes: asked
          // again until the migration ends (or the deadline does).
          if (!isTryAgain(error)) throw error;
          await Promise.race([sleep(TRY_AGAIN_MS), deadline]);
        }
      }
    } catch (error) {
      throw storeError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  #full(needed: number, used: number): S2SPError {
    return new S2SPError('S2SP_ERR_CACHE_FULL', {
      problem: 'budget',
      neededBytes: needed,
      freeBytes: Math.max(0, this.maxBytes - used),
      maxBytes: this.maxBytes,
    });
  }

  #bodyBase(id: string): string {
    return `{${this.#prefix}:b:${id}}:`;
  }

  #tokenKeys(id: string, hash: string) {
    const base = this.#bodyBase(id);
    return { meta: `${base}m`, set: `${base}ts`, token: `${base}t:${hash}`, lease: `${base}l:${hash}` };
  }

  #indexKey(hash: string): string {
    return `${this.#prefix}:i:${hash}`;
  }

  /** The account a body is counted in: picked by its id, the same on every replica. */
  #accountOf(id: string): number {
    return Buffer.from(id.slice(0, 4), 'base64url')[0] % ACCOUNT_SHARDS;
  }

  #acctKey(account: number, name: 'sizes' | 'bodies' | 'tokens'): string {
    return `{${this.#accounts[account]}}:${name}`;
  }

  #acctKeys(account: number): string[] {
    return [this.#acctKey(account, 'sizes'), this.#acctKey(account, 'bodies'), this.#acctKey(account, 'tokens')];
  }
}

/**
 * The hash tags of the budget's accounts for key prefix `prefix`: account
 * `i` gets `prefix:a:i` with the first suffix (`.n`) whose slot lies in the
 * i-th of ACCOUNT_SHARDS equal slot ranges. A cluster gives each master
 * consecutive slot ranges, so the accounts spread over every master instead
 * of landing where their names happen to hash.
 */
function accountTagsOf(prefix: string): string[] {
  const width = CLUSTER_SLOTS / ACCOUNT_SHARDS;
  return Array.from({ length: ACCOUNT_SHARDS }, (_, account) => {
    // Each try lands in the range with probability 1/ACCOUNT_SHARDS: a few dozen tries, once per store.
    for (let n = 0; ; n++) {
      const tag = `${prefix}:a:${account}.${n}`;
      if (Math.floor(slotOf(`{${tag}}`) / width) === account) return tag;
    }
  });
}

/** The body id: SHA-256 of its IPC stream, hashed from the planned parts (no buffer of the body's size). */
function contentIdOf(plan: IpcPlan): string {
  const hash = createHash('sha256');
  for (const part of plan.parts) hash.update(part);
  return hash.digest('base64url');
}

/** What Redis keys hold instead of a token: its SHA-256, base64url. */
export function tokenHashOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Any failure talking to Redis as an S2SPError: unavailable (503), the Redis error as its cause. */
function storeError(error: unknown): S2SPError {
  if (isS2SPError(error)) return error as S2SPError;
  return new S2SPError('S2SP_ERR_STORE_UNAVAILABLE', { cause: error });
}

/** A cluster node's `TRYAGAIN`: the keys of a command are split by a slot migration under way. */
function isTryAgain(error: unknown): boolean {
  return String((error as { message?: unknown } | null)?.message ?? '').startsWith('TRYAGAIN');
}

/** Redis refused a write for memory (maxmemory, policy noeviction): `OOM command not allowed...`, maybe as a cause. */
function isOutOfMemory(error: unknown): boolean {
  const messageOf = (e: unknown) => String((e as { message?: unknown } | null)?.message ?? '');
  return messageOf(error).startsWith('OOM') || messageOf((error as { cause?: unknown } | null)?.cause).startsWith('OOM');
}
