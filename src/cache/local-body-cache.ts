/**
 * A replica's own copies of bodies that live in a shared store: bounded by
 * bytes, least recently used first out, in SharedArrayBuffers from a
 * {@link SharedMemoryPool} so the encoder workers map them without a copy.
 * A large transfer then pulls its body from Redis once, and a replica that
 * put a body serves it without pulling it back.
 *
 * A body in use by a transfer is pinned: it is never evicted, and its buffer
 * never reused, until the transfer lets go.
 */
import { randomUUID } from 'node:crypto';
import type { CachedBody } from './body-store.js';
import type { SharedMemoryPool } from './shared-memory-pool.js';
import { tableFromSharedIpc } from '../ipc/shared-body.js';

interface LocalBody {
  readonly cached: CachedBody;
  pins: number;
  /** Out of the cache (evicted, or never fitted): the buffer goes back to the pool when the last pin goes. */
  detached: boolean;
}

/** A pinned local body: `unpin` once the transfer is over. */
export interface PinnedBody {
  readonly body: CachedBody;
  unpin(): void;
}

/** Bounded, byte-sized LRU of local body copies keyed by the shared store's body id. */
export class LocalBodyCache {
  readonly maxBytes: number;
  readonly #pool: SharedMemoryPool;
  /** Insertion order is recency order: a hit moves the body to the end. */
  readonly #bodies = new Map<string, LocalBody>();
  #bytes = 0;

  /** @param maxBytes bytes of bodies kept; a body larger than this is used once and not kept */
  constructor(maxBytes: number, pool: SharedMemoryPool) {
    this.maxBytes = maxBytes;
    this.#pool = pool;
  }

  /** Bytes of bodies kept. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The body under `id` unpinned, or undefined: for work that may lose it
   * (think-time preparation). Its id is its copy's own, never reused, so
   * what is made of it serves only transfers that pin this same copy.
   */
  peek(id: string): CachedBody | undefined {
    return this.#bodies.get(id)?.cached;
  }

  /** The body under `id`, pinned, or undefined. */
  pin(id: string): PinnedBody | undefined {
    const local = this.#bodies.get(id);
    if (local === undefined) return undefined;
    this.#bodies.delete(id);
    this.#bodies.set(id, local);
    return this.#pinned(local);
  }

  /** A buffer of `byteLength` bytes to fill with a body (give it to {@link adopt}, or back with {@link discard}). */
  allocate(byteLength: number): Uint8Array {
    return this.#pool.acquire(byteLength);
  }

  /** Returns a buffer from {@link allocate} that was not adopted. */
  discard(ipc: Uint8Array): void {
    this.#pool.release(ipc);
  }

  /**
   * Keeps `ipc` (a filled buffer from {@link allocate}) as the body `id` and
   * returns it pinned; when another copy arrived meanwhile, that one is
   * returned and `ipc` goes back to the pool.
   */
  adopt(id: string, ipc: Uint8Array, totalRows: number): PinnedBody {
    const existing = this.pin(id);
    if (existing !== undefined) {
      this.#pool.release(ipc);
      return existing;
    }
    // A fresh id per local copy: workers map bodies by id, and this buffer may hold other bytes later.
    const cached: CachedBody = { id: randomUUID(), table: tableFromSharedIpc(ipc), ipc, totalRows, byteLength: ipc.byteLength };
    const local: LocalBody = { cached, pins: 0, detached: ipc.byteLength > this.maxBytes };
    if (!local.detached) {
      this.#bodies.set(id, local);
      this.#bytes += ipc.byteLength;
    }
    const pinned = this.#pinned(local);
    this.#evict();
    return pinned;
  }

  /** Drops the body `id` (unless a transfer holds it: then once that one lets go). */
  forget(id: string): void {
    const local = this.#bodies.get(id);
    if (local !== undefined) this.#detach(id, local);
  }

  /** Drops every body nobody holds. */
  clear(): void {
    for (const [id, local] of [...this.#bodies]) this.#detach(id, local);
  }

  #pinned(local: LocalBody): PinnedBody {
    local.pins++;
    let done = false;
    return {
      body: local.cached,
      unpin: () => {
        if (done) return;
        done = true;
        local.pins--;
        if (local.detached && local.pins === 0) this.#pool.release(local.cached.ipc);
        else this.#evict();
      },
    };
  }

  /** Least recently used unpinned bodies out until the cache fits (pinned ones may overshoot it briefly). */
  #evict(): void {
    if (this.#bytes <= this.maxBytes) return;
    for (const [id, local] of this.#bodies) {
      if (this.#bytes <= this.maxBytes) return;
      if (local.pins === 0) this.#detach(id, local);
    }
  }

  #detach(id: string, local: LocalBody): void {
    this.#bodies.delete(id);
    this.#bytes -= local.cached.byteLength;
    local.detached = true;
    if (local.pins === 0) this.#pool.release(local.cached.ipc);
  }
}
