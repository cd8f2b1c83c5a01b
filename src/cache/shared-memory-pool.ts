/**
 * Recycles the SharedArrayBuffers that hold cached bodies.
 *
 * V8 frees a SharedArrayBuffer only in a full garbage collection, and unlike
 * an ArrayBuffer its size does not push the collector to run: a server that
 * caches a 10 MB body a thousand times, each expiring, can reach gigabytes of
 * RSS before a collection happens (test/hardening/expiry-memory.test.ts).
 * So buffers of expired or consumed bodies come back here and the next body
 * of a similar size reuses one, instead of waiting for the collector.
 */

/** Options of {@link SharedMemoryPool}. */
export interface SharedMemoryPoolOptions {
  /** Bytes of idle buffers kept for reuse (default 256 MiB); beyond it the oldest go to the collector. */
  maxIdleBytes?: number;
  /** Milliseconds an idle buffer waits for reuse before it goes to the collector (default 30 s). */
  idleTtlMs?: number;
  /**
   * A full garbage collection to ask for when many let-go bytes wait for one
   * (e.g. `globalThis.gc` under `--expose-gc`); default none.
   */
  fullGc?: FullGc;
}

interface IdleBuffer {
  readonly buffer: SharedArrayBuffer;
  readonly since: number;
}

import { nonNegativeOption, optionsObject, positiveOption } from '../option-checks.js';
import { GcNudge, type FullGc } from './gc-nudge.js';

/** Buffers are allocated in whole 64 KiB pages, so near sizes share a capacity. */
const PAGE = 64 * 1024;
/** A buffer is reused for a body that fills at least this share of it. */
const MIN_FILL = 0.8;

/**
 * A free list of SharedArrayBuffers, best fit. Buffers it lets go (over the
 * byte cap, or idle too long) are reported to a {@link GcNudge}, so an
 * idle server returns to its baseline RSS when the embedder gave a collector.
 */
export class SharedMemoryPool {
  readonly maxIdleBytes: number;
  readonly idleTtlMs: number;
  private idle: IdleBuffer[] = [];
  private idleBytes = 0;
  private sweeper?: NodeJS.Timeout;
  readonly #gc: GcNudge;

  constructor(options: SharedMemoryPoolOptions = {}) {
    options = optionsObject(options);
    this.maxIdleBytes = nonNegativeOption(options.maxIdleBytes, 'maxIdleBytes') ?? 256 * 1024 * 1024;
    this.idleTtlMs = positiveOption(options.idleTtlMs, 'idleTtlMs') ?? 30_000;
    this.#gc = new GcNudge(options.fullGc);
  }

  /** A zero-offset view of exactly `byteLength` bytes over a shared buffer (8-byte aligned). */
  acquire(byteLength: number): Uint8Array {
    let best = -1;
    for (let i = 0; i < this.idle.length; i++) {
      const capacity = this.idle[i].buffer.byteLength;
      if (capacity >= byteLength && capacity * MIN_FILL <= byteLength && (best < 0 || capacity < this.idle[best].buffer.byteLength)) best = i;
    }
    if (best >= 0) {
      const [{ buffer }] = this.idle.splice(best, 1);
      this.idleBytes -= buffer.byteLength;
      return new Uint8Array(buffer, 0, byteLength);
    }
    const capacity = Math.max(PAGE, Math.ceil(byteLength / PAGE) * PAGE);
    return new Uint8Array(new SharedArrayBuffer(capacity), 0, byteLength);
  }

  /** Takes back the buffer under `view` (from {@link acquire}); the caller must not use the view again. */
  release(view: Uint8Array): void {
    const buffer = view.buffer;
    if (!(buffer instanceof SharedArrayBuffer)) return;
    if (buffer.byteLength > this.maxIdleBytes) return this.#gc.dropped(buffer.byteLength);
    this.idle.push({ buffer, since: Date.now() });
    this.idleBytes += buffer.byteLength;
    while (this.idleBytes > this.maxIdleBytes) this.drop(0);
    this.sweeper ??= setInterval(() => this.sweep(), Math.max(10, this.idleTtlMs / 2)).unref();
  }

  /** Lets go of buffers idle for longer than `idleTtlMs`. */
  sweep(now = Date.now()): void {
    while (this.idle.length > 0 && now - this.idle[0].since >= this.idleTtlMs) this.drop(0);
    if (this.idle.length === 0) this.stopSweeper();
  }

  private drop(index: number): void {
    const [{ buffer }] = this.idle.splice(index, 1);
    this.idleBytes -= buffer.byteLength;
    this.#gc.dropped(buffer.byteLength);
  }

  private stopSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Idle buffers and their bytes. */
  stats(): { buffers: number; bytes: number } {
    return { buffers: this.idle.length, bytes: this.idleBytes };
  }

  /** Lets go of every idle buffer. */
  clear(): void {
    while (this.idle.length > 0) this.drop(0);
    this.stopSweeper();
  }
}
