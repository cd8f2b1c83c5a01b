/**
 * The piscina worker: maps a body's shared IPC bytes (once per body, no copy
 * of column buffers), projects, selects and encodes one chunk, and hands the
 * bytes back as a transferred ArrayBuffer, never a structured clone.
 */
import { move } from 'piscina';
import type { Table } from 'apache-arrow';
import { concatParts } from '../ipc/encode/message.js';
import { encodeChunk } from '../table/chunk-encoding.js';
import { ipcCodec } from '../ipc/compression/codec-registry.js';
import { projectColumns } from '../table/select.js';
import { tableFromSharedIpc } from '../ipc/shared-body.js';
import type { EncodeTask } from './encode-task.js';

/** Bodies mapped in this worker, most recent last; a few are enough for interleaved requests. */
const mapped = new Map<string, Table>();
const MAPPED_LIMIT = 4;

function tableFor(task: EncodeTask): Table {
  let table = mapped.get(task.bodyId);
  if (table === undefined) {
    table = tableFromSharedIpc(task.ipc);
    if (mapped.size >= MAPPED_LIMIT) mapped.delete(mapped.keys().next().value as string);
  } else {
    mapped.delete(task.bodyId);
  }
  mapped.set(task.bodyId, table);
  return table;
}

/** Encodes one chunk; piscina calls this with each task. */
export default function encode(task: EncodeTask): Uint8Array {
  const table = projectColumns(tableFor(task), task.columns ?? undefined);
  const codec = task.format.kind === 'arrow' ? task.format.codec : undefined;
  const compression = codec === undefined ? undefined : { codec, compress: ipcCodec(codec).compress };
  // The codec's frames are copied into one transferable buffer here and dropped: a native
  // addon's Buffer is freed only once this thread's event loop turns (encoder-pool.ts).
  const parts = encodeChunk(table, task.chunk, task.format, compression);
  const bytes = concatParts(parts);
  return move(bytes) as Uint8Array;
}
