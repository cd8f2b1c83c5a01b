/**
 * What an Arrow IPC buffer codec is to s2sp (codec-registry.ts keeps them),
 * and the one helper the native ones share.
 */

/** One buffer codec: the standard frame format other Arrow implementations read. */
export interface IpcBufferCodec {
  /** Compresses one body buffer into one frame. */
  compress(bytes: Uint8Array): Uint8Array;
  /**
   * Decompresses one frame, producing at most `maxBytes` bytes: a frame
   * that would produce more is not decompressed (or not past `maxBytes`,
   * where the implementation can stop early) and gives undefined. A peer's
   * frame is a decompression bomb until proven otherwise: `maxBytes` is
   * what the reader has left of its budget (checked-batch.ts).
   */
  decompress(bytes: Uint8Array, maxBytes: number): Uint8Array | undefined;
}

/** A Buffer view of `bytes` (no copy): napi-rs addons take Buffers only. */
export function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Reads a sequence of frames, frame by frame, adding up what each can
 * produce at most; the codec's `frame` reads one frame at `pos` and returns
 * the position after it, or undefined when the bytes are not such a frame.
 * Frames of `skippableMagic` (the top 28 bits of the 32-bit little-endian
 * magic; LZ4 and Zstandard share 0x184D2A5x) produce nothing.
 * @returns the most bytes the frames decompress to, or undefined when the bytes are not whole frames
 */
export function framesBound(bytes: Uint8Array, frame: (view: DataView, pos: number, bound: { bytes: number }) => number | undefined): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bound = { bytes: 0 };
  let pos = 0;
  while (pos < bytes.byteLength) {
    if (pos + 8 <= bytes.byteLength && (view.getUint32(pos, true) & 0xfffffff0) === SKIPPABLE_MAGIC) {
      pos += 8 + view.getUint32(pos + 4, true);
      continue;
    }
    const next = frame(view, pos, bound);
    if (next === undefined) return undefined;
    pos = next;
  }
  return pos === bytes.byteLength ? bound.bytes : undefined;
}

/** The magic of a skippable frame (LZ4 and Zstandard alike), its low four bits cleared. */
const SKIPPABLE_MAGIC = 0x184d2a50;
