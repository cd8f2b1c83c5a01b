/**
 * The built-in ZSTD codec (standard Zstandard frames, which arrow-rs, polars
 * and pyarrow read): node:zlib where Node has it (22.15 and later), else
 * @toondepauw/node-zstd, a napi-rs addon with prebuilt binaries in its
 * optional dependencies. Level 1: on Arrow buffers it compresses about as
 * well as the default level 3, in less time (native-notes.md, "zstd").
 *
 * Output is bounded: node:zlib stops at `maxOutputLength`; the addon takes
 * no limit, so its frames are bounded first from their block headers
 * (each block's output is its size when raw or RLE, at most 128 KiB when
 * compressed), without decompressing anything.
 */
import { createRequire } from 'node:module';
import { constants as bufferConstants } from 'node:buffer';
import zlib from 'node:zlib';
import { bufferView, framesBound, type IpcBufferCodec } from './buffer-codec.js';

const LEVEL = 1;

interface NodeZstd {
  Encoder: new (level: number) => { encodeSync(data: Buffer): Buffer };
  Decoder: new () => { decodeSync(data: Buffer): Buffer };
}

/** The zstd functions of node:zlib, on the Node versions that have them. */
interface ZlibZstd {
  zstdCompressSync(data: Uint8Array, options: { params: Record<number, number> }): Buffer;
  zstdDecompressSync(data: Uint8Array, options: { maxOutputLength: number }): Buffer;
}

/** Loads a ZSTD implementation (throws when none is available on this platform). */
export function loadZstdCodec(): IpcBufferCodec {
  const z = zlib as unknown as Partial<ZlibZstd>;
  const level = (zlib.constants as Record<string, number>).ZSTD_c_compressionLevel;
  if (typeof z.zstdCompressSync === 'function' && typeof z.zstdDecompressSync === 'function' && level !== undefined) {
    const { zstdCompressSync, zstdDecompressSync } = z as ZlibZstd;
    const options = { params: { [level]: LEVEL } };
    return {
      compress: (bytes) => zstdCompressSync(bytes, options),
      decompress: (bytes, maxBytes) => {
        try {
          return zstdDecompressSync(bytes, { maxOutputLength: Math.max(1, Math.min(maxBytes, bufferConstants.MAX_LENGTH)) });
        } catch (error) {
          // Node stops at the limit with this code; anything else is a corrupt frame.
          if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
          throw error;
        }
      },
    };
  }
  const zstd = createRequire(import.meta.url)('@toondepauw/node-zstd') as NodeZstd;
  const encoder = new zstd.Encoder(LEVEL);
  const decoder = new zstd.Decoder();
  return {
    compress: (bytes) => encoder.encodeSync(bufferView(bytes)),
    decompress: (bytes, maxBytes) => {
      const bound = zstdFramesBound(bytes);
      return bound === undefined || bound > maxBytes ? undefined : decoder.decodeSync(bufferView(bytes));
    },
  };
}

const ZSTD_MAGIC = 0xfd2fb528;
/** The largest output of one compressed block (the format's Block_Maximum_Size). */
const BLOCK_MAX = 128 << 10;

/**
 * The most bytes Zstandard frames decompress to, from their headers (RFC
 * 8878): magic, frame header descriptor, [window descriptor], [dictionary
 * id], [frame content size]; then blocks of a 3-byte header (last flag,
 * type, size) and their data; then [checksum].
 * @returns undefined when the bytes are not whole Zstandard frames
 */
export function zstdFramesBound(bytes: Uint8Array): number | undefined {
  return framesBound(bytes, (view, start, bound) => {
    const end = view.byteLength;
    if (start + 5 > end || view.getUint32(start, true) !== ZSTD_MAGIC) return undefined;
    const descriptor = view.getUint8(start + 4);
    const singleSegment = (descriptor >> 5) & 1;
    const contentSizeBytes = [singleSegment, 2, 4, 8][descriptor >> 6];
    let pos = start + 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3] + contentSizeBytes;
    for (;;) {
      if (pos + 3 > end) return undefined;
      const header = view.getUint8(pos) | (view.getUint8(pos + 1) << 8) | (view.getUint8(pos + 2) << 16);
      pos += 3;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) return undefined;
      // Raw: size bytes stored; RLE: one byte repeated size times; compressed: size bytes of at most BLOCK_MAX output.
      bound.bytes += type === 2 ? BLOCK_MAX : size;
      pos += type === 1 ? 1 : size;
      if (header & 1) break;
    }
    pos += descriptor & 0x04 ? 4 : 0;
    return pos <= end ? pos : undefined;
  });
}
