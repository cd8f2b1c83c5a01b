/**
 * Asks for a full garbage collection at a moment of our choosing:
 *
 * - after many bytes of memory V8 does not weigh were dropped. A
 *   SharedArrayBuffer's memory returns to the system only in a full
 *   collection, and its size does not count toward starting one, so dropped
 *   body buffers can pile up to gigabytes while the JS heap stays small
 *   (native-notes.md, "Memory");
 * - while the process is idle, when work just done will call for one anyway:
 *   buffers a think-time preparation received from its workers make V8 start
 *   a collection at the next fetch's first allocations, in the middle of its
 *   transfer (data/encoder-core.ts, bench/analysis.md "Think time").
 *
 * The collector itself is the embedder's to give (`globalThis.gc` under
 * `--expose-gc`; the CLI turns it on): the library never changes V8 flags.
 * Without one this does nothing. Collections are rate limited and run off the
 * current call stack.
 */

/** A function that runs a full garbage collection, such as `globalThis.gc` under `--expose-gc`. */
export type FullGc = () => void;

/** Dropped bytes that justify a collection. */
const THRESHOLD_BYTES = 64 * 1024 * 1024;
/** At most one collection per this many milliseconds. */
const MIN_INTERVAL_MS = 2000;

/** Counts dropped external bytes and runs `collect` once enough have piled up. */
export class GcNudge {
  readonly #collect: FullGc | undefined;
  #pendingBytes = 0;
  #lastRun = 0;
  #scheduled = false;

  /** @param collect the full collection to run; undefined makes every call a no-op */
  constructor(collect: FullGc | undefined) {
    this.#collect = collect;
  }

  /** Notes that `bytes` of unweighed memory became garbage; may schedule a full collection. */
  dropped(bytes: number): void {
    if (this.#collect === undefined) return;
    this.#pendingBytes += bytes;
    if (this.#pendingBytes >= THRESHOLD_BYTES) this.soon();
  }

  /** Schedules a full collection now, or as soon as the rate limit lets, unless one is scheduled already. */
  soon(): void {
    if (this.#collect === undefined || this.#scheduled) return;
    this.#scheduled = true;
    const wait = Math.max(0, this.#lastRun + MIN_INTERVAL_MS - Date.now());
    setTimeout(() => {
      this.#scheduled = false;
      this.#pendingBytes = 0;
      this.#lastRun = Date.now();
      this.#collect?.();
    }, wait).unref();
  }
}
