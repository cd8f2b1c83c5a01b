/**
 * The built-in ZSTD codec (standard Zstandard frames, which arrow-rs, polars
 * and pyarrow read): node:zlib's, which Node has from 22.15. Level 1: on
 * Arrow buffers it compresses about as well as the default level 3, in less
 * time (native-notes.md, "zstd"). On an older Node 22 the codec is not
 * available (the loader says why) and the data plane offers LZ4 and no codec.
 *
 * Output is bounded: node:zlib stops at `maxOutputLength`.
 */
import { constants as bufferConstants } from 'node:buffer';
import zlib from 'node:zlib';
import { S2SPError } from '../../errors.js';
import type { IpcBufferCodec } from './buffer-codec.js';

const LEVEL = 1;

/** The zstd functions of node:zlib, on the Node versions that have them (22.15 and later). */
interface ZlibZstd {
  zstdCompressSync(data: Uint8Array, options: { params: Record<number, number> }): Buffer;
  zstdDecompressSync(data: Uint8Array, options: { maxOutputLength: number }): Buffer;
}

/**
 * Loads node:zlib's ZSTD.
 * @throws S2SPError `S2SP_ERR_CODEC_UNAVAILABLE` on a Node whose zlib has no ZSTD
 */
export function loadZstdCodec(): IpcBufferCodec {
  const z = zlib as unknown as Partial<ZlibZstd>;
  const level = (zlib.constants as Record<string, number>).ZSTD_c_compressionLevel;
  if (typeof z.zstdCompressSync !== 'function' || typeof z.zstdDecompressSync !== 'function' || level === undefined) {
    throw new S2SPError('S2SP_ERR_CODEC_UNAVAILABLE', {
      problem: 'missing',
      codec: 'zstd',
      reason: `node:zlib has ZSTD from Node 22.15; this is ${process.version}`,
    });
  }
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
