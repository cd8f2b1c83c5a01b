/**
 * The Arrow IPC stream framing bytes the wire contract relies on (Arrow
 * columnar format, "Encapsulated message format"):
 *
 *   message := 0xFFFFFFFF | int32 metadata length | flatbuffer Message | body
 *   stream  := schema message, batch messages..., 0xFFFFFFFF 0x00000000
 *
 * A stream without its end-of-stream marker is a cut transfer (SPEC 3.2).
 */

/** The continuation marker that opens every message since Arrow 0.15, read as an int32. */
export const CONTINUATION = -1;

/** The end-of-stream marker: continuation, then a zero metadata length. */
export const END_OF_STREAM = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

/** `ARROW1`: the magic that opens (and, with the footer, closes) an Arrow IPC file. */
export const ARROW_FILE_MAGIC = Uint8Array.of(0x41, 0x52, 0x52, 0x4f, 0x57, 0x31);

/** True when the first four bytes are the continuation marker a stream opens with. */
export function startsWithContinuation(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xff && bytes[2] === 0xff && bytes[3] === 0xff;
}
