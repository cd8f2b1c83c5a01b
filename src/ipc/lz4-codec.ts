/**
 * LZ4 frame codec for Arrow IPC buffer compression, behind a plug-in point:
 * lz4-napi (a native napi-rs addon) is loaded on first use, never at import,
 * so a platform without its prebuilt binary loses LZ4 and nothing else.
 *
 * Frame format only: `compressFrameSync`/`decompressFrameSync` write and read
 * the standard LZ4 frame that arrow-rs, polars and pyarrow expect. lz4-napi's
 * `compress()` is the block format with a size prefix and is not usable here.
 */
import { createRequire } from 'node:module';
import { compressionRegistry, CompressionType } from 'apache-arrow';
import { S2SPError } from '../errors.js';

/** The two calls we need from lz4-napi. */
export interface Lz4Codec {
  compressFrame(bytes: Uint8Array): Uint8Array;
  decompressFrame(bytes: Uint8Array): Uint8Array;
}

interface Lz4Napi {
  compressFrameSync(data: Buffer): Buffer;
  decompressFrameSync(data: Buffer): Buffer;
}

let loaded: { codec: Lz4Codec } | { error: string } | undefined;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function load(): { codec: Lz4Codec } | { error: string } {
  if (loaded !== undefined) return loaded;
  try {
    const lz4 = createRequire(import.meta.url)('lz4-napi') as Lz4Napi;
    loaded = {
      codec: {
        compressFrame: (bytes) => lz4.compressFrameSync(asBuffer(bytes)),
        decompressFrame: (bytes) => lz4.decompressFrameSync(asBuffer(bytes)),
      },
    };
  } catch (error) {
    loaded = { error: (error as Error).message.split('\n')[0] };
  }
  return loaded;
}

/** True when lz4-napi loads on this platform (loads it on first call). */
export function lz4Available(): boolean {
  return 'codec' in load();
}

/**
 * The LZ4 frame codec.
 * @throws S2SPError `S2SP_ERR_CODEC_UNAVAILABLE` when lz4-napi has no binary for this platform
 */
export function lz4Codec(): Lz4Codec {
  const state = load();
  if ('codec' in state) return state.codec;
  throw new S2SPError('S2SP_ERR_CODEC_UNAVAILABLE', { problem: 'lz4Missing', reason: state.error });
}

/**
 * Lets arrow-js's IPC reader decompress LZ4_FRAME bodies. Only `decode` is
 * registered: arrow-js 21.1-21.2 writes the compressed length where the
 * format wants the uncompressed one, so s2sp writes compressed messages
 * itself (ipc-message.ts) and never uses arrow-js's encoder.
 * @throws S2SPError `S2SP_ERR_CODEC_UNAVAILABLE`
 */
export function registerLz4Decoder(): void {
  const codec = lz4Codec();
  compressionRegistry.set(CompressionType.LZ4_FRAME, { decode: (bytes: Uint8Array) => codec.decompressFrame(bytes) });
}

/** Test hook: pretend lz4-napi failed to load (or undo with `undefined`). */
export function overrideLz4ForTests(error: string | undefined): void {
  loaded = error === undefined ? undefined : { error };
}
