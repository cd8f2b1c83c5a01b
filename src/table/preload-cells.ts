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
 * Only what a writer reads first is loaded: the validity byte, a
 * fixed-width value or Bool byte, a var-width offset and the value's first
 * byte. A cell of a column with no flat layout (flat-columns.ts) is left to
 * its writer.
 */
import { FlatKind, flatColumnsOf } from './flat-columns.js';
import type { RowLocations, SelectionPlan } from './selection-plan.js';

/** Keeps the loaded values where no compiler can prove them unused. */
let loaded = 0;

/**
 * Loads the cells of rows `at` (from locateRows, `n` of them) in every flat
 * response column of `plan` except `_row_id`, which a writer takes from the
 * row's position.
 */
export function preloadCells(plan: SelectionPlan, at: RowLocations, n: number): void {
  const { batchAt, rowAt } = at;
  const columns = flatColumnsOf(plan);
  let sum = 0;
  for (let c = 1; c < columns.length; c++) {
    const column = columns[c];
    if (column === null || column.kind === FlatKind.Null) continue;
    const { kind, width, bytes, valueOffsets, validity, offsets } = column;
    for (let k = 0; k < n; k++) {
      const b = batchAt[k];
      const i = rowAt[k];
      const bits = validity[b];
      if (bits !== null) sum += bits[(offsets[b] + i) >> 3];
      if (kind === FlatKind.Fixed) sum += bytes[b][i * width];
      else if (kind === FlatKind.Binary) sum += bytes[b][valueOffsets[b][i]];
      else sum += bytes[b][(offsets[b] + i) >> 3];
    }
  }
  loaded = (loaded + sum) | 0;
}
