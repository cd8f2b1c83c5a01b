/**
 * A cached body is its Arrow IPC stream, written once into a SharedArrayBuffer
 * so that the main thread and worker threads map the same bytes. The buffer
 * starts 8-byte aligned (a fresh SharedArrayBuffer always does), so
 * `tableFromIPC` returns views instead of copying each column.
 */
import { tableFromIPC, tableToIPC, type Table } from 'apache-arrow';
import { hasDictionaries } from '../table/decode-dictionaries.js';
import { partsLength, recordBatchMessage, schemaMessage } from './message-writer.js';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { DEFAULT_CHUNK_ROWS } from '../table/row-chunks.js';

/**
 * A body's IPC stream before it is written: its messages (views of the column
 * buffers plus small headers) and their total length. A store checks its byte
 * budget against `byteLength` before it allocates anything of that size.
 */
export interface IpcPlan {
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
}

/** Plans the IPC stream of `table` (a body without dictionaries copies no column data). */
export function ipcPlanOf(table: Table): IpcPlan {
  const parts = hasDictionaries(table.schema) ? [tableToIPC(table, 'stream')] : messagesOf(table);
  return { parts, byteLength: partsLength(parts) };
}

/** Writes a planned stream into `target` (at least `plan.byteLength` long); returns `target`. */
export function writeIpcPlan(plan: IpcPlan, target: Uint8Array): Uint8Array {
  let at = 0;
  for (const part of plan.parts) {
    target.set(part, at);
    at += part.byteLength;
  }
  return target;
}

/**
 * Encodes `table` as an IPC stream held in a SharedArrayBuffer. The messages
 * are written straight into the shared buffer (one copy of the column data),
 * not built whole by arrow-js and copied again.
 */
export function sharedIpcFromTable(table: Table, allocate: SharedAllocator = freshShared): Uint8Array {
  const plan = ipcPlanOf(table);
  return writeIpcPlan(plan, allocate(plan.byteLength));
}

/** Allocates a zero-offset SharedArrayBuffer-backed view of exactly `byteLength` bytes. */
export type SharedAllocator = (byteLength: number) => Uint8Array;

function freshShared(byteLength: number): Uint8Array {
  return new Uint8Array(new SharedArrayBuffer(byteLength));
}

/**
 * Record batches of at most this many rows: a response chunk of the default
 * size (row-chunks.ts) is then a whole stored batch, so serving it needs no
 * slice and arrow-js does not rebase string offsets on every fetch.
 */
const STORED_BATCH_ROWS = DEFAULT_CHUNK_ROWS;

function messagesOf(table: Table): Uint8Array[] {
  const parts = [schemaMessage(table.schema)];
  for (const batch of table.batches) {
    for (let start = 0; start < batch.numRows; start += STORED_BATCH_ROWS) {
      const piece = start === 0 && batch.numRows <= STORED_BATCH_ROWS ? batch : batch.slice(start, start + STORED_BATCH_ROWS);
      parts.push(...recordBatchMessage(piece));
    }
  }
  parts.push(END_OF_STREAM);
  return parts;
}

/** Maps an IPC stream (usually SharedArrayBuffer-backed) back to a Table without copying column buffers. */
export function tableFromSharedIpc(ipc: Uint8Array): Table {
  return tableFromIPC(ipc);
}
