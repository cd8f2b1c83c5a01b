/**
 * Test and bench support: a table's IPC stream in a fresh SharedArrayBuffer,
 * written the way MemoryStore.put writes a body (ipcPlanOf, then writeIpcPlan).
 */
import type { Table } from 'apache-arrow';
import { ipcPlanOf, writeIpcPlan } from '../../src/ipc/shared-body.js';

export function sharedIpcFromTable(table: Table): Uint8Array {
  const plan = ipcPlanOf(table);
  return writeIpcPlan(plan, new Uint8Array(new SharedArrayBuffer(plan.byteLength)));
}
