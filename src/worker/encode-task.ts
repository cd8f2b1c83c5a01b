/**
 * The contract between the data plane and its encoder workers. Everything in
 * a task survives structured clone: the body travels as its
 * SharedArrayBuffer-backed IPC bytes (shared, not copied), the rows as a range
 * or a small Int32Array of positions.
 */
import type { ChunkFormat } from '../table/chunk-encoding.js';
import type { RowChunk } from '../table/row-chunks.js';

/** One chunk to encode. */
export interface EncodeTask {
  /** The cached body as an IPC stream, SharedArrayBuffer-backed. */
  readonly ipc: Uint8Array;
  /** Stable id of the body, so a worker maps each body once. */
  readonly bodyId: string;
  /** Response columns, `_row_id` first; null for every column. */
  readonly columns: readonly string[] | null;
  readonly chunk: RowChunk;
  readonly format: ChunkFormat;
}
