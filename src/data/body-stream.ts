/**
 * Streams one response body: framing (JSON brackets, or the Arrow schema and
 * end-of-stream marker) around chunks encoded in order. Chunks are encoded in
 * worker threads, a window of `pool.threads` ahead of the socket, or inline
 * on the main thread when that is cheaper (see {@link runsInline}). Compressed
 * Arrow chunks that are whole stored batches are assembled from buffers a
 * {@link CompressedBatchCache} keeps, so each buffer is compressed once. The
 * Readable holds at most one part beyond what the socket accepted, so a large
 * body is never buffered whole, and backpressure reaches the encoders.
 */
import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Table } from 'apache-arrow';
import type { CachedBody } from '../cache/body-store.js';
import { encodeChunk, type ChunkFormat } from '../table/chunk-encoding.js';
import {
  compressedBatchMessage,
  type BufferCompression,
} from '../ipc/encode/record-batch.js';
import { concatParts, partsLength, schemaMessage } from '../ipc/encode/message.js';
import { batchMessageParts } from '../ipc/decode/message.js';
import type { CompressedBatchCache, CompressedColumn } from '../ipc/compression/compressed-batch-cache.js';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import { hasDictionaries } from '../table/decode-dictionaries.js';
import { projectColumns } from '../table/select.js';
import type { IpcCodec } from '../protocol/media-types.js';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { jsonDocumentTail } from '../table/json-encoding.js';
import { chunkLength, type RowChunk } from '../table/row-chunks.js';
import { S2SPError } from '../errors.js';
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
  /** The codec's compressor; required when `format.codec` is set. */
  readonly compression?: BufferCompression;
  /** Keeps compressed buffers of whole stored batches for later responses of this body. */
  readonly compressedCache?: CompressedBatchCache;
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
  return chunkLength(chunk) * plan.table.numCols <= (plan.inlineCellLimit ?? DEFAULT_INLINE_CELL_LIMIT);
}

async function encodeOne(plan: BodyStreamPlan, chunk: RowChunk): Promise<Uint8Array[]> {
  const cached = cachedBatchesOf(plan, chunk);
  if (cached !== undefined) return cachedCompressedParts(plan, cached.codec, cached);
  return encodeAnywhere(plan, chunk, plan.table, plan.columns);
}

/** Encodes `chunk` of `table` (the body projected to `columns`) inline or in a worker, by {@link runsInline}. */
async function encodeAnywhere(plan: BodyStreamPlan, chunk: RowChunk, table: Table, columns: readonly string[] | null): Promise<Uint8Array[]> {
  if (runsInline({ ...plan, table }, chunk)) return encodeChunk(table, chunk, plan.format, plan.compression);
  const bytes = await plan.pool!.run({
    ipc: plan.body.ipc,
    bodyId: plan.body.id,
    columns,
    chunk,
    format: plan.format,
  }, { signal: plan.signal });
  return [bytes];
}

/** A compressed chunk that is whole stored batches: their indices in the body and first rows. */
interface StoredBatches {
  readonly codec: IpcCodec;
  readonly first: number;
  readonly count: number;
  /** Row offset of every stored batch, and the row count at the end. */
  readonly offsets: readonly number[];
}

const offsetsByBody = new WeakMap<Table, number[]>();

function batchOffsets(table: Table): number[] {
  let offsets = offsetsByBody.get(table);
  if (offsets === undefined) {
    offsets = [0];
    for (const batch of table.batches) offsets.push(offsets[offsets.length - 1] + batch.numRows);
    offsetsByBody.set(table, offsets);
  }
  return offsets;
}

/** The stored batches a compressed chunk covers exactly, or undefined when it is not whole batches (or nothing caches). */
function cachedBatchesOf(plan: BodyStreamPlan, chunk: RowChunk): StoredBatches | undefined {
  if (plan.compressedCache === undefined || plan.format.kind !== 'arrow' || plan.format.codec === undefined) return undefined;
  if ('ids' in chunk || chunk.end <= chunk.start || hasDictionaries(plan.body.table.schema)) return undefined;
  const offsets = batchOffsets(plan.body.table);
  const first = offsets.indexOf(chunk.start);
  const last = offsets.indexOf(chunk.end, first + 1);
  if (first < 0 || last < 0) return undefined;
  return { codec: plan.format.codec, first, count: last - first, offsets };
}

/** The parts of every chunk when each is whole stored batches already kept compressed, else undefined. */
function readyCompressedParts(plan: BodyStreamPlan): Uint8Array[] | undefined {
  if (plan.compressedCache === undefined || plan.chunks.length === 0) return undefined;
  const fields = bodyFieldsOf(plan);
  const parts: Uint8Array[] = [];
  for (const chunk of plan.chunks) {
    const batches = cachedBatchesOf(plan, chunk);
    if (batches === undefined) return undefined;
    for (let k = batches.first; k < batches.first + batches.count; k++) {
      const columns = plan.compressedCache.peek(plan.body, batches.codec, k, fields);
      if (columns === undefined) return undefined;
      parts.push(...coalesce(messageOf(batches.offsets[k + 1] - batches.offsets[k], columns, batches.codec)));
    }
  }
  return parts;
}

/** The body's field index of each response column. */
function bodyFieldsOf(plan: BodyStreamPlan): number[] {
  const bodySchema = plan.body.table.schema;
  return plan.table.schema.fields.map((field) => bodySchema.fields.findIndex((f) => f.name === field.name));
}

function messageOf(rows: number, columns: readonly CompressedColumn[], codec: IpcCodec): Uint8Array[] {
  return compressedBatchMessage(
    rows,
    columns.flatMap((c) => c.nodes),
    columns.flatMap((c) => c.buffers),
    columns.flatMap((c) => c.variadicBufferCounts),
    codec,
  );
}

/**
 * A response whose parts are all in memory already (views of kept buffers):
 * written to the socket in one corked batch, which Node hands to the kernel
 * as one writev, with a Content-Length. Piping it part by part would wait
 * for the socket to drain after every large part.
 *
 * With `beforeLast`, the last part waits until it resolves, and the stream is
 * destroyed with its error instead when it rejects (the data plane's commit
 * before the last bytes, last-bytes-gate.ts).
 */
export class ReadyParts extends Readable {
  readonly parts: readonly Uint8Array[];
  /** Total bytes of the parts. */
  readonly byteLength: number;
  readonly #beforeLast: (() => Promise<void>) | undefined;

  constructor(parts: readonly Uint8Array[], beforeLast?: () => Promise<void>) {
    super();
    this.parts = parts;
    this.byteLength = partsLength(parts);
    this.#beforeLast = beforeLast;
  }

  override _read(): void {
    this.push(null); // the parts go out through pipe() below, never through reads
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    const out = destination as unknown as NodeJS.WritableStream &
      Partial<Pick<ServerResponse, 'cork' | 'uncork' | 'headersSent' | 'setHeader' | 'writableNeedDrain'>>;
    if (out.headersSent === false) out.setHeader?.('content-length', this.byteLength);
    const finish = () => {
      if (options?.end !== false) out.end();
      this.resume(); // ends this stream, so whoever waits for its end sees it
    };
    const gate = this.#beforeLast;
    const held = gate === undefined || this.parts.length === 0 ? this.parts.length : this.parts.length - 1;
    out.cork?.();
    for (let i = 0; i < held; i++) out.write(this.parts[i]);
    if (held === this.parts.length) {
      out.uncork?.();
      finish();
      return destination;
    }
    // A small answer stays corked through the gate, so it still leaves in one write; a large one
    // goes out now, and the gate waits until a stream between us and the response (the metrics'
    // byte counter) passed it on, since it holds it until the socket asks; the gate itself then
    // waits for the socket to take it. (Not for the response's own 'drain': the socket's is the
    // one to wait for, and an injected request's response never emits it.)
    const corked = out.writableNeedDrain !== true;
    if (!corked) out.uncork?.();
    (corked || out instanceof ServerResponse ? gate!() : drainOrClose(out).then(gate)).then(
      () => {
        out.write(this.parts[held]);
        if (corked) out.uncork?.();
        finish();
      },
      (error: unknown) => this.destroy(error as Error),
    );
    return destination;
  }
}

/** Resolves at the stream's next 'drain' or its 'close', whichever comes first. */
export function drainOrClose(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** The chunk's messages from cached compressed columns, compressing (once) those not cached yet. */
async function cachedCompressedParts(plan: BodyStreamPlan, codec: IpcCodec, batches: StoredBatches): Promise<Uint8Array[]> {  const fields = bodyFieldsOf(plan);
  const parts: Uint8Array[] = [];
  const messages: Array<Promise<{ columns: CompressedColumn[]; rows: number }>> = [];
  for (let k = batches.first; k < batches.first + batches.count; k++) {
    const chunk = { start: batches.offsets[k], end: batches.offsets[k + 1] };
    const compress = (missing: readonly number[]) => compressColumns(plan, k, chunk, missing);
    messages.push(plan.compressedCache!.columns(plan.body, codec, k, fields, compress).then((columns) => ({ columns, rows: chunk.end - chunk.start })));
  }
  for (const { columns, rows } of await Promise.all(messages)) parts.push(...messageOf(rows, columns, codec));
  return parts;
}

/**
 * Compresses columns `fields` (body field indices) of stored batch `k`, where
 * any other chunk would be encoded (a worker for a whole batch), and splits
 * the message back into columns. The message also holds `_row_id` (every
 * projection does); it is kept when it was asked for.
 */
async function compressColumns(plan: BodyStreamPlan, k: number, chunk: RowChunk, fields: readonly number[]): Promise<CompressedColumn[]> {
  const body = plan.body.table;
  const names = fields.map((i) => body.schema.fields[i].name);
  const projected = projectColumns(body, names);
  // Not cancelled with the transfer that started it: other transfers of the body may be waiting on
  // this compression (compressed-batch-cache.ts), and a hang-up must not cut them. Finishing it
  // costs one batch's compression, which the cache keeps for the next fetch anyway.
  const cacheFill = { ...plan, signal: undefined };
  const parts = await encodeAnywhere(cacheFill, chunk, projected, projected.schema.fields.map((f) => f.name));
  // A worker's answer is already one buffer (transferred): keep it, do not copy it.
  const message = parts.length === 1 ? parts[0] : concatParts(parts);
  const { nodes, buffers, variadicBufferCounts } = batchMessageParts(message);
  const stored = body.batches[k];
  const byName = new Map<string, CompressedColumn>();
  let node = 0;
  let buffer = 0;
  let variadic = 0;
  for (const field of projected.schema.fields) {
    // How many nodes, buffers and variadic counts this column has: assembling it uncompressed tells.
    const layout = VectorAssembler.assemble(stored.getChildAt(body.schema.fields.findIndex((f) => f.name === field.name))!);
    const column: CompressedColumn = {
      nodes: nodes.slice(node, (node += layout.nodes.length)),
      buffers: buffers.slice(buffer, (buffer += layout.buffers.length)),
      variadicBufferCounts: variadicBufferCounts.slice(variadic, (variadic += layout.variadicBufferCounts.length)),
    };
    byName.set(field.name, column);
  }
  if (node !== nodes.length || buffer !== buffers.length) throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'columnSplit' });
  return names.map((name) => byName.get(name)!);
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
  // Compressed Arrow whose every buffer an earlier response compressed: all the parts are ready,
  // so they go out in one corked batch instead of one socket write (and event-loop turn) each.
  const ready = readyCompressedParts(plan);
  if (ready !== undefined) return new ReadyParts([opening(plan), ...ready, closing(plan)]);
  // A body of one inline chunk (the common small request) is answered as one
  // buffer with a Content-Length: no stream machinery, one write.
  // (Compressed whole stored batches go through the cache instead: compressed once, kept.)
  if (plan.chunks.length <= 1 && plan.chunks.every((chunk) => runsInline(plan, chunk) && cachedBatchesOf(plan, chunk) === undefined)) {
    const rows = plan.chunks.length === 0 ? [] : encodeChunk(plan.table, plan.chunks[0], plan.format, plan.compression);
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
