/**
 * The memory an encoder worker writes its answers into, recycled.
 *
 * A worker's answer is one transferred ArrayBuffer (encode-worker.ts). Once
 * the main thread is done with one it kept (a prepared or compressed body
 * the encoded-batch cache let go of, after the last response sending it
 * ended), it transfers the buffer back with a later task, and the worker
 * writes its next answer of about that size into it instead of new memory.
 *
 * Why: a large ArrayBuffer is new pages from the kernel each time (calloc
 * maps them, free unmaps them), and on some hosts the kernel's first copy
 * from a page costs several microseconds more than later ones: on this
 * project's bench machine, a prepared 1M x 10 body sent from new memory took
 * 3-5x the time of the same bytes sent from memory sent before
 * (bench/analysis.md, "Think time after the gap: the kernel's first copy").
 * Reused memory also spares the worker the page faults and zeroing of new
 * memory.
 */

/** Buffers of at least this size are allocated in whole 64 KiB pages, with room to spare for a slightly larger answer later. */
const PAGE = 64 * 1024;
/** Room allocated beyond an answer, so the next answer of a similar size fits the same buffer (1/16). */
const SLACK_SHIFT = 4;
/** A shelved buffer is used for an answer that fills at least this share of it. */
const MIN_FILL = 0.75;

/** Options of {@link OutputShelf}. */
export interface OutputShelfOptions {
  /** Bytes of buffers kept for reuse; beyond it the oldest go to the collector. */
  maxBytes: number;
  /** Milliseconds a buffer waits for reuse before it goes to the collector. */
  idleMs: number;
}

interface Shelved {
  readonly buffer: ArrayBuffer;
  readonly since: number;
}

/** A free list of answer buffers, best fit; see the file comment. */
export class OutputShelf {
  readonly #options: OutputShelfOptions;
  #shelved: Shelved[] = [];
  #bytes = 0;

  constructor(options: OutputShelfOptions) {
    this.#options = options;
  }

  /** Bytes of buffers waiting for reuse. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Shelves buffers given back (a detached or empty one is skipped). */
  add(buffers: readonly ArrayBuffer[]): void {
    const now = Date.now();
    for (const buffer of buffers) {
      if (buffer.byteLength === 0) continue;
      this.#shelved.push({ buffer, since: now });
      this.#bytes += buffer.byteLength;
    }
    this.trim(now);
  }

  /** Takes the `count` oldest buffers off the shelf (to hand them to a worker). */
  takeOldest(count: number): ArrayBuffer[] {
    this.trim();
    const taken = this.#shelved.splice(0, count).map((shelved) => shelved.buffer);
    for (const buffer of taken) this.#bytes -= buffer.byteLength;
    return taken;
  }

  /** `byteLength` bytes to write an answer into, at offset 0: a shelved buffer it fills at least 3/4 of, or new memory. */
  take(byteLength: number): Uint8Array {
    this.trim();
    let best = -1;
    for (let i = 0; i < this.#shelved.length; i++) {
      const capacity = this.#shelved[i].buffer.byteLength;
      if (capacity >= byteLength && capacity * MIN_FILL <= byteLength && (best < 0 || capacity < this.#shelved[best].buffer.byteLength)) best = i;
    }
    if (best < 0) return new Uint8Array(new ArrayBuffer(capacityFor(byteLength)), 0, byteLength);
    const [{ buffer }] = this.#shelved.splice(best, 1);
    this.#bytes -= buffer.byteLength;
    return new Uint8Array(buffer, 0, byteLength);
  }

  /** Lets go of buffers idle too long, then of the oldest while over the byte bound. */
  trim(now = Date.now()): void {
    const { maxBytes, idleMs } = this.#options;
    while (this.#shelved.length > 0 && (this.#bytes > maxBytes || now - this.#shelved[0].since > idleMs)) {
      this.#bytes -= this.#shelved.shift()!.buffer.byteLength;
    }
  }
}

/** The capacity allocated for an answer of `byteLength` bytes: exact when small, else whole pages with 1/16 to spare. */
export function capacityFor(byteLength: number): number {
  if (byteLength < PAGE) return byteLength;
  return Math.ceil((byteLength + (byteLength >> SLACK_SHIFT)) / PAGE) * PAGE;
}
