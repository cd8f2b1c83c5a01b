/**
 * The store behind the data plane. Async from day one, so a shared store
 * (several resource-server replicas behind a load balancer) can replace the
 * in-memory one without changing its callers.
 */
import type { Table } from 'apache-arrow';

/** One cached body: the Arrow table (with `_row_id` first) and its IPC bytes. */
export interface CachedBody {
  /** Identifies the body (not the token): workers map each body once under this id. */
  readonly id: string;
  /** The body, mapped over `ipc` (no copy of column buffers). */
  readonly table: Table;
  /** The body as an Arrow IPC stream, SharedArrayBuffer-backed in MemoryStore. */
  readonly ipc: Uint8Array;
  /** Rows in the body. */
  readonly totalRows: number;
  /** Bytes this entry holds against the store's budget. */
  readonly byteLength: number;
}

/** What `put` returns. */
export interface PutResult {
  /** The bearer token for the data plane. */
  readonly token: string;
  /** Epoch milliseconds after which the entry is gone. */
  readonly expiresAt: number;
}

/**
 * Exclusive access to one entry for one transfer (SPEC 3.4). Exactly one of
 * `commit` or `release` must be called.
 */
export interface BodyLease {
  readonly body: CachedBody;
  /** The transfer completed: the entry is deleted (single use). */
  commit(): Promise<void>;
  /** The transfer failed or was refused: the entry stays fetchable until its TTL. */
  release(): Promise<void>;
}

/** Counters for health and metrics. */
export interface StoreStats {
  readonly entries: number;
  readonly bytes: number;
  readonly maxBytes: number;
  /** Memory kept for reuse beyond the entries (MemoryStore's idle shared buffers), if any. */
  readonly idleBytes?: number;
}

/** A cache of bodies keyed by single-use tokens. */
export interface BodyStore {
  /**
   * Caches a table (which must already start with `_row_id`).
   * @throws S2SPError `S2SP_ERR_CACHE_FULL` when it does not fit the byte budget
   */
  put(table: Table, options?: { ttlMs?: number }): Promise<PutResult>;
  /**
   * Takes the entry for one transfer.
   * @throws S2SPError `S2SP_ERR_TOKEN_NOT_FOUND` (unknown, expired, consumed) or `S2SP_ERR_TOKEN_IN_FLIGHT`
   */
  lease(token: string): Promise<BodyLease>;
  /** True when the token names a live entry (leased or not). */
  has(token: string): Promise<boolean>;
  /**
   * Revokes a token: no transfer can start with it any more, and its entry is
   * removed (once the transfer holding it ends, if one does).
   * @returns true when the token named a live entry
   */
  delete(token: string): Promise<boolean>;
  /** Entry count and bytes held. */
  stats(): Promise<StoreStats>;
  /** Drops every entry and stops timers. */
  close(): Promise<void>;
}
