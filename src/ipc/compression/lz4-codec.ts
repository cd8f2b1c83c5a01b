/**
 * The built-in LZ4_FRAME codec: lz4-napi, a napi-rs addon whose prebuilt
 * binary npm installs through the package's optional dependencies.
 *
 * Frame format only: `compressFrameSync`/`decompressFrameSync` write and read
 * the standard LZ4 frame that arrow-rs, polars and pyarrow expect. lz4-napi's
 * `compress()` is the block format with a size prefix and is not usable here.
 *
 * lz4-napi takes no output limit, so a frame is bounded before it is
 * decompressed: its block headers say how many blocks it has and how large
 * each may grow (the frame's block maximum), which bounds the output
 * without decompressing anything.
 */
import { createRequire } from 'node:module';
import { bufferView, framesBound, type IpcBufferCodec } from './buffer-codec.js';

interface Lz4Napi {
  compressFrameSync(data: Buffer): Buffer;
  decompressFrameSync(data: Buffer): Buffer;
}

/** Loads lz4-napi (throws when it has no binary for this platform). */
export function loadLz4Codec(): IpcBufferCodec {
  const lz4 = createRequire(import.meta.url)('lz4-napi') as Lz4Napi;
  return {
    compress: (bytes) => lz4.compressFrameSync(bufferView(bytes)),
    decompress: (bytes, maxBytes) => {
      const bound = lz4FramesBound(bytes);
      return bound === undefined || bound > maxBytes ? undefined : lz4.decompressFrameSync(bufferView(bytes));
    },
  };
}

const LZ4_MAGIC = 0x184d2204;
/** Block maximum sizes by the BD byte's bits 6-4 (4: 64 KiB ... 7: 4 MiB). */
const BLOCK_MAX = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

/**
 * The most bytes LZ4 frames decompress to, from their headers (LZ4 Frame
 * Format 1.6.x): magic, FLG, BD, [content size], [dictionary id], header
 * checksum; then blocks of `uint32 size` (high bit: stored uncompressed),
 * data and [block checksum], ended by a zero size; then [content checksum].
 * @returns undefined when the bytes are not whole LZ4 frames
 */
export function lz4FramesBound(bytes: Uint8Array): number | undefined {
  return framesBound(bytes, (view, start, bound) => {
    const end = view.byteLength;
    if (start + 7 > end || view.getUint32(start, true) !== LZ4_MAGIC) return undefined;
    const flg = view.getUint8(start + 4);
    const blockMax = BLOCK_MAX[(view.getUint8(start + 5) >> 4) & 7];
    if (blockMax === 0) return undefined;
    let pos = start + 6 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0) + 1;
    const blockChecksum = flg & 0x10 ? 4 : 0;
    for (;;) {
      if (pos + 4 > end) return undefined;
      const word = view.getUint32(pos, true);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (size > blockMax) return undefined;
      bound.bytes += word & 0x80000000 ? size : blockMax;
      pos += size + blockChecksum;
    }
    pos += flg & 0x04 ? 4 : 0;
    return pos <= end ? pos : undefined;
  });
}
