/**
 * How a large answer reaches the socket: in writes of at most
 * {@link WRITE_SLICE_BYTES}, with an event-loop turn between them, so the
 * other requests of the plane get in while it goes out.
 *
 * A write to a socket runs the kernel's copy of its bytes in the writing
 * thread, and on a local connection the kernel takes as much as the
 * receiver's buffer holds (32 MiB on the bench machine). One 4-12 MB part
 * (a JSON chunk from a worker, a kept compressed buffer) then held the main
 * thread 8-17 ms in a single `writev` (strace), and a corked batch of every
 * prepared part longer; in the mixed-load scenario those writes were most of
 * the event loop's p99 while full fetches ran (bench/analysis.md).
 *
 * The slices are views (no copy), and the turn is the end of the event
 * loop's turn (turn-end.ts: after the small answers of that turn), not a
 * wait for 'drain': the bytes already sit in memory, so queuing them costs
 * nothing, and an injected response (app.inject) never emits 'drain'.
 */

/** Most bytes handed to the socket in one event-loop turn (1 MiB: about a millisecond of the kernel's copy). */
export const WRITE_SLICE_BYTES = 1024 * 1024;

/** `part` as views of at most `max` bytes each, in order (the part itself when it is small enough). */
export function* slicesOf(part: Uint8Array, max: number = WRITE_SLICE_BYTES): Generator<Uint8Array> {
  if (part.byteLength <= max) {
    yield part;
    return;
  }
  for (let at = 0; at < part.byteLength; at += max) yield part.subarray(at, Math.min(at + max, part.byteLength));
}

/**
 * Counts the bytes handed to the socket since the last turn, and says when
 * the next write must wait for one: when it would take the turn past
 * {@link WRITE_SLICE_BYTES}. A turn then holds at most that much, whatever
 * the sizes of the parts.
 */
export class WritePacer {
  #sinceTurn = 0;

  /** Notes a write of `bytes` about to be made; true when it must wait for the next turn first (turn-end.ts). */
  before(bytes: number): boolean {
    const due = this.#sinceTurn > 0 && this.#sinceTurn + bytes > WRITE_SLICE_BYTES;
    this.#sinceTurn = due ? bytes : this.#sinceTurn + bytes;
    return due;
  }
}
