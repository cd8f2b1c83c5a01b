/**
 * The data plane's one encoder core. A fetch's response plan (the leased
 * body, the checked request, the negotiated format and Content-Encoding)
 * comes here, and {@link EncoderCore.respond} picks, in one place, how it is
 * answered:
 *
 *   whole cached body   every row and column as uncompressed Arrow: the cached IPC stream itself, no copy
 *   one inline buffer   a small selection written straight from the body's column buffers
 *                       (selection-json.ts, ipc/encode/selection-stream.ts), or one chunk encoded inline
 *   ready compressed    compressed Arrow whose every buffer an earlier response compressed
 *                       (ipc/compression/compressed-batch-cache.ts): one corked write
 *   streamed batches    chunks encoded inline or in workers, a window of `pool.threads` ahead of the
 *                       socket; the stream holds at most one part beyond what the socket accepted, so
 *                       a large body is never buffered whole and backpressure reaches the encoders
 *
 * Every strategy writes the same bytes for the same rows (test/data/ holds
 * them to it). The answer then leaves committed first when it is one small
 * buffer, else with its last bytes held until the commit (last-bytes-gate.ts),
 * through gzip or br when a JSON client asked. The fastify plugin around it
 * only routes, leases and negotiates.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Table } from 'apache-arrow';
import type { FastifyReply } from 'fastify';
import type { BodyStore, CachedBody } from '../cache/body-store.js';
import { integerOption } from '../option-checks.js';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { JSON_CONTENT_TYPE, arrowStreamType, type IpcCodec } from '../protocol/media-types.js';
import { concatParts, schemaMessage } from '../ipc/encode/message.js';
import type { BufferCompression } from '../ipc/encode/record-batch.js';
import { selectionIpc } from '../ipc/encode/selection-stream.js';
import { ipcCodec } from '../ipc/compression/codec-registry.js';
import { CompressedBatchCache, type CompressedColumn } from '../ipc/compression/compressed-batch-cache.js';
import { compressedColumnsMessage, splitCompressedColumns } from '../ipc/compression/compressed-columns.js';
import { encodeChunk, type ChunkFormat } from '../table/chunk-encoding.js';
import { hasDictionaries } from '../table/decode-dictionaries.js';
import { jsonDocumentTail } from '../table/json-encoding.js';
import { DEFAULT_CHUNK_ROWS, chunkLength, planChunks, type RowChunk } from '../table/row-chunks.js';
import { projectColumns } from '../table/select.js';
import { selectionJson } from '../table/selection-json.js';
import { selectionPlanOf } from '../table/selection-plan.js';
import { createEncoderPool, type EncoderPool } from '../worker/encoder-pool.js';
import { createEncoder, type ContentEncoding } from './content-encoding.js';
import type { ResolvedFetch } from './fetch-request.js';
import { COMMIT_FIRST_MAX_BYTES, holdLastBytes } from './last-bytes-gate.js';
import type { LeaseSettlement } from './lease-settlement.js';
import type { ResponseFormat } from './negotiate.js';
import { ReadyParts } from './ready-parts.js';

/**
 * Chunks with at most this many cells (rows x columns) are encoded on the
 * main thread. Inline is always lower latency for one chunk (a worker does
 * the same work plus a round trip of ~0.3 ms), but it blocks the event loop;
 * 4,096 cells is about 1 ms of JSON encoding, the most we let one request
 * take from everyone else. Measured with bench/inline-threshold (native-notes.md).
 */
export const DEFAULT_INLINE_CELL_LIMIT = 4096;

/** Largest chunk: an Arrow record batch's row count is an Int32. */
const MAX_CHUNK_ROWS = 2 ** 31 - 1;

/** Options of {@link EncoderCore} (the data plane's, DataPlaneOptions documents them). */
export interface EncoderCoreOptions {
  readonly store: BodyStore;
  /** A pool to share, a thread count for a pool of the core's own, or 0 for the main thread only. */
  readonly workers?: EncoderPool | number;
  readonly chunkRows?: number;
  readonly inlineCellLimit?: number;
  /** A cache to share, a byte budget for one of the core's own, or 0 to compress every response anew. */
  readonly compressedCache?: CompressedBatchCache | number;
}

/** One fetch to answer: what the adapter knows once the lease is taken and the request checked. */
export interface ResponsePlan {
  readonly token: string;
  readonly body: CachedBody;
  readonly fetch: ResolvedFetch;
  readonly format: ResponseFormat;
  /** The Content-Encoding negotiated for a JSON answer; undefined for identity (and always for Arrow). */
  readonly encoding: ContentEncoding | undefined;
  /** The transfer's lease: its hang-up signal, and when the answer is sent and committed. */
  readonly transfer: Pick<LeaseSettlement, 'signal' | 'sending' | 'commit'>;
}

/** The one place a response plan becomes bytes on a reply; see the file comment. */
export class EncoderCore {
  readonly #store: BodyStore;
  readonly #pool: EncoderPool | undefined;
  readonly #ownsPool: boolean;
  readonly #cache: CompressedBatchCache | undefined;
  readonly #ownsCache: boolean;
  readonly #chunkRows: number;
  readonly #inlineCellLimit: number;

  /** @throws S2SPError `S2SP_ERR_OPTION_INVALID` for an out-of-range number */
  constructor(options: EncoderCoreOptions) {
    this.#store = options.store;
    this.#chunkRows = integerOption(options.chunkRows, 'chunkRows', 1, MAX_CHUNK_ROWS) ?? DEFAULT_CHUNK_ROWS;
    this.#inlineCellLimit = integerOption(options.inlineCellLimit, 'inlineCellLimit', 0) ?? DEFAULT_INLINE_CELL_LIMIT;
    const { workers, compressedCache } = options;
    if (typeof workers !== 'object') integerOption(workers, 'workers', 0);
    this.#pool = workers === 0 ? undefined : typeof workers === 'object' ? workers : createEncoderPool({ threads: workers });
    this.#ownsPool = this.#pool !== undefined && this.#pool !== workers;
    this.#cache =
      compressedCache === 0
        ? undefined
        : typeof compressedCache === 'object'
          ? compressedCache
          : new CompressedBatchCache(compressedCache === undefined ? {} : { maxBytes: compressedCache });
    this.#ownsCache = this.#cache !== undefined && this.#cache !== compressedCache;
  }

  /**
   * Encodes `plan`'s answer and sends it on `reply`. Resolves once the
   * answer is handed to the reply; rejects, before a byte is sent, when the
   * encoding or a commit-first commit fails (the caller releases the lease).
   */
  async respond(reply: FastifyReply, plan: ResponsePlan): Promise<FastifyReply> {
    const response = this.#inline(plan) ?? (await this.#encoded(plan));
    plan.transfer.sending();
    reply.type(plan.format.kind === 'arrow' ? arrowStreamType(plan.format.codec) : JSON_CONTENT_TYPE);
    // Single use under store faults (SPEC 5): a small answer is committed before it is sent (a
    // failed commit is then a clean error document), any other holds its last bytes until then.
    if (plan.encoding === undefined && Buffer.isBuffer(response) && response.byteLength <= COMMIT_FIRST_MAX_BYTES) {
      await this.#commit(plan);
      return reply.send(response);
    }
    const gated = holdLastBytes(response, () => this.#commit(plan));
    // Sent as a stream now, which fastify gives no length: one Buffer keeps its Content-Length.
    if (plan.encoding === undefined) {
      if (Buffer.isBuffer(response)) reply.header('content-length', response.byteLength);
      return reply.send(gated);
    }
    reply.header('content-encoding', plan.encoding).header('vary', 'Accept, Accept-Encoding');
    const encoder = createEncoder(plan.encoding);
    pipeline(gated, encoder).catch(() => {}); // errors destroy both; the response sees the cut
    return reply.send(encoder);
  }

  /** Stops what the core made itself (a pool, a cache); shared ones are their owner's. */
  async close(): Promise<void> {
    if (this.#ownsCache) this.#cache!.clear();
    if (this.#ownsPool) await this.#pool!.close();
  }

  async #commit(plan: ResponsePlan): Promise<void> {
    await plan.transfer.commit();
    this.#cache?.dropUnlessHeld(plan.body.id, this.#store, plan.token);
  }

  /** The answers that need no projection, no chunks and no stream: the whole cached body, a small selection. */
  #inline(plan: ResponsePlan): Buffer | undefined {
    const { body, fetch, format } = plan;
    // Every row and column, uncompressed Arrow: the cached IPC stream is the response, byte for byte
    // (same schema, same 65,536-row batches, same end marker). One write, no copy.
    if (format.kind === 'arrow' && format.codec === undefined && fetch.sortedIds === undefined && fetch.columns === undefined) {
      return Buffer.from(body.ipc.buffer, body.ipc.byteOffset, body.ipc.byteLength);
    }
    return selectionBuffer(body.table, fetch, format, this.#inlineCellLimit);
  }

  /** The chunked answers: ready compressed parts, one inline chunk, or a stream. */
  async #encoded(plan: ResponsePlan): Promise<Readable | Buffer> {
    const { body, fetch, format } = plan;
    const table = projectColumns(body.table, fetch.columns);
    const chunked: ChunkPlan = {
      body,
      table,
      columns: fetch.columns === undefined ? null : table.schema.fields.map((f) => f.name),
      chunks: planChunks(body.totalRows, fetch.sortedIds, this.#chunkRows),
      format,
      pool: this.#pool,
      compression: format.codec === undefined ? undefined : { codec: format.codec, compress: ipcCodec(format.codec).compress },
      compressedCache: this.#cache,
      inlineCellLimit: this.#inlineCellLimit,
      signal: plan.transfer.signal,
    };
    // Compressed Arrow whose every buffer an earlier response compressed: all the parts are ready,
    // so they go out in one corked batch instead of one socket write (and event-loop turn) each.
    const ready = readyCompressedParts(chunked);
    if (ready !== undefined) return new ReadyParts([opening(chunked), ...ready, closing(chunked)]);
    // One inline chunk: one buffer with a Content-Length, no stream machinery, one write.
    // (Compressed whole stored batches go through the cache instead: compressed once, kept.)
    const { chunks } = chunked;
    if (chunks.length <= 1 && chunks.every((chunk) => runsInline(chunked, chunk) && cachedBatchesOf(chunked, chunk) === undefined)) {
      const rows = chunks.length === 0 ? [] : encodeChunk(table, chunks[0], format, chunked.compression);
      return Buffer.concat([opening(chunked), ...rows, closing(chunked)]);
    }
    return streamed(chunked);
  }
}

/**
 * A small selection's whole answer as one Buffer, written straight from the
 * body's column buffers, or undefined when it is not one: compressed Arrow, a
 * selection of more than `cellLimit` cells (rows x response columns; this
 * blocks the event loop too), or an Arrow column whose layout is not flat.
 * The per-body work (projection, column chunks, JSON writers, the schema
 * message) is cached in a SelectionPlan, and it skips the arrow-js objects,
 * the encoder choice and the stream of the chunked path; same bytes.
 */
export function selectionBuffer(body: Table, fetch: ResolvedFetch, format: ResponseFormat, cellLimit: number): Buffer | undefined {
  if (format.kind === 'arrow' && format.codec !== undefined) return undefined;
  const rows = fetch.sortedIds === undefined ? body.numRows : fetch.sortedIds.length;
  const width = fetch.columns === undefined ? body.numCols : new Set(fetch.columns).size + 1;
  if (rows * width > cellLimit) return undefined;
  const ids = fetch.sortedIds ?? allRows(rows);
  const plan = selectionPlanOf(body, fetch.columns);
  return format.kind === 'json' ? selectionJson(plan, ids) : selectionIpc(plan, ids);
}

function allRows(n: number): Int32Array {
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) ids[i] = i;
  return ids;
}

/** A chunked answer: the body projected, its chunks, and where each is encoded. */
interface ChunkPlan {
  readonly body: CachedBody;
  /** The body projected to the response columns (`_row_id` first). */
  readonly table: Table;
  /** The response columns, or null for all (what workers project to). */
  readonly columns: readonly string[] | null;
  readonly chunks: readonly RowChunk[];
  readonly format: ChunkFormat;
  readonly pool: EncoderPool | undefined;
  /** The codec's compressor when `format.codec` is set. */
  readonly compression: BufferCompression | undefined;
  readonly compressedCache: CompressedBatchCache | undefined;
  readonly inlineCellLimit: number;
  /** Aborted when the client went away: chunk tasks still queued in the pool are dropped. */
  readonly signal: AbortSignal | undefined;
}

/** True when a chunk is encoded on the main thread instead of in a worker. */
function runsInline(plan: ChunkPlan, chunk: RowChunk, table: Table = plan.table): boolean {
  if (plan.pool === undefined) return true;
  // Uncompressed Arrow over a range is views of the cached buffers: nothing to encode.
  if (plan.format.kind === 'arrow' && plan.format.codec === undefined && !('ids' in chunk)) return true;
  return chunkLength(chunk) * table.numCols <= plan.inlineCellLimit;
}

/**
 * Starts encoding and resolves once the first chunk is ready, so a failure
 * before any byte is sent can still become a clean 500 (the lease is kept).
 * A failure after that destroys the stream: the client sees a cut transfer.
 */
async function streamed(plan: ChunkPlan): Promise<Readable> {
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

async function encodeOne(plan: ChunkPlan, chunk: RowChunk): Promise<Uint8Array[]> {
  const cached = cachedBatchesOf(plan, chunk);
  if (cached !== undefined) return cachedCompressedParts(plan, cached.codec, cached);
  return encodeAnywhere(plan, chunk, plan.table, plan.columns);
}

/** Encodes `chunk` of `table` (the body projected to `columns`) inline or in a worker, by {@link runsInline}. */
async function encodeAnywhere(plan: ChunkPlan, chunk: RowChunk, table: Table, columns: readonly string[] | null): Promise<Uint8Array[]> {
  if (runsInline(plan, chunk, table)) return encodeChunk(table, chunk, plan.format, plan.compression);
  const bytes = await plan.pool!.run({ ipc: plan.body.ipc, bodyId: plan.body.id, columns, chunk, format: plan.format }, { signal: plan.signal });
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
function cachedBatchesOf(plan: ChunkPlan, chunk: RowChunk): StoredBatches | undefined {
  if (plan.compressedCache === undefined || plan.format.kind !== 'arrow' || plan.format.codec === undefined) return undefined;
  if ('ids' in chunk || chunk.end <= chunk.start || hasDictionaries(plan.body.table.schema)) return undefined;
  const offsets = batchOffsets(plan.body.table);
  const first = offsets.indexOf(chunk.start);
  const last = offsets.indexOf(chunk.end, first + 1);
  if (first < 0 || last < 0) return undefined;
  return { codec: plan.format.codec, first, count: last - first, offsets };
}

/** The parts of every chunk when each is whole stored batches already kept compressed, else undefined. */
function readyCompressedParts(plan: ChunkPlan): Uint8Array[] | undefined {
  if (plan.compressedCache === undefined || plan.chunks.length === 0) return undefined;
  const fields = bodyFieldsOf(plan);
  const parts: Uint8Array[] = [];
  for (const chunk of plan.chunks) {
    const batches = cachedBatchesOf(plan, chunk);
    if (batches === undefined) return undefined;
    for (let k = batches.first; k < batches.first + batches.count; k++) {
      const columns = plan.compressedCache.peek(plan.body, batches.codec, k, fields);
      if (columns === undefined) return undefined;
      parts.push(...coalesce(compressedColumnsMessage(batches.offsets[k + 1] - batches.offsets[k], columns, batches.codec)));
    }
  }
  return parts;
}

/** The body's field index of each response column. */
function bodyFieldsOf(plan: ChunkPlan): number[] {
  const bodySchema = plan.body.table.schema;
  return plan.table.schema.fields.map((field) => bodySchema.fields.findIndex((f) => f.name === field.name));
}

/** The chunk's messages from cached compressed columns, compressing (once) those not cached yet. */
async function cachedCompressedParts(plan: ChunkPlan, codec: IpcCodec, batches: StoredBatches): Promise<Uint8Array[]> {
  const fields = bodyFieldsOf(plan);
  const parts: Uint8Array[] = [];
  const messages: Array<Promise<{ columns: CompressedColumn[]; rows: number }>> = [];
  for (let k = batches.first; k < batches.first + batches.count; k++) {
    const chunk = { start: batches.offsets[k], end: batches.offsets[k + 1] };
    const compress = (missing: readonly number[]) => compressColumns(plan, k, chunk, missing);
    messages.push(plan.compressedCache!.columns(plan.body, codec, k, fields, compress).then((columns) => ({ columns, rows: chunk.end - chunk.start })));
  }
  for (const { columns, rows } of await Promise.all(messages)) parts.push(...compressedColumnsMessage(rows, columns, codec));
  return parts;
}

/**
 * Compresses columns `fields` (body field indices) of stored batch `k`, where
 * any other chunk would be encoded (a worker for a whole batch), and splits
 * the message back into columns. The message also holds `_row_id` (every
 * projection does); it is kept when it was asked for.
 */
async function compressColumns(plan: ChunkPlan, k: number, chunk: RowChunk, fields: readonly number[]): Promise<CompressedColumn[]> {
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
  const stored = body.batches[k];
  const messageFields = projected.schema.fields.map((field) => body.schema.fields.findIndex((f) => f.name === field.name));
  const columns = splitCompressedColumns(message, messageFields.map((i) => stored.getChildAt(i)!));
  const byName = new Map(projected.schema.fields.map((field, i) => [field.name, columns[i]]));
  return names.map((name) => byName.get(name)!);
}

const JSON_OPEN = Buffer.from('{"body":[');
const COMMA = Buffer.from(',');

function opening(plan: ChunkPlan): Uint8Array {
  return plan.format.kind === 'json' ? JSON_OPEN : schemaMessage(plan.table.schema);
}

function closing(plan: ChunkPlan): Uint8Array {
  if (plan.format.kind !== 'json') return END_OF_STREAM;
  let rows = 0;
  for (const chunk of plan.chunks) rows += chunkLength(chunk);
  return Buffer.from(jsonDocumentTail(rows, plan.table.schema.fields.map((f) => f.name)));
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
