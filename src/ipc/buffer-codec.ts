/**
 * What an Arrow IPC buffer codec is to s2sp (codec-registry.ts keeps them),
 * and the one helper the native ones share.
 */

/** One buffer codec: the standard frame format other Arrow implementations read. */
export interface IpcBufferCodec {
  /** Compresses one body buffer into one frame. */
  compress(bytes: Uint8Array): Uint8Array;
  /** Decompresses one frame. */
  decompress(bytes: Uint8Array): Uint8Array;
}

/** A Buffer view of `bytes` (no copy): napi-rs addons take Buffers only. */
export function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
