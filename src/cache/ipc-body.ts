/**
 * A cached body is its Arrow IPC stream, written once into a SharedArrayBuffer
 * so that the main thread and worker threads map the same bytes. The buffer
 * starts 8-byte aligned (a fresh SharedArrayBuffer always does), so
 * `tableFromIPC` returns views instead of copying each column.
 */
import { tableFromIPC, tableToIPC, type Table } from 'apache-arrow';

/** Encodes `table` as an IPC stream held in a SharedArrayBuffer. */
export function sharedIpcFromTable(table: Table): Uint8Array {
  const ipc = tableToIPC(table, 'stream');
  const shared = new Uint8Array(new SharedArrayBuffer(ipc.byteLength));
  shared.set(ipc);
  return shared;
}

/** Maps an IPC stream (usually SharedArrayBuffer-backed) back to a Table without copying column buffers. */
export function tableFromSharedIpc(ipc: Uint8Array): Table {
  return tableFromIPC(ipc);
}
