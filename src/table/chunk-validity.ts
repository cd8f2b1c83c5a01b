/**
 * Which elements of a column are valid, for a column stored in several
 * chunks (a body's stored batches): each chunk's validity bitmap and the
 * chunk's offset into it, read once. arrow-js slices keep the whole bitmap
 * and index it from `data.offset` (json/column-access.ts), and `nullCount`
 * is a getter that may count the bitmap, so neither belongs in a loop over
 * rows.
 */
import type { Data } from 'apache-arrow';

/** The validity bitmap of `data` (bit `data.offset + i` for element i), or null when every element is valid. */
export function validityBits(data: Data): Uint8Array | null {
  const bitmap = data.nullBitmap;
  return !bitmap || bitmap.length === 0 || data.nullCount === 0 ? null : bitmap;
}

/** The validity of a column stored in chunks, chunk by chunk. */
export interface ChunkValidity {
  /** Each chunk's validity bitmap, or null where every element is valid. */
  readonly validity: readonly (Uint8Array | null)[];
  /** Each chunk's offset (bitmaps and Bool values are indexed from it). */
  readonly offsets: Int32Array;
}

/** The validity of the column stored in `chunks`. */
export function chunkValidity(chunks: readonly Data[]): ChunkValidity {
  return { validity: chunks.map(validityBits), offsets: Int32Array.from(chunks, (d) => d.offset) };
}

/** Element `i` of chunk `b` is valid. */
export function isValidAt(column: ChunkValidity, b: number, i: number): boolean {
  const bits = column.validity[b];
  if (bits === null) return true;
  const bit = column.offsets[b] + i;
  return (bits[bit >> 3] & (1 << (bit & 7))) !== 0;
}
