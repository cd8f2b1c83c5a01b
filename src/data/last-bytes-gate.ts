/**
 * Holds a response's last bytes back until its transfer is committed (SPEC 5:
 * a transfer whose consumption cannot be recorded does not end as a complete
 * 200). Every response the data plane sends goes through here, whatever its
 * shape: one Buffer (a small selection, the whole cached Arrow stream),
 * parts in memory ({@link ReadyParts}), or a stream of encoded chunks.
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
import { Readable } from 'node:stream';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { ReadyParts } from './ready-parts.js';

/** Largest one-Buffer answer committed before it is sent rather than gated (the socket takes it in one write). */
export const COMMIT_FIRST_MAX_BYTES = 64 * 1024;

/**
 * Bytes held back of a response written as one Buffer: exactly the Arrow
 * end-of-stream marker, and for JSON the last bytes of its tail (always longer:
 * `"columns_returned":[...]}`), so neither document is complete without them.
 */
const HELD_BYTES = END_OF_STREAM.byteLength;

/**
 * `response` as a stream whose last bytes wait for `commit`.
 * @param commit resolves when the last bytes may go; when it rejects, the stream is destroyed with its error (the response is cut)
 */
export function holdLastBytes(response: Buffer | Readable, commit: () => Promise<void>): Readable {
  if (Buffer.isBuffer(response)) {
    const cut = Math.max(0, response.byteLength - HELD_BYTES);
    return new ReadyParts([response.subarray(0, cut), response.subarray(cut)], commit);
  }
  if (response instanceof ReadyParts) return new ReadyParts(response.parts, commit);
  return Readable.from(lastPartHeld(response, commit), { objectMode: true, highWaterMark: 1 });
}

/** The parts of `source`, the last one only after `commit` resolved (the body streams end with their closing part). */
async function* lastPartHeld(source: Readable, commit: () => Promise<void>): AsyncGenerator<Uint8Array> {
  let last: Uint8Array | undefined;
  for await (const part of source as AsyncIterable<Uint8Array>) {
    if (last !== undefined) yield last;
    last = part;
  }
  await commit();
  if (last !== undefined) yield last;
}
