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
}

/** Buffers are allocated in whole 64 KiB pages, so near sizes share a capacity. */
const PAGE = 64 * 1024;
/** A buffer is reused for a body that fills at least this share of it. */
const MIN_FILL = 0.8;

/** A free list of SharedArrayBuffers, best fit. */
export class SharedMemoryPool {
  readonly maxIdleBytes: number;
  private idle: SharedArrayBuffer[] = [];
  private idleBytes = 0;

  constructor(options: SharedMemoryPoolOptions = {}) {
    this.maxIdleBytes = options.maxIdleBytes ?? 256 * 1024 * 1024;
  }

  /** A zero-offset view of exactly `byteLength` bytes over a shared buffer (8-byte aligned). */
  acquire(byteLength: number): Uint8Array {
    let best = -1;
    for (let i = 0; i < this.idle.length; i++) {
      const capacity = this.idle[i].byteLength;
      if (capacity >= byteLength && capacity * MIN_FILL <= byteLength && (best < 0 || capacity < this.idle[best].byteLength)) best = i;
    }
    if (best >= 0) {
      const [buffer] = this.idle.splice(best, 1);
      this.idleBytes -= buffer.byteLength;
      return new Uint8Array(buffer, 0, byteLength);
    }
    const capacity = Math.max(PAGE, Math.ceil(byteLength / PAGE) * PAGE);
    return new Uint8Array(new SharedArrayBuffer(capacity), 0, byteLength);
  }

  /** Takes back the buffer under `view` (from {@link acquire}); the caller must not use the view again. */
  release(view: Uint8Array): void {
    const buffer = view.buffer;
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength > this.maxIdleBytes) return;
    this.idle.push(buffer);
    this.idleBytes += buffer.byteLength;
    while (this.idleBytes > this.maxIdleBytes) this.idleBytes -= this.idle.shift()!.byteLength;
  }

  /** Idle buffers and their bytes. */
  stats(): { buffers: number; bytes: number } {
    return { buffers: this.idle.length, bytes: this.idleBytes };
  }

  /** Drops every idle buffer. */
  clear(): void {
    this.idle = [];
    this.idleBytes = 0;
  }
}
