/**
 * A cached body is its Arrow IPC stream, written once into a SharedArrayBuffer
 * so that the main thread and worker threads map the same bytes. The buffer
 * starts 8-byte aligned (a fresh SharedArrayBuffer always does), so
 * `tableFromIPC` returns views instead of copying each column.
 */
import { tableFromIPC, tableToIPC, type RecordBatch, type Schema, type Table } from 'apache-arrow';
import { hasDictionaries } from '../table/decode-dictionaries.js';
import { partsLength, schemaMessage, writeParts } from './encode/message.js';
import { recordBatchMessage } from './encode/record-batch.js';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { DEFAULT_CHUNK_ROWS } from '../table/row-chunks.js';
import { S2SPError } from '../errors.js';

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
  return writeParts(plan.parts, target);
}

/**
 * Record batches of at most this many rows: a response chunk of the default
 * size (row-chunks.ts) is then a whole stored batch, so serving it needs no
 * slice and arrow-js does not rebase string offsets on every fetch.
 */
const STORED_BATCH_ROWS = DEFAULT_CHUNK_ROWS;

function messagesOf(table: Table): Uint8Array[] {
  const parts = [schemaMessage(table.schema)];
  for (const batch of table.batches) for (const piece of storedPieces(batch)) parts.push(...recordBatchMessage(piece));
  parts.push(END_OF_STREAM);
  return parts;
}

/** `batch` cut into stored batches of at most {@link STORED_BATCH_ROWS} rows (itself when it is one). */
function* storedPieces(batch: RecordBatch): Generator<RecordBatch> {
  for (let start = 0; start < batch.numRows; start += STORED_BATCH_ROWS) {
    yield start === 0 && batch.numRows <= STORED_BATCH_ROWS ? batch : batch.slice(start, start + STORED_BATCH_ROWS);
  }
}

/** A SharedArrayBuffer that grows in place (ES2024; Node 20's V8 has it, TypeScript's ES2023 lib does not). */
interface GrowableShared extends SharedArrayBuffer {
  grow(byteLength: number): void;
  readonly maxByteLength: number;
}
const GrowableShared = SharedArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => GrowableShared;

/**
 * The largest growable SharedArrayBuffer V8 makes (4 GiB in Node 20 and 24;
 * a fixed-size one may be larger). A streamed body stops there.
 */
export const MAX_STREAMED_BODY_BYTES = 2 ** 32;

/** Options of {@link sharedIpcFromBatches}. */
export interface StreamedIpcOptions {
  /** Bytes the body may reach (capped at MAX_STREAMED_BODY_BYTES); address space is reserved for it, memory committed only as it grows. */
  maxByteLength: number;
  /**
   * Called before the body grows by `byteLength` bytes; throws to refuse
   * (a store's budget). The bytes stay claimed until the caller gives them back.
   */
  claim(byteLength: number): void;
}

/**
 * Encodes record batches, as they arrive, into one IPC stream in a growable
 * SharedArrayBuffer: each batch is copied in once and can be let go at once,
 * so memory peaks near the body's size instead of twice it (a Table of all
 * batches, then its copy). Batches must hold no dictionary columns.
 *
 * @throws S2SPError `S2SP_ERR_TABLE_TOO_LARGE` past `maxByteLength` (as capped by
 *   {@link MAX_STREAMED_BODY_BYTES}); whatever `claim` (asked first) or the batches throw
 */
export async function sharedIpcFromBatches(schema: Schema, batches: AsyncIterable<RecordBatch>, options: StreamedIpcOptions): Promise<Uint8Array> {
  const max = Math.min(options.maxByteLength, MAX_STREAMED_BODY_BYTES);
  const shared = new GrowableShared(0, { maxByteLength: max });
  let at = 0;
  const write = (parts: readonly Uint8Array[]) => {
    const length = partsLength(parts);
    options.claim(length);
    if (at + length > max) {
      throw new S2SPError('S2SP_ERR_TABLE_TOO_LARGE', { problem: 'streamedBody', maxBytes: max });
    }
    shared.grow(at + length);
    writeParts(parts, new Uint8Array(shared, at, length));
    at += length;
  };
  write([schemaMessage(schema)]);
  for await (const batch of batches) for (const piece of storedPieces(batch)) write(recordBatchMessage(piece));
  write([END_OF_STREAM]);
  return new Uint8Array(shared, 0, at);
}

/** Maps an IPC stream (usually SharedArrayBuffer-backed) back to a Table without copying column buffers. */
export function tableFromSharedIpc(ipc: Uint8Array): Table {
  return tableFromIPC(ipc);
}
