/**
 * Loads the cells a small selection is about to write, before it writes them.
 *
 * A body is far larger than the caches and a selection's rows are scattered
 * through it, so nearly every cell a 50-row answer reads is a cache miss,
 * even when the same rows were asked for a moment ago: everything else a
 * request does evicts them. The JSON writer formats each value as it loads
 * it, so the CPU waits for one miss at a time. Here the loads run in tight
 * loops with nothing between them, a column at a time, so many misses are
 * in flight at once, and the writer then finds the cells in cache.
 * JavaScript has no prefetch instruction; a load whose value is kept is the
 * nearest thing. (Measured inside the bench's server under load:
 * bench/analysis.md, "Small requests at 60%?".)
 *
 * Only what a writer of the flat layouts reads first is loaded: the
 * validity byte, a fixed-width value, a var-width offset and the value's
 * first byte. A cell of another layout is left to its writer.
 */
import { Type, type Data } from 'apache-arrow';
import type { RowLocations, SelectionPlan } from './selection-plan.js';

/** One response column's buffers in every stored batch (null where the layout has none). */
interface ColumnSources {
  /** Validity bitmaps, and the bit of each chunk's first row. */
  readonly bits: readonly (Uint8Array | null)[];
  readonly bitOffsets: Int32Array;
  /** 32-bit offsets of a var-width column. */
  readonly offsets: readonly (Int32Array | null)[];
  /** The value bytes: of the var-width values, or of the fixed-width rows. */
  readonly bytes: readonly (Uint8Array | null)[];
  /** Bytes per row of a fixed-width column; 0 for the others. */
  readonly width: number;
}

const SOURCES_MEMO = 'preload';

/** Keeps the loaded values where no compiler can prove them unused. */
let loaded = 0;

/**
 * Loads the cells of rows `at` (from locateRows, `n` of them) in every
 * response column of `plan` except `_row_id`, which a writer takes from the
 * row's position.
 */
export function preloadCells(plan: SelectionPlan, at: RowLocations, n: number): void {
  const { batchAt, rowAt } = at;
  let sum = 0;
  for (const column of sourcesOf(plan)) {
    const { bits, bitOffsets, offsets, bytes, width } = column;
    for (let k = 0; k < n; k++) {
      const b = batchAt[k];
      const i = rowAt[k];
      const validity = bits[b];
      if (validity !== null) sum += validity[(bitOffsets[b] + i) >> 3];
      const values = bytes[b];
      if (values === null) continue;
      const starts = offsets[b];
      sum += starts === null ? values[i * width] : values[starts[i]];
    }
  }
  loaded = (loaded + sum) | 0;
}

function sourcesOf(plan: SelectionPlan): readonly ColumnSources[] {
  const known = plan.memo.get(SOURCES_MEMO) as readonly ColumnSources[] | undefined;
  if (known !== undefined) return known;
  const batches = plan.starts.length - 1;
  const made: ColumnSources[] = [];
  for (let c = 1; c < plan.fields.length; c++) {
    const chunks = Array.from({ length: batches }, (_, b) => plan.columnsOf(b)[c]);
    made.push({
      bits: chunks.map((d) => (d.nullCount > 0 && d.nullBitmap && d.nullBitmap.length > 0 ? d.nullBitmap : null)),
      bitOffsets: Int32Array.from(chunks, (d) => d.offset),
      offsets: chunks.map((d) => (isVarWidth(d) && d.valueOffsets instanceof Int32Array ? d.valueOffsets : null)),
      bytes: chunks.map(valueBytes),
      width: chunks.length > 0 ? fixedWidth(chunks[0]) : 0,
    });
  }
  plan.memo.set(SOURCES_MEMO, made);
  return made;
}

function isVarWidth(data: Data): boolean {
  return data.typeId === Type.Utf8 || data.typeId === Type.Binary;
}

/** Bytes per row of a flat fixed-width chunk (values cut to its first row), or 0. */
function fixedWidth(data: Data): number {
  if (isVarWidth(data) || data.typeId === Type.Bool || data.typeId === Type.Null) return 0;
  const values = data.values as { BYTES_PER_ELEMENT?: number } | undefined;
  return values?.BYTES_PER_ELEMENT === undefined ? 0 : values.BYTES_PER_ELEMENT * data.stride;
}

/** The bytes a chunk's cells start in: var-width values, or fixed-width rows; null for other layouts. */
function valueBytes(data: Data): Uint8Array | null {
  if (isVarWidth(data)) return data.valueOffsets instanceof Int32Array ? (data.values as Uint8Array) : null;
  if (fixedWidth(data) === 0) return null;
  const values = data.values as ArrayBufferView;
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}
