/**
 * The default BodyStore: bodies held in this process as SharedArrayBuffer IPC,
 * each behind single-use tokens with a TTL and a shared byte budget.
 *
 * Tokens point at bodies: putting the same Table object again (a resource
 * tool that returns one table on every call) adds a token to the body it
 * already has, without encoding or storing it again; a body lives as long as
 * its last token. The budget counts bodies, not tokens.
 *
 * Single use is committed on completion (SPEC 3.4; the data plane commits just
 * before a response's last bytes, SPEC 5): `lease` marks the entry in
 * flight (a second lease gets 409), `commit` deletes it, `release` returns it,
 * and a lease neither renewed nor settled within the lease timeout ends by
 * itself (lazily: the next lease, renewal or expiry that looks finds it over). The check-and-mark in `lease` runs without an await, so it is
 * atomic on the event loop.
 */
import { randomUUID } from 'node:crypto';
import type { Table } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { Listeners, type Listener, type ProgressEvent, type Unsubscribe } from '../observe.js';
import { optionsObject, positiveOption } from '../option-checks.js';
import type { BatchStream } from '../table/batch-stream.js';
import {
  DEFAULT_LEASE_TIMEOUT_MS,
  type BodyLease,
  type BodyStore,
  type BudgetReclaimer,
  type BudgetShare,
  type CachedBody,
  type PutOptions,
  type PutResult,
  type StoreEvent,
  type StoreStats,
  type StreamedPutResult,
} from './body-store.js';
import { ipcPlanOf, sharedIpcFromBatches, tableFromSharedIpc, writeIpcPlan } from '../ipc/shared-body.js';
import type { FullGc } from './gc-nudge.js';
import { SharedMemoryPool } from './shared-memory-pool.js';
import { mintToken } from '../protocol/token.js';
import { bodyTableOf } from '../table/body-table.js';

/** Default time to live of an entry: 10 minutes. */
export const DEFAULT_TTL_MS = 10 * 60 * 1000;
/** Default byte budget of a MemoryStore: 1 GiB. */
export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;
/** Streamed bodies up to this size are copied into a buffer of their own size once complete. */
const COMPACT_STREAMED_MAX = 16 * 1024 * 1024;
/** setTimeout's largest delay (~24.8 days); a longer one fires after 1 ms instead. */
const MAX_TIMER_MS = 0x7fffffff;

/** Why an entry left a MemoryStore. */
type EvictReason = 'consumed' | 'expired' | 'revoked' | 'closed';

/** Turns single use off; set in the class's static block, the one place that may touch `#singleUse`. */
let allowMultiUse: (store: MemoryStore) => void;

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Time to live of each entry in milliseconds (default 600,000). */
  ttlMs?: number;
  /** Budget for all bodies together, in bytes (default 1 GiB). */
  maxBytes?: number;
  /** Milliseconds a lease lasts without renewal (default 30,000). */
  leaseTimeoutMs?: number;
  /**
   * A full garbage collection for the store's own buffer pool to ask for
   * (e.g. `globalThis.gc` under `--expose-gc`); ignored with `memoryPool`.
   */
  fullGc?: FullGc;
  /** Where body buffers come from and go back to (default: a pool of this store's own). */
  memoryPool?: SharedMemoryPool;
}

/** One stored body and who holds it. */
interface Body {
  readonly cached: CachedBody;
  /** The body table it was encoded from, to forget the identity mapping when the body goes. */
  readonly source: WeakRef<Table>;
  /** Live entries (tokens) pointing here. */
  tokens: number;
  /** Leases not yet settled: their transfers may still read the buffer. */
  leases: number;
  freed: boolean;
}

/**
 * The current lease of an entry. Its timeout is a deadline checked when it
 * matters (another lease, a renewal, the entry's expiry), not a timer per
 * lease: a small transfer settles long before any timeout, and arming and
 * clearing a timer for each one showed in the small-requests profile.
 */
interface LeaseState {
  deadline: number;
}

/** The store side of its leases (the store's state stays private to it). */
interface LeaseOps {
  settle(lease: MemoryLease, consume: boolean): boolean;
  renew(lease: MemoryLease): boolean;
}

/**
 * A lease of a MemoryStore entry, and the entry's in-flight state while it
 * holds it. A class: every fetch takes one, and a closure per method showed
 * in the small-requests profile.
 */
class MemoryLease implements BodyLease, LeaseState {
  readonly body: CachedBody;
  deadline: number;
  settled = false;
  readonly #ops: LeaseOps;

  constructor(
    ops: LeaseOps,
    readonly token: string,
    readonly entry: Entry,
    readonly timeoutMs: number,
  ) {
    this.#ops = ops;
    this.body = entry.body.cached;
    this.deadline = Date.now() + timeoutMs;
  }

  async renew(): Promise<boolean> {
    return this.#ops.renew(this);
  }

  async commit(): Promise<boolean> {
    return this.#ops.settle(this, true);
  }

  async release(): Promise<void> {
    this.#ops.settle(this, false);
  }
}

interface Entry {
  readonly body: Body;
  readonly expiresAt: number;
  timer: NodeJS.Timeout;
  /** The lease holding the entry in flight, if any (single use only). */
  lease?: LeaseState;
  expired: boolean;
}

/** In-process BodyStore with TTL, byte budget, shared bodies and single use committed on completion. */
export class MemoryStore implements BodyStore {
  readonly ttlMs: number;
  readonly maxBytes: number;
  readonly leaseTimeoutMs: number;
  /** False only for {@link multiUseMemoryStore}'s stores (benchmarks). */
  #singleUse = true;
  readonly #entries = new Map<string, Entry>();
  /** Body table -> its stored body: a table put again gets a token, not a second copy. */
  readonly #bodies = new WeakMap<Table, Body>();
  /** Ids of the bodies held, for {@link holdsBody}. */
  readonly #liveBodyIds = new Set<string>();
  readonly #memoryPool: SharedMemoryPool;
  readonly #observers = new Listeners<StoreEvent>();
  #bytes = 0;
  /** Bytes the budget's shares hold ({@link shareBudget}). */
  #sharedBytes = 0;
  readonly #reclaimers = new Set<BudgetReclaimer>();
  #bodyCount = 0;
  #closed = false;

  static {
    allowMultiUse = (store) => void (store.#singleUse = false);
  }

  constructor(options: MemoryStoreOptions = {}) {
    options = optionsObject(options);
    this.ttlMs = positiveOption(options.ttlMs, 'ttlMs') ?? DEFAULT_TTL_MS;
    this.maxBytes = positiveOption(options.maxBytes, 'maxBytes') ?? DEFAULT_MAX_BYTES;
    this.leaseTimeoutMs = positiveOption(options.leaseTimeoutMs, 'leaseTimeoutMs') ?? DEFAULT_LEASE_TIMEOUT_MS;
    this.#memoryPool = options.memoryPool ?? new SharedMemoryPool({ maxIdleBytes: Math.min(256 * 1024 * 1024, this.maxBytes / 4), fullGc: options.fullGc });
  }

  async put(table: Table, options: PutOptions = {}): Promise<PutResult> {
    if (this.#closed) throw new S2SPError('S2SP_ERR_CACHE_CLOSED');
    const ttlMs = positiveOption(options.ttlMs, 'ttlMs') ?? this.ttlMs;
    return this.#register(this.#bodyFor(bodyTableOf(table), options.observe), ttlMs, options.origin);
  }

  /**
   * The stored body of `table`, stored now if it is not yet (budget checked before the allocation).
   * The copy is one synchronous step, so progress is its start and its end.
   */
  #bodyFor(table: Table, progress: Listener<ProgressEvent> = () => {}): Body {
    const known = this.#bodies.get(table);
    if (known !== undefined && !known.freed) {
      progress({ type: 'progress', bytes: known.cached.byteLength, totalBytes: known.cached.byteLength });
      return known;
    }
    const plan = ipcPlanOf(table);
    if (!this.#fits(plan.byteLength)) {
      throw new S2SPError('S2SP_ERR_CACHE_FULL', {
        problem: 'budget',
        neededBytes: plan.byteLength,
        freeBytes: this.maxBytes - this.#bytes - this.#sharedBytes,
        maxBytes: this.maxBytes,
      });
    }
    progress({ type: 'progress', bytes: 0, totalBytes: plan.byteLength });
    const ipc = writeIpcPlan(plan, this.#memoryPool.acquire(plan.byteLength));
    this.#bytes += ipc.byteLength;
    const body = this.#adopt(ipc, tableFromSharedIpc(ipc), table);
    progress({ type: 'progress', bytes: plan.byteLength, totalBytes: plan.byteLength });
    return body;
  }

  /** Holds `ipc` (already counted against the budget) as a body, known by its source table from now on. */
  #adopt(ipc: Uint8Array, table: Table, source: Table): Body {
    const cached: CachedBody = { id: randomUUID(), table, ipc, totalRows: table.numRows, byteLength: ipc.byteLength };
    const body: Body = { cached, source: new WeakRef(source), tokens: 0, leases: 0, freed: false };
    this.#bodies.set(source, body);
    this.#liveBodyIds.add(cached.id);
    this.#bodyCount++;
    return body;
  }

  /**
   * The one registration path: a fresh token for `body`, whichever way the
   * body came in (a Table or streamed batches), so every put is minted and
   * observed once.
   */
  #register(body: Body, ttlMs: number, origin: string | undefined): PutResult {
    const token = mintToken();
    const expiresAt = Date.now() + ttlMs;
    this.#entries.set(token, { body, expiresAt, timer: this.#schedule(token, ttlMs), expired: false });
    body.tokens++;
    this.#observers.emit({ type: 'minted', body: body.cached, expiresAt, origin });
    return { token, expiresAt };
  }

  /**
   * Caches batches as they arrive into one growing shared buffer. The size is
   * not known before the allocation, so the budget is claimed as each batch
   * grows the buffer: a body that outgrows it fails at that batch with
   * `S2SP_ERR_CACHE_FULL`, and what it claimed is given back.
   */
  async putBatches(batches: BatchStream, options: Pick<PutOptions, 'ttlMs' | 'origin'> = {}): Promise<StreamedPutResult> {
    if (this.#closed) throw new S2SPError('S2SP_ERR_CACHE_CLOSED');
    const ttlMs = positiveOption(options.ttlMs, 'ttlMs') ?? this.ttlMs;
    let claimed = 0;
    let ipc: Uint8Array;
    try {
      ipc = await sharedIpcFromBatches(batches.schema, batches, {
        // The whole budget, not what is free now: bodies may expire meanwhile, and claims keep the count.
        maxByteLength: this.maxBytes,
        claim: (n) => {
          if (!this.#fits(n)) {
            throw new S2SPError('S2SP_ERR_CACHE_FULL', {
              problem: 'budget',
              neededBytes: claimed + n,
              freeBytes: this.maxBytes - this.#bytes - this.#sharedBytes + claimed,
              maxBytes: this.maxBytes,
            });
          }
          this.#bytes += n;
          claimed += n;
        },
      });
      if (this.#closed) throw new S2SPError('S2SP_ERR_CACHE_CLOSED');
    } catch (error) {
      this.#bytes -= claimed;
      throw error;
    }
    if (ipc.byteLength <= COMPACT_STREAMED_MAX) {
      // A small body gives back the address space its growable buffer reserved (the whole budget).
      const compact = this.#memoryPool.acquire(ipc.byteLength);
      compact.set(ipc);
      ipc = compact;
    }
    // The claims counted the buffer as it grew; from now on the body counts its own bytes.
    this.#bytes += ipc.byteLength - claimed;
    const table = tableFromSharedIpc(ipc);
    return { ...this.#register(this.#adopt(ipc, table, table), ttlMs, options.origin), table };
  }

  async lease(token: string): Promise<BodyLease> {
    const entry = this.#entries.get(token);
    if (entry === undefined || entry.expired || Date.now() >= entry.expiresAt) {
      throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
    }
    if (entry.lease !== undefined) {
      if (Date.now() < entry.lease.deadline) throw new S2SPError('S2SP_ERR_TOKEN_IN_FLIGHT');
      entry.lease = undefined; // timed out: the entry is free again
    }
    const lease = new MemoryLease(this.#leaseOps, token, entry, this.leaseTimeoutMs);
    // Multi-use (benchmarks only): any number of transfers at once, none of them consumes.
    if (this.#singleUse) entry.lease = lease;
    entry.body.leases++;
    this.#observers.emit({ type: 'leased' });
    return lease;
  }

  /** What this store's leases call back: one object per store, not closures per lease. */
  readonly #leaseOps: LeaseOps = {
    settle: (lease, consume) => this.#settle(lease, consume),
    renew: (lease) => this.#renew(lease),
  };

  /** Ends a lease; true when a commit took the token (multi-use: found it still live). */
  #settle(lease: MemoryLease, consume: boolean): boolean {
    if (lease.settled) return false;
    lease.settled = true;
    this.#observers.emit({ type: 'settled' });
    const { token, entry } = lease;
    const { body } = entry;
    body.leases--;
    if (entry.lease === lease) entry.lease = undefined;
    let consumed = false;
    if (this.#entries.get(token) === entry && entry.lease === undefined) {
      // A commit after the lease timed out still consumes, unless another transfer took the token since.
      consumed = consume;
      if (consume && this.#singleUse) this.#remove(token, 'consumed');
      else if (entry.expired) this.#remove(token, 'expired');
    }
    if (body.tokens === 0) this.#free(body);
    return consumed;
  }

  #renew(lease: MemoryLease): boolean {
    const { token, entry } = lease;
    if (lease.settled || entry.lease !== lease || this.#entries.get(token) !== entry) return !lease.settled && !this.#singleUse;
    if (Date.now() >= lease.deadline) {
      // Timed out before this renewal: lost, as if another transfer had taken it.
      entry.lease = undefined;
      if (entry.expired) this.#remove(token, 'expired');
      return false;
    }
    lease.deadline = Date.now() + this.leaseTimeoutMs;
    return true;
  }

  async delete(token: string): Promise<boolean> {
    const entry = this.#entries.get(token);
    if (entry === undefined || entry.expired) return false;
    this.#remove(token, 'revoked');
    return true;
  }

  holdsBody(bodyId: string): boolean {
    return this.#liveBodyIds.has(bodyId);
  }

  async has(token: string): Promise<boolean> {
    const entry = this.#entries.get(token);
    return entry !== undefined && !entry.expired && Date.now() < entry.expiresAt;
  }

  shareBudget(reclaim: BudgetReclaimer): BudgetShare {
    let held = 0;
    const share: BudgetShare = {
      take: (bytes) => {
        if (this.#closed || this.#bytes + this.#sharedBytes + bytes > this.maxBytes) return false;
        held += bytes;
        this.#sharedBytes += bytes;
        return true;
      },
      give: (bytes) => {
        const given = Math.min(bytes, held);
        held -= given;
        this.#sharedBytes -= given;
      },
      close: () => {
        share.give(held);
        this.#reclaimers.delete(reclaim);
      },
    };
    this.#reclaimers.add(reclaim);
    return share;
  }

  async stats(): Promise<StoreStats> {
    return {
      entries: this.#entries.size,
      bytes: this.#bytes,
      maxBytes: this.maxBytes,
      bodies: this.#bodyCount,
      idleBytes: this.#memoryPool.stats().bytes,
      sharedBytes: this.#sharedBytes,
    };
  }

  /**
   * True when `bytes` more of bodies fit the budget, after asking the shares
   * to give back what they keep beside the bodies (memory pressure: a body
   * comes before what is made of other bodies).
   */
  #fits(bytes: number): boolean {
    const over = () => this.#bytes + this.#sharedBytes + bytes - this.maxBytes;
    for (const reclaim of this.#reclaimers) {
      if (over() <= 0) break;
      reclaim(over());
    }
    return over() <= 0;
  }

  observe(listener: Listener<StoreEvent>): Unsubscribe {
    return this.#observers.add(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const token of [...this.#entries.keys()]) this.#remove(token, 'closed');
    this.#memoryPool.clear();
  }

  /**
   * Arms the expiry timer. unref: a pending expiry must never keep the process
   * alive. Delays over MAX_TIMER_MS are capped and re-armed by `expire`.
   */
  #schedule(token: string, delayMs: number): NodeJS.Timeout {
    return setTimeout(() => this.#expire(token), Math.min(delayMs, MAX_TIMER_MS)).unref();
  }

  /** Expiry: drop the entry now, or when its in-flight transfer ends. */
  #expire(token: string): void {
    const entry = this.#entries.get(token);
    if (entry === undefined) return;
    const left = entry.expiresAt - Date.now();
    if (left > 0) {
      // A capped timer (TTL over ~24.8 days), or a timer that fired a tick early.
      entry.timer = this.#schedule(token, left);
      return;
    }
    entry.expired = true;
    const lease = entry.lease;
    if (lease === undefined || Date.now() >= lease.deadline) this.#remove(token, 'expired');
    // In flight: look again when the lease would time out (a renewal moves that on; a settle removes the entry first).
    else entry.timer = this.#schedule(token, lease.deadline - Date.now());
  }

  #remove(token: string, reason: EvictReason): void {
    const entry = this.#entries.get(token);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.#entries.delete(token);
    entry.body.tokens--;
    if (entry.body.tokens === 0) this.#free(entry.body);
    if (reason === 'expired') this.#observers.emit({ type: 'expired', count: 1 });
    else if (reason !== 'closed') this.#observers.emit({ type: reason });
  }

  /** The last token of a body is gone: its bytes leave the budget, its buffer goes back to the pool. */
  #free(body: Body): void {
    if (body.freed) return;
    body.freed = true;
    this.#liveBodyIds.delete(body.cached.id);
    this.#bytes -= body.cached.byteLength;
    this.#bodyCount--;
    const source = body.source.deref();
    if (source !== undefined && this.#bodies.get(source) === body) this.#bodies.delete(source);
    // Back to the pool for reuse: a SharedArrayBuffer would otherwise wait for a full GC
    // (shared-memory-pool.ts). Not while an unsettled lease (one that timed out) may still
    // stream it: then the collector takes it once that transfer lets go.
    if (body.leases === 0) this.#memoryPool.release(body.cached.ipc);
  }
}

/**
 * BENCHMARKS ONLY (exported by `s2sp/testing`, never by `s2sp`): a MemoryStore
 * that keeps entries after a complete transfer and lets any number of
 * transfers of one token run at once, so a load generator can hit one token
 * from many connections. It breaks the single-use guarantee of SPEC 3.4.
 */
export function multiUseMemoryStore(options?: MemoryStoreOptions): MemoryStore {
  const store = new MemoryStore(options);
  allowMultiUse(store);
  return store;
}
