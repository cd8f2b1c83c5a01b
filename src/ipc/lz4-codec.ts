/**
 * The built-in LZ4_FRAME codec: lz4-napi, a napi-rs addon whose prebuilt
 * binary npm installs through the package's optional dependencies.
 *
 * Frame format only: `compressFrameSync`/`decompressFrameSync` write and read
 * the standard LZ4 frame that arrow-rs, polars and pyarrow expect. lz4-napi's
 * `compress()` is the block format with a size prefix and is not usable here.
 */
import { createRequire } from 'node:module';
import { bufferView, type IpcBufferCodec } from './buffer-codec.js';

interface Lz4Napi {
  compressFrameSync(data: Buffer): Buffer;
  decompressFrameSync(data: Buffer): Buffer;
}

/** Loads lz4-napi (throws when it has no binary for this platform). */
export function loadLz4Codec(): IpcBufferCodec {
  const lz4 = createRequire(import.meta.url)('lz4-napi') as Lz4Napi;
  return {
    compress: (bytes) => lz4.compressFrameSync(bufferView(bytes)),
    decompress: (bytes) => lz4.decompressFrameSync(bufferView(bytes)),
  };
}
