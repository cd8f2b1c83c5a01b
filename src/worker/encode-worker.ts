/**
 * The piscina worker: maps a body's shared IPC bytes (once per body, no copy
 * of column buffers), projects, selects and encodes one chunk, and hands the
 * bytes back as a transferred ArrayBuffer, never a structured clone: one of
 * the buffers the main thread gave back when one fits (output-shelf.ts).
 */
import { move } from 'piscina';
import type { Table } from 'apache-arrow';
import { partsLength, writeParts } from '../ipc/encode/message.js';
import { encodeChunk } from '../table/chunk-encoding.js';
import { ipcCodec } from '../ipc/compression/codec-registry.js';
import { projectColumns } from '../table/select.js';
import { tableFromSharedIpc } from '../ipc/shared-body.js';
import type { EncodeTask } from './encode-task.js';
import { OutputShelf } from './output-shelf.js';

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

/**
 * Buffers given back, for this thread's next answers. Bounded: a worker
 * keeps at most what a prepared 1M x 10 body's LZ4 and ZSTD forms take
 * (~90 MB), and nothing idle for long (an idle worker also exits: encoder-pool.ts).
 */
const shelf = new OutputShelf({ maxBytes: 128 * 1024 * 1024, idleMs: 10_000 });

/** Encodes one chunk; piscina calls this with each task. */
export default function encode(task: EncodeTask): Uint8Array {
  if (task.returned !== undefined) shelf.add(task.returned);
  const table = projectColumns(tableFor(task), task.columns ?? undefined);
  const codec = task.format.kind === 'arrow' ? task.format.codec : undefined;
  const compression = codec === undefined ? undefined : { codec, compress: ipcCodec(codec).compress };
  // The codec's frames are copied into one transferable buffer here and dropped: a native
  // addon's Buffer is freed only once this thread's event loop turns (encoder-pool.ts).
  const parts = encodeChunk(table, task.chunk, task.format, compression);
  const bytes = writeParts(parts, shelf.take(partsLength(parts)));
  return move(bytes) as Uint8Array;
}
