/**
 * Holds a response's last bytes back until its transfer is committed (SPEC 5:
 * a transfer whose consumption cannot be recorded does not end as a complete
 * 200). Every response the data plane sends is held so, whatever its shape
 * (encoder-core.ts): one Buffer (a small selection, the whole cached Arrow
 * stream) or parts in memory go out as {@link ReadyParts} with their last
 * part gated, and a stream of encoded chunks awaits the commit before its
 * closing part.
 *
 * What is held back is what makes the document complete: the Arrow
 * end-of-stream marker, or the tail of the JSON document (`...]}`), and with
 * them the end of the HTTP response. When the commit fails the response is
 * destroyed: the client sees a cut transfer (a missing end-of-stream marker,
 * a short JSON document, an HTTP body cut short), which it must treat as a
 * failure and may retry.
 *
 * A small answer in one Buffer (at most {@link COMMIT_FIRST_MAX_BYTES})
 * does not come here: it is committed before it is sent. It leaves in one
 * write that the socket takes at once, so holding its tail back would not
 * narrow what a client that drops at the last moment loses, and it would
 * cost every small request a stream (a third of the small-request rate,
 * bench/small-requests); a failed commit is then a clean error document.
 */
import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { partsLength } from '../ipc/encode/message.js';
import { nextTurn } from './turn-end.js';
import { slicesOf, WritePacer } from './write-pacing.js';

/** Largest one-Buffer answer committed before it is sent rather than gated (the socket takes it in one write). */
export const COMMIT_FIRST_MAX_BYTES = 64 * 1024;

/**
 * A response whose parts are all in memory already (views of kept buffers):
 * written to the socket in corked batches of at most a mebibyte, one per
 * event-loop turn (write-pacing.ts), which Node hands to the kernel as one
 * writev each, with a Content-Length. Piping it part by part would wait for
 * the socket to drain after every large part.
 *
 * With `beforeLast`, the last part waits until it resolves, and the stream is
 * destroyed with its error instead when it rejects (the data plane's commit
 * before the last bytes).
 */
export class ReadyParts extends Readable {
  readonly parts: readonly Uint8Array[];
  /** Total bytes of the parts. */
  readonly byteLength: number;
  readonly #beforeLast: (() => Promise<void>) | undefined;

  constructor(parts: readonly Uint8Array[], beforeLast?: () => Promise<void>) {
    super();
    this.parts = parts;
    this.byteLength = partsLength(parts);
    this.#beforeLast = beforeLast;
  }

  override _read(): void {
    this.push(null); // the parts go out through pipe() below, never through reads
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    const out = destination as unknown as Destination;
    if (out.headersSent === false) out.setHeader?.('content-length', this.byteLength);
    this.#send(out).then(
      (sent) => {
        if (!sent) return void this.destroy(); // the response went away between two slices
        if (options?.end !== false) out.end();
        this.resume(); // ends this stream, so whoever waits for its end sees it
      },
      (error: unknown) => this.destroy(error as Error),
    );
    return destination;
  }

  /**
   * Writes the parts, corked, a slice of at most a mebibyte per event-loop
   * turn (write-pacing.ts: an answer that fits leaves in one write, as
   * before); the last part after the gate. False when the response was
   * destroyed while a turn went by.
   */
  async #send(out: Destination): Promise<boolean> {
    const gate = this.#beforeLast;
    const held = gate === undefined || this.parts.length === 0 ? this.parts.length : this.parts.length - 1;
    const pacer = new WritePacer();
    out.cork?.();
    for (let i = 0; i < held; i++) {
      for (const slice of slicesOf(this.parts[i])) {
        if (pacer.before(slice.byteLength)) {
          out.uncork?.();
          await nextTurn();
          if (out.destroyed === true) return false;
          out.cork?.();
        }
        out.write(slice);
      }
    }
    if (held === this.parts.length) {
      out.uncork?.();
      return true;
    }
    // A small answer stays corked through the gate, so it still leaves in one write; a large one
    // goes out now, and the gate waits until a stream between us and the response (the metrics'
    // byte counter) passed it on, since it holds it until the socket asks; the gate itself then
    // waits for the socket to take it. (Not for the response's own 'drain': the socket's is the
    // one to wait for, and an injected request's response never emits it.)
    const corked = out.writableNeedDrain !== true;
    if (!corked) out.uncork?.();
    await (corked || out instanceof ServerResponse ? gate!() : drainOrClose(out).then(gate));
    out.write(this.parts[held]);
    if (corked) out.uncork?.();
    return true;
  }
}

/** What ReadyParts writes to: the response, or a stream in front of it. */
type Destination = NodeJS.WritableStream & Partial<Pick<ServerResponse, 'cork' | 'uncork' | 'headersSent' | 'setHeader' | 'writableNeedDrain' | 'destroyed'>>;

/** Resolves at the stream's next 'drain' or its 'close', whichever comes first. */
export function drainOrClose(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
