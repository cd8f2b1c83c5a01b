/**
 * Streams one response body: framing (JSON brackets, or the Arrow schema and
 * end-of-stream marker) around chunks encoded in order. Chunks are encoded in
 * worker threads, a window of `pool.threads` ahead of the socket, or inline
 * on the main thread when that is cheaper (see {@link runsInline}). The
 * Readable holds at most one part beyond what the socket accepted, so a large
 * body is never buffered whole, and backpressure reaches the encoders.
 */
import { Readable } from 'node:stream';
import type { Table } from 'apache-arrow';
import type { CachedBody } from '../cache/body-store.js';
import { encodeChunk, type ChunkFormat } from '../table/chunk-encoding.js';
import { schemaMessage, type BufferCompressor } from '../ipc/message-writer.js';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { jsonDocumentTail } from '../table/json-encoding.js';
import { chunkLength, type RowChunk } from '../table/row-chunks.js';
import type { EncoderPool } from '../worker/encoder-pool.js';

/**
 * Chunks with at most this many cells (rows x columns) are encoded on the
 * main thread. Inline is always lower latency for one chunk (a worker does
 * the same work plus a round trip of ~0.3 ms), but it blocks the event loop;
 * 4,096 cells is about 1 ms of JSON encoding, the most we let one request
 * take from everyone else. Measured with bench/inline-threshold (native-notes.md).
 */
export const DEFAULT_INLINE_CELL_LIMIT = 4096;

/** Everything needed to stream one body. */
export interface BodyStreamPlan {
  readonly body: CachedBody;
  /** The body projected to the response columns (`_row_id` first). */
  readonly table: Table;
  /** The response columns, or null for all (what workers project to). */
  readonly columns: readonly string[] | null;
  readonly chunks: readonly RowChunk[];
  readonly format: ChunkFormat;
  readonly pool?: EncoderPool;
  readonly compress?: BufferCompressor;
  readonly inlineCellLimit?: number;
  /** True when the request asked for every row and every column (the cached stream is the answer). */
  readonly wholeBody?: boolean;
  /** Aborted when the client went away: chunk tasks still queued in the pool are dropped. */
  readonly signal?: AbortSignal;
}

const JSON_OPEN = Buffer.from('{"body":[');
const COMMA = Buffer.from(',');

/** True when a chunk is encoded on the main thread instead of in a worker. */
export function runsInline(plan: BodyStreamPlan, chunk: RowChunk): boolean {
  if (plan.pool === undefined) return true;
  // Uncompressed Arrow over a range is views of the cached buffers: nothing to encode.
  if (plan.format.kind === 'arrow' && plan.format.codec === undefined && !('ids' in chunk)) return true;
  // LZ4 stays on the main thread: lz4-napi in worker threads grows the process by ~40 MB per
  // million compressed rows, never returned (native-notes.md, "lz4-napi"); on the main thread it is flat.
  if (plan.format.kind === 'arrow' && plan.format.codec === 'lz4') return true;
  return chunkLength(chunk) * plan.table.numCols <= (plan.inlineCellLimit ?? DEFAULT_INLINE_CELL_LIMIT);
}

async function encodeOne(plan: BodyStreamPlan, chunk: RowChunk): Promise<Uint8Array[]> {
  if (runsInline(plan, chunk)) return encodeChunk(plan.table, chunk, plan.format, plan.compress);
  const bytes = await plan.pool!.run({
    ipc: plan.body.ipc,
    bodyId: plan.body.id,
    columns: plan.columns,
    chunk,
    format: plan.format,
  }, { signal: plan.signal });
  return [bytes];
}

/**
 * Starts encoding and resolves once the first chunk is ready, so a failure
 * before any byte is sent can still become a clean 500 (the lease is kept).
 * A failure after that destroys the stream: the client sees a cut transfer.
 */
export async function openBodyStream(plan: BodyStreamPlan): Promise<Readable | Buffer> {
  // Every row and column, uncompressed Arrow: the cached IPC stream is the response, byte for byte
  // (same schema, same 65,536-row batches, same end marker). One write, no copy.
  if (plan.format.kind === 'arrow' && plan.format.codec === undefined && plan.wholeBody) {
    const { ipc } = plan.body;
    return Buffer.from(ipc.buffer, ipc.byteOffset, ipc.byteLength);
  }
  // A body of one inline chunk (the common small request) is answered as one
  // buffer with a Content-Length: no stream machinery, one write.
  if (plan.chunks.length <= 1 && plan.chunks.every((chunk) => runsInline(plan, chunk))) {
    const rows = plan.chunks.length === 0 ? [] : encodeChunk(plan.table, plan.chunks[0], plan.format, plan.compress);
    return Buffer.concat([opening(plan), ...rows, closing(plan)]);
  }
  const window = plan.pool?.threads ?? 1;
  const pending: Array<Promise<Uint8Array[]>> = [];
  let next = 0;
  const fill = () => {
    while (pending.length < window && next < plan.chunks.length) {
      const encoding = encodeOne(plan, plan.chunks[next++]);
      encoding.catch(() => {}); // awaited in order below; this only silences abandoned ones
      pending.push(encoding);
    }
  };
  fill();
  if (pending.length > 0) await pending[0];

  async function* parts(): AsyncGenerator<Uint8Array> {
    const json = plan.format.kind === 'json';
    yield opening(plan);
    let wroteRows = false;
    while (pending.length > 0) {
      const chunkParts = await pending.shift()!;
      fill();
      if (json && chunkParts.length > 0) {
        if (wroteRows) yield COMMA;
        wroteRows = true;
      }
      yield* coalesce(chunkParts);
    }
    yield closing(plan);
  }
  return Readable.from(parts(), { objectMode: true, highWaterMark: 1 });
}

function opening(plan: BodyStreamPlan): Uint8Array {
  return plan.format.kind === 'json' ? JSON_OPEN : schemaMessage(plan.table.schema);
}

function closing(plan: BodyStreamPlan): Uint8Array {
  return plan.format.kind === 'json' ? Buffer.from(jsonTrailer(plan)) : END_OF_STREAM;
}

/** Parts at least this large are written as they are (views of the cache: no copy). */
const WRITE_AS_IS_BYTES = 64 * 1024;

/**
 * Merges runs of small parts of one chunk (message headers, padding, small
 * buffers) into one write: an Arrow batch is a few dozen parts, and a socket
 * write each costs more than copying a few bytes. Large parts pass through
 * uncopied. Nothing is held past the chunk, so bytes never wait for the next
 * chunk's encoding.
 */
function coalesce(parts: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let small: Uint8Array[] = [];
  let smallBytes = 0;
  for (const part of parts) {
    if (part.byteLength >= WRITE_AS_IS_BYTES) {
      if (smallBytes > 0) out.push(Buffer.concat(small, smallBytes));
      small = [];
      smallBytes = 0;
      out.push(part);
      continue;
    }
    small.push(part);
    smallBytes += part.byteLength;
    if (smallBytes >= WRITE_AS_IS_BYTES) {
      out.push(Buffer.concat(small, smallBytes));
      small = [];
      smallBytes = 0;
    }
  }
  if (smallBytes > 0) out.push(Buffer.concat(small, smallBytes));
  return out;
}

function jsonTrailer(plan: BodyStreamPlan): string {
  let rows = 0;
  for (const chunk of plan.chunks) rows += chunkLength(chunk);
  return jsonDocumentTail(rows, plan.table.schema.fields.map((f) => f.name));
}
