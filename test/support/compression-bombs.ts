/**
 * Test helpers: decompression bombs, small LZ4 and Zstandard frames that
 * expand to hundreds of megabytes, and a hostile Arrow answer whose buffers
 * are such frames. The frames are written by hand (their block layout is
 * the point), so building one costs the test nothing.
 */
import { Field, Int32, Schema } from 'apache-arrow';
import { FieldNode } from 'apache-arrow/ipc/metadata/message';
import { schemaMessage } from '../../src/ipc/encode/message.js';
import { compressedBatchMessage } from '../../src/ipc/encode/record-batch.js';
import { ipcCodec } from '../../src/ipc/compression/codec-registry.js';
import type { IpcCodec } from '../../src/protocol/media-types.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';

/** Zstandard's largest block: 128 KiB. */
const ZSTD_BLOCK = 128 << 10;

/**
 * A Zstandard frame of RLE blocks (one byte repeated 128 KiB times, 4 bytes
 * each) that decompresses to `bytes` zeros (a multiple of 128 KiB).
 */
export function zstdBomb(bytes: number): Uint8Array {
  const blocks = bytes / ZSTD_BLOCK;
  const out = new Uint8Array(6 + blocks * 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0xfd2fb528, true);
  out[4] = 0x00; // no content size, no checksum, no dictionary
  out[5] = 7 << 3; // window 2^17
  for (let i = 0; i < blocks; i++) {
    const header = (ZSTD_BLOCK << 3) | (1 << 1) | (i === blocks - 1 ? 1 : 0);
    out[6 + i * 4] = header & 0xff;
    out[7 + i * 4] = (header >> 8) & 0xff;
    out[8 + i * 4] = (header >> 16) & 0xff;
  }
  return out;
}

/** LZ4's block size in lz4-napi's frames: 64 KiB. */
const LZ4_BLOCK = 64 << 10;

/**
 * An LZ4 frame that decompresses to `bytes` zeros (a multiple of 64 KiB):
 * lz4-napi's frame of 64 KiB of zeros, its one block repeated.
 */
export function lz4Bomb(bytes: number): Uint8Array {
  const one = ipcCodec('lz4').compress(new Uint8Array(LZ4_BLOCK));
  const view = new DataView(one.buffer, one.byteOffset, one.byteLength);
  const flg = one[4];
  if ((flg & 0x0d) !== 0) throw new Error('expected a frame without content size, dictionary or content checksum');
  const header = one.subarray(0, 7);
  const blockLength = 4 + view.getUint32(7, true) + (flg & 0x10 ? 4 : 0);
  const block = one.subarray(7, 7 + blockLength);
  const blocks = bytes / LZ4_BLOCK;
  const out = new Uint8Array(header.byteLength + blocks * block.byteLength + 4);
  out.set(header);
  for (let i = 0; i < blocks; i++) out.set(block, header.byteLength + i * block.byteLength);
  return out;
}

/** A bomb of `codec`. */
export function bombOf(codec: IpcCodec, bytes: number): Uint8Array {
  return codec === 'zstd' ? zstdBomb(bytes) : lz4Bomb(bytes);
}

/** `int64 declared | frame`: a compressed buffer as a batch body holds it. */
function prefixed(declared: number, frame: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + frame.byteLength);
  new DataView(out.buffer).setBigInt64(0, BigInt(declared), true);
  out.set(frame, 8);
  return out;
}

/**
 * A hostile Arrow answer: `_row_id` and `payload` (Int32), one compressed
 * batch. `honest`: 4 rows, `_row_id` 0..3 compressed as it should be, the
 * payload declaring its true 16 bytes but its frame the bomb. Otherwise the
 * header claims as many rows as the bomb holds Int32 values, and both
 * buffers declare the bomb's full size.
 */
export function bombAnswer(codec: IpcCodec, bomb: Uint8Array, bombBytes: number, honest: boolean): Uint8Array {
  const schema = new Schema([new Field('_row_id', new Int32(), false), new Field('payload', new Int32(), false)]);
  const rows = honest ? 4 : bombBytes / 4;
  const nodes = [new FieldNode(rows, 0), new FieldNode(rows, 0)];
  const ids = honest ? prefixed(16, ipcCodec(codec).compress(new Uint8Array(Int32Array.of(0, 1, 2, 3).buffer))) : prefixed(bombBytes, bomb);
  const payload = prefixed(honest ? 16 : bombBytes, bomb);
  const empty = new Uint8Array(0);
  const parts = [schemaMessage(schema), ...compressedBatchMessage(rows, nodes, [empty, ids, empty, payload], [], codec), END_OF_STREAM];
  // A buffer of its own, so the messages stay 8-byte aligned.
  return new Uint8Array(Buffer.concat(parts));
}
