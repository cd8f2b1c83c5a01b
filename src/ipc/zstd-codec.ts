/**
 * The built-in ZSTD codec (standard Zstandard frames, which arrow-rs, polars
 * and pyarrow read): node:zlib where Node has it (22.15 and later), else
 * @toondepauw/node-zstd, a napi-rs addon with prebuilt binaries in its
 * optional dependencies. Level 1: on Arrow buffers it compresses about as
 * well as the default level 3, in less time (native-notes.md, "zstd").
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { bufferView, type IpcBufferCodec } from './buffer-codec.js';

const LEVEL = 1;

interface NodeZstd {
  Encoder: new (level: number) => { encodeSync(data: Buffer): Buffer };
  Decoder: new () => { decodeSync(data: Buffer): Buffer };
}

/** The zstd functions of node:zlib, on the Node versions that have them. */
interface ZlibZstd {
  zstdCompressSync(data: Uint8Array, options: { params: Record<number, number> }): Buffer;
  zstdDecompressSync(data: Uint8Array): Buffer;
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
      decompress: (bytes) => zstdDecompressSync(bytes),
    };
  }
  const zstd = createRequire(import.meta.url)('@toondepauw/node-zstd') as NodeZstd;
  const encoder = new zstd.Encoder(LEVEL);
  const decoder = new zstd.Decoder();
  return {
    compress: (bytes) => encoder.encodeSync(bufferView(bytes)),
    decompress: (bytes) => decoder.decodeSync(bufferView(bytes)),
  };
}
