/**
 * The store behind the data plane. Async from day one, so a shared store
 * (several resource-server replicas behind a load balancer) can replace the
 * in-memory one without changing its callers.
 */
import type { Table } from 'apache-arrow';
import type { Listener, ProgressEvent, Unsubscribe } from '../observe.js';
import type { BatchStream } from '../table/batch-stream.js';

/** Default time a lease lasts without renewal: 30 seconds. */
export const DEFAULT_LEASE_TIMEOUT_MS = 30_000;

/** One cached body: the Arrow table (with `_row_id` first) and its IPC bytes. */
export interface CachedBody {
  /**
   * Identifies this copy of the body (not the token): workers map each body
   * once under this id, so it is never reused for other bytes.
   */
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

/** Options of `BodyStore.put`. */
export interface PutOptions {
  /** Time to live of this token in milliseconds (default: the store's). */
  ttlMs?: number;
  /**
   * Told as the body is stored, with growing byte counts that end at the
   * total; a body the store holds already reports the total at once. A store
   * that copies in one step reports 0, then the total.
   */
  observe?: Listener<ProgressEvent>;
  /**
   * What made the body, e.g. the resource tool's name. The data plane learns
   * per origin which forms its bodies are fetched in, and prepares the next
   * bodies of that origin in them (`prepare: 'auto'`).
   */
  origin?: string;
}

/** What `put` returns. */
export interface PutResult {
  /** The bearer token for the data plane. */
  readonly token: string;
  /** Epoch milliseconds after which the entry is gone. */
  readonly expiresAt: number;
}

/** What `putBatches` returns: the put, and the body as cached (mapped over the cached bytes, no copy). */
export interface StreamedPutResult extends PutResult {
  readonly table: Table;
}

/**
 * Exclusive access to one entry for one transfer (SPEC 3.4). Exactly one of
 * `commit` or `release` should be called; a lease that is neither renewed nor
 * settled ends by itself after `timeoutMs`, so a holder that died or forgot
 * cannot hold a token forever.
 */
export interface BodyLease {
  readonly body: CachedBody;
  /** Milliseconds the lease lasts from its start or last renewal. */
  readonly timeoutMs: number;
  /**
   * Extends the lease by `timeoutMs` from now; a long transfer calls it well
   * within every `timeoutMs`. Resolves false when the lease was lost (it timed
   * out, or the token is gone): the transfer should then stop.
   */
  renew(): Promise<boolean>;
  /**
   * The transfer is about to complete: the entry is deleted (single use). The
   * data plane calls it before a response's last bytes and sends them only
   * when it resolves true (SPEC 5): that is the one transfer of the token.
   * Resolves false when this lease consumed nothing (the token was revoked or
   * expired meanwhile, or this lease timed out and another transfer took the
   * token); a settled lease also answers false. (A store written when this
   * resolved void still works: the data plane takes anything but false as
   * consumed.)
   * @throws S2SPError `S2SP_ERR_STORE_UNAVAILABLE` when a shared store cannot record it
   */
  commit(): Promise<boolean>;
  /** The transfer failed or was refused: the entry stays fetchable until its TTL. */
  release(): Promise<void>;
}

/** Counters for health and metrics. */
export interface StoreStats {
  readonly entries: number;
  readonly bytes: number;
  readonly maxBytes: number;
  /** Distinct bodies held (several tokens may share one), where the store knows. */
  readonly bodies?: number;
  /** Bytes of bodies this process holds (a shared store's local copies), where it differs from `bytes`. */
  readonly localBytes?: number;
  /** Memory kept for reuse beyond the entries (MemoryStore's idle shared buffers), if any. */
  readonly idleBytes?: number;
  /** Bytes kept beside the bodies under the same budget ({@link BodyStore.shareBudget}), where the store shares it. */
  readonly sharedBytes?: number;
}

/**
 * A share of a store's byte budget, for memory kept beside its bodies: the
 * data plane's encoded batches (compressed buffers, JSON prepared in think
 * time), so one budget bounds the bodies and what is made of them.
 */
export interface BudgetShare {
  /** Takes `bytes` from the budget; false, taking nothing, when they do not fit. */
  take(bytes: number): boolean;
  /** Gives back `bytes` taken before. */
  give(bytes: number): void;
  /** Ends the share: whatever it still holds goes back. */
  close(): void;
}

/**
 * Frees at least `bytes` of what a {@link BudgetShare} holds, when it can
 * (memory pressure: a put needs the room); returns how much it gave back.
 */
export type BudgetReclaimer = (bytes: number) => number;

/** A cache of bodies keyed by single-use tokens. */
export interface BodyStore {
  /** Default time to live of an entry in ms, if the store has one (tool descriptions tell the LLM). */
  readonly ttlMs?: number;
  /**
   * Caches a table behind a fresh token. The table is normalised first
   * (`bodyTableOf`): `_row_id` added when missing, dictionaries decoded. A
   * table the store already holds (the same Table object, or for a shared
   * store the same bytes) is not stored again: the new token points at it.
   * @throws S2SPError `S2SP_ERR_TABLE_INVALID` when a `_row_id` column is not 0..n-1 in order,
   *   `S2SP_ERR_CACHE_FULL` when it does not fit the byte budget (checked before any allocation),
   *   `S2SP_ERR_STORE_UNAVAILABLE` when a shared store cannot be reached
   */
  put(table: Table, options?: PutOptions): Promise<PutResult>;
  /**
   * Caches batches as they arrive (each must already start with `_row_id`),
   * never holding them all at once besides the cached copy. Optional: without
   * it, resource tools gather streamed batches into a Table and call `put`.
   * @throws S2SPError `S2SP_ERR_CACHE_FULL` as soon as the body outgrows the budget
   */
  putBatches?(batches: BatchStream, options?: Pick<PutOptions, 'ttlMs' | 'origin'>): Promise<StreamedPutResult>;
  /**
   * Takes the entry for one transfer.
   * @throws S2SPError `S2SP_ERR_TOKEN_NOT_FOUND` (unknown, expired, consumed) or `S2SP_ERR_TOKEN_IN_FLIGHT`
   */
  lease(token: string): Promise<BodyLease>;
  /** Revokes a token: resolves true when it named a live entry, which is now gone. */
  delete(token: string): Promise<boolean>;
  /** True when the token names a live entry (leased or not). */
  has(token: string): Promise<boolean>;
  /**
   * True while the store keeps the body `bodyId` names (some live token
   * shares it), where the store can tell; the data plane then drops what it
   * keeps per body (compressed buffers) once this is false.
   */
  holdsBody?(bodyId: string): boolean;
  /**
   * Opens a share of the byte budget for memory kept beside the bodies.
   * Before a put fails for room, the store asks `reclaim` to give some back.
   * Optional: without it, that memory is bounded on its own.
   */
  shareBudget?(reclaim: BudgetReclaimer): BudgetShare;
  /** Entry count and bytes held. */
  stats(): Promise<StoreStats>;
  /** Drops every entry this process holds and stops timers (a shared store keeps its shared entries). */
  close(): Promise<void>;
  /**
   * Tells `listener` what happens to tokens and leases from now on (for
   * metrics); returns the function that stops it. Optional: a store without
   * it still works everywhere, it just goes uncounted.
   */
  observe?(listener: Listener<StoreEvent>): Unsubscribe;
}

/**
 * What a store reports to its observers. Token events count tokens (a body
 * shared by several tokens ends once, its tokens each end).
 * - `minted`: `put` or `putBatches` handed out a token (once per token, whichever way the body came in);
 *   `body` is the body as this process holds it (absent when it holds no copy), `origin` the put's.
 * - `consumed`: a transfer committed (single use); `revoked`: `delete` removed a live token.
 * - `expired`: `count` tokens reached their TTL. A shared store counts each
 *   expiry once across replicas, on the replica that notices it first.
 * - `leased` / `settled`: a lease was taken / committed or released, by this process.
 * - `failed`: a call failed because the shared store could not be reached.
 * - `connection-error`: the shared store's connection failed, or tidying
 *   after a recorded commit did (for a log; calls still fail with their own codes).
 */
export type StoreEvent =
  | { readonly type: 'minted'; readonly body?: CachedBody; readonly expiresAt: number; readonly origin?: string }
  | { readonly type: 'consumed' | 'revoked' | 'leased' | 'settled' }
  | { readonly type: 'expired'; readonly count: number }
  | { readonly type: 'failed' | 'connection-error'; readonly error: Error };
