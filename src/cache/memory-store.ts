/**
 * The default BodyStore: bodies held in this process as SharedArrayBuffer IPC,
 * each behind a single-use token with a TTL and a shared byte budget.
 *
 * Single use is committed on completion (SPEC 3.4): `lease` marks the entry in
 * flight (a second lease gets 409), `commit` deletes it, `release` returns it.
 * The check-and-mark in `lease` runs without an await, so it is atomic on the
 * event loop.
 */
import { randomUUID } from 'node:crypto';
import type { Table } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import type { BodyLease, BodyStore, CachedBody, PutResult, StoreStats } from './body-store.js';
import { sharedIpcFromTable, tableFromSharedIpc } from '../ipc/shared-body.js';
import type { FullGc } from './gc-nudge.js';
import { SharedMemoryPool } from './shared-memory-pool.js';
import { mintToken } from '../protocol/token.js';

/** Default time to live of an entry: 10 minutes. */
export const DEFAULT_TTL_MS = 10 * 60 * 1000;
/** Default byte budget of a MemoryStore: 1 GiB. */
export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;
/** setTimeout's largest delay (~24.8 days); a longer one fires after 1 ms instead. */
const MAX_TIMER_MS = 0x7fffffff;

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Time to live of each entry in milliseconds (default 600,000). */
  ttlMs?: number;
  /** Budget for all entries together, in bytes (default 1 GiB). */
  maxBytes?: number;
  /**
   * BENCHMARKS ONLY. `false` keeps entries after a complete transfer and
   * lets any number of transfers of one token run at once, so a load
   * generator can hit one token from many connections. Never use it in
   * production: it breaks the single-use guarantee of SPEC 3.4.
   */
  singleUse?: boolean;
  /** Called when an entry is removed, with why (for metrics and tests). */
  onEvict?: (reason: 'consumed' | 'expired' | 'closed') => void;
  /**
   * A full garbage collection for the store's own buffer pool to ask for
   * (e.g. `globalThis.gc` under `--expose-gc`); ignored with `memoryPool`.
   */
  fullGc?: FullGc;
  /** Where body buffers come from and go back to (default: a pool of this store's own). */
  memoryPool?: SharedMemoryPool;
}

interface Entry {
  readonly body: CachedBody;
  readonly expiresAt: number;
  timer: NodeJS.Timeout;
  inFlight: boolean;
  expired: boolean;
}

/** In-process BodyStore with TTL, byte budget and single use committed on completion. */
export class MemoryStore implements BodyStore {
  readonly ttlMs: number;
  readonly maxBytes: number;
  readonly singleUse: boolean;
  private readonly entries = new Map<string, Entry>();
  private readonly onEvict?: MemoryStoreOptions['onEvict'];
  private readonly memoryPool: SharedMemoryPool;
  private bytes = 0;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.ttlMs = positive(options.ttlMs ?? DEFAULT_TTL_MS, 'ttlMs');
    this.maxBytes = positive(options.maxBytes ?? DEFAULT_MAX_BYTES, 'maxBytes');
    this.singleUse = options.singleUse ?? true;
    this.onEvict = options.onEvict;
    this.memoryPool = options.memoryPool ?? new SharedMemoryPool({ maxIdleBytes: Math.min(256 * 1024 * 1024, this.maxBytes / 4), fullGc: options.fullGc });
  }

  async put(table: Table, options: { ttlMs?: number } = {}): Promise<PutResult> {
    if (this.closed) throw new S2SPError('S2SP_ERR_CACHE_CLOSED');
    const ipc = sharedIpcFromTable(table, (n) => this.memoryPool.acquire(n));
    if (this.bytes + ipc.byteLength > this.maxBytes) {
      this.memoryPool.release(ipc);
      throw new S2SPError('S2SP_ERR_CACHE_FULL', {
        neededBytes: ipc.byteLength,
        freeBytes: this.maxBytes - this.bytes,
        maxBytes: this.maxBytes,
      });
    }
    const body: CachedBody = {
      id: randomUUID(),
      table: tableFromSharedIpc(ipc),
      ipc,
      totalRows: table.numRows,
      byteLength: ipc.byteLength,
    };
    const token = mintToken();
    const ttlMs = positive(options.ttlMs ?? this.ttlMs, 'ttlMs');
    const timer = this.schedule(token, ttlMs);
    const expiresAt = Date.now() + ttlMs;
    this.entries.set(token, { body, expiresAt, timer, inFlight: false, expired: false });
    this.bytes += body.byteLength;
    return { token, expiresAt };
  }

  async lease(token: string): Promise<BodyLease> {
    const entry = this.entries.get(token);
    if (entry === undefined || entry.expired || Date.now() >= entry.expiresAt) {
      throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
    }
    if (entry.inFlight) throw new S2SPError('S2SP_ERR_TOKEN_IN_FLIGHT');
    // Multi-use (benchmarks only): any number of transfers at once, none of them consumes.
    if (this.singleUse) entry.inFlight = true;
    let settled = false;
    const settle = (consume: boolean) => {
      if (settled) return;
      settled = true;
      entry.inFlight = false;
      if (this.entries.get(token) !== entry) return;
      if (consume && this.singleUse) this.remove(token, 'consumed');
      else if (entry.expired) this.remove(token, 'expired');
    };
    return {
      body: entry.body,
      commit: async () => settle(true),
      release: async () => settle(false),
    };
  }

  async has(token: string): Promise<boolean> {
    const entry = this.entries.get(token);
    return entry !== undefined && !entry.expired && Date.now() < entry.expiresAt;
  }

  async stats(): Promise<StoreStats> {
    return { entries: this.entries.size, bytes: this.bytes, maxBytes: this.maxBytes, idleBytes: this.memoryPool.stats().bytes };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const token of [...this.entries.keys()]) this.remove(token, 'closed');
    this.memoryPool.clear();
  }

  /**
   * Arms the expiry timer. unref: a pending expiry must never keep the process
   * alive. Delays over MAX_TIMER_MS are capped and re-armed by `expire`.
   */
  private schedule(token: string, delayMs: number): NodeJS.Timeout {
    return setTimeout(() => this.expire(token), Math.min(delayMs, MAX_TIMER_MS)).unref();
  }

  /** Expiry: drop the entry now, or when its in-flight transfer ends. */
  private expire(token: string): void {
    const entry = this.entries.get(token);
    if (entry === undefined) return;
    const left = entry.expiresAt - Date.now();
    if (left > 0) {
      // A capped timer (TTL over ~24.8 days), or a timer that fired a tick early.
      entry.timer = this.schedule(token, left);
      return;
    }
    entry.expired = true;
    if (!entry.inFlight) this.remove(token, 'expired');
  }

  private remove(token: string, reason: 'consumed' | 'expired' | 'closed'): void {
    const entry = this.entries.get(token);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.entries.delete(token);
    this.bytes -= entry.body.byteLength;
    // Back to the pool: a SharedArrayBuffer would otherwise wait for a full GC (shared-memory-pool.ts).
    this.memoryPool.release(entry.body.ipc);
    this.onEvict?.(reason);
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
