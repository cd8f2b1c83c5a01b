/**
 * A response body is produced in chunks of rows: each chunk becomes one JSON
 * fragment or one Arrow record batch, encoded on its own (possibly in a
 * worker) and written in order. A chunk is a range of positions (zero-copy
 * slice) or a list of scattered positions (gathered, or sliced run by run
 * when the runs are long).
 */
import type { RecordBatch, Table } from 'apache-arrow';
import { idRuns } from './select.js';
import { canTake, takeRows } from './take-rows.js';

/** Rows of one chunk: a range `[start, end)` or ascending scattered positions. */
export type RowChunk = { readonly start: number; readonly end: number } | { readonly ids: Int32Array };

/** Default rows per chunk: one record batch, a few MB of JSON. */
export const DEFAULT_CHUNK_ROWS = 65_536;

/** Below this mean run length, scattered ids are gathered rather than sliced run by run. */
const MIN_MEAN_RUN_FOR_SLICES = 16;

/**
 * Splits a selection into chunks of at most `chunkRows` rows.
 * @param totalRows rows in the body
 * @param sortedIds ascending unique positions, or undefined for every row
 */
export function planChunks(totalRows: number, sortedIds: readonly number[] | undefined, chunkRows = DEFAULT_CHUNK_ROWS): RowChunk[] {
  const chunks: RowChunk[] = [];
  if (sortedIds === undefined) {
    for (let start = 0; start < totalRows; start += chunkRows) chunks.push({ start, end: Math.min(totalRows, start + chunkRows) });
    return chunks;
  }
  for (let at = 0; at < sortedIds.length; at += chunkRows) {
    const ids = Int32Array.from(sortedIds.slice(at, at + chunkRows));
    const first = ids[0];
    const last = ids[ids.length - 1];
    chunks.push(last - first + 1 === ids.length ? { start: first, end: last + 1 } : { ids });
  }
  return chunks;
}

/** Rows in a chunk. */
export function chunkLength(chunk: RowChunk): number {
  return 'ids' in chunk ? chunk.ids.length : chunk.end - chunk.start;
}

/** The record batches holding a chunk's rows of `table` (already projected). */
export function chunkBatches(table: Table, chunk: RowChunk): RecordBatch[] {
  if (!('ids' in chunk)) return table.slice(chunk.start, chunk.end).batches;
  const runs = idRuns(chunk.ids);
  if (chunk.ids.length / runs.length >= MIN_MEAN_RUN_FOR_SLICES || !canTake(table)) {
    return runs.flatMap(([start, end]) => table.slice(start, end).batches);
  }
  return [takeRows(table, chunk.ids)];
}
