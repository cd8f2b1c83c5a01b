/**
 * The data plane's one encoder core. A fetch's response plan (the leased
 * body, the checked request, the negotiated format and Content-Encoding)
 * comes here, and {@link EncoderCore.respond} picks, in one place, how it is
 * answered:
 *
 *   whole cached body   every row and column as uncompressed Arrow: the cached IPC stream itself, no copy
 *   one inline buffer   a small selection written straight from the body's column buffers
 *                       (selection-json.ts, ipc/encode/selection-stream.ts), or one chunk encoded inline
 *   ready encoded       compressed Arrow whose every buffer an earlier response or the think-time
 *                       preparation compressed, or JSON of every row and column that preparation
 *                       wrote (encoded-batch-cache.ts): corked writes of a mebibyte a turn
 *   streamed batches    chunks encoded inline or in workers, a window of `pool.threads` ahead of the
 *                       socket; the stream holds at most one part beyond what the socket accepted, so
 *                       a large body is never buffered whole and backpressure reaches the encoders
 *
 * Every strategy writes the same bytes for the same rows (test/data/ holds
 * them to it). The answer then leaves committed first when it is one small
 * buffer, else with its last bytes held until the commit (last-bytes-gate.ts),
 * through gzip or br when a JSON client asked, and with the other answers of
 * its event-loop turn, at the turn's end (turn-end.ts). The fastify
 * plugin around it only routes, leases and negotiates.
 *
 * {@link EncoderCore.prepare} runs the same chunk encoding for a fetch that
 * has not come yet (body-preparation.ts decides when): in the pool's idle
 * threads, into the encoded-batch cache, where the fetch then finds it.
 */
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import type { Table } from 'apache-arrow';
import type { FastifyReply } from 'fastify';
import type { BodyStore, CachedBody } from '../cache/body-store.js';
import { GcNudge, type FullGc } from '../cache/gc-nudge.js';
import { functionOption, integerOption } from '../option-checks.js';
import { END_OF_STREAM } from '../protocol/arrow-framing.js';
import { JSON_CONTENT_TYPE, arrowStreamType, type IpcCodec } from '../protocol/media-types.js';
import { concatParts, schemaMessage } from '../ipc/encode/message.js';
import type { BufferCompression } from '../ipc/encode/record-batch.js';
import { selectionIpc } from '../ipc/encode/selection-stream.js';
import { ipcCodec } from '../ipc/compression/codec-registry.js';
import { compressedColumnsMessage, splitCompressedColumns, type CompressedColumn } from '../ipc/compression/compressed-columns.js';
import { encodeChunk, type ChunkFormat } from '../table/chunk-encoding.js';
import { hasDictionaries } from '../table/decode-dictionaries.js';
import { DEFAULT_CHUNK_ROWS, chunkLength, planChunks, type RowChunk } from '../table/row-chunks.js';
import { projectColumns } from '../table/select.js';
import { selectionJson } from '../json/selection-writer.js';
import { JSON_BODY_OPEN, JSON_ROW_SEPARATOR, jsonBodyClose } from '../protocol/json-body-bytes.js';
import { selectionPlanOf, type SelectionPlan } from '../table/selection-plan.js';
import { createEncoderPool, type EncoderPool } from '../worker/encoder-pool.js';
import { BodyPreparation, formOf, type PreparationEvent, type PrepareOption, type PreparedForm } from './body-preparation.js';
import type { Listener, Unsubscribe } from '../observe.js';
import { EncodedBatchCache } from './encoded-batch-cache.js';
import type { ResolvedFetch } from './fetch-request.js';
import { COMMIT_FIRST_MAX_BYTES, ReadyParts } from './last-bytes-gate.js';
import type { LeaseSettlement } from './lease-settlement.js';
import type { ContentEncoding, ResponseFormat } from './negotiate.js';
import { nextTurn, sendAtTurnEnd } from './turn-end.js';
import { slicesOf, WritePacer } from './write-pacing.js';

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

/** Options of {@link EncoderCore}, and so of the data plane. */
export interface EncoderCoreOptions {
  /** The store the resource tools write to. */
  store: BodyStore;
  /**
   * Where chunks are encoded: a pool to share, a thread count for a pool of
   * the core's own (closed with the app), or 0 for the main thread only.
   * Default: a pool with one thread per core, at most 4.
   */
  workers?: EncoderPool | number;
  /** Rows per response chunk (one Arrow record batch); default 65,536. */
  chunkRows?: number;
  /** Chunks of at most this many cells stay on the main thread (default 4,096). */
  inlineCellLimit?: number;
  /**
   * Where encoded whole stored batches are kept (compressed buffers, which
   * later responses of every token and projection of the body reuse, and
   * prepared JSON): a cache to share, a bound in bytes for one of the core's
   * own, or 0 to keep nothing (every response compresses anew, nothing is
   * prepared). Default: 512 MiB; the core's own cache also counts in the
   * store's byte budget when the store shares it (MemoryStore does).
   */
  encodedCache?: EncodedBatchCache | number;
  /**
   * What idle workers prepare after a put, while the LLM reads the abstract
   * (body-preparation.ts): `'off'`, a list of forms (`'json'`, `'lz4'`,
   * `'zstd'`), or `'auto'`, the forms recent fetches of bodies of the same
   * origin (the resource tool) asked for. Needs workers and a cache.
   * Default: `'auto'`.
   */
  prepare?: PrepareOption;
  /**
   * A full garbage collection to run once a body is prepared, while the
   * plane waits for its fetch (e.g. `globalThis.gc` under `--expose-gc`; the
   * CLI gives its own). The buffers a preparation receives from its workers
   * otherwise make V8 start a collection at the fetch's first allocations,
   * which then slows about half of the first fetches after a think time by
   * 10-30 ms (bench/analysis.md, "Think time"). At most one every 2 s.
   * Default: none.
   */
  fullGc?: FullGc;
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
  readonly #options: EncoderCoreOptions;
  readonly #pool: EncoderPool | undefined;
  readonly #cache: EncodedBatchCache | undefined;
  readonly #preparation: BodyPreparation | undefined;
  readonly #chunkRows: number;
  readonly #inlineCellLimit: number;
  /** Collects after a preparation, when the embedder gave a collector. */
  readonly #gc: GcNudge;

  /** @throws S2SPError `S2SP_ERR_OPTION_INVALID` for an out-of-range number or a `fullGc` that is not a function */
  constructor(options: EncoderCoreOptions) {
    this.#options = options;
    this.#chunkRows = integerOption(options.chunkRows, 'chunkRows', 1, MAX_CHUNK_ROWS) ?? DEFAULT_CHUNK_ROWS;
    this.#inlineCellLimit = integerOption(options.inlineCellLimit, 'inlineCellLimit', 0) ?? DEFAULT_INLINE_CELL_LIMIT;
    this.#gc = new GcNudge(options.fullGc === undefined ? undefined : functionOption(options.fullGc, 'fullGc'));
    const { workers, encodedCache } = options;
    if (typeof workers !== 'object') integerOption(workers, 'workers', 0);
    this.#pool = workers === 0 ? undefined : typeof workers === 'object' ? workers : createEncoderPool({ threads: workers });
    this.#cache = encodedCache === 0 ? undefined : typeof encodedCache === 'object' ? encodedCache : new EncodedBatchCache({ maxBytes: encodedCache });
    if (this.#cache !== encodedCache) this.#cache?.shareBudgetOf(options.store);
    this.#preparation = BodyPreparation.start(options.store, options.prepare, {
      can: this.#pool !== undefined && this.#cache !== undefined,
      prepare: (body, form, signal) => this.prepare(body, form, signal),
      signalFor: (body) => this.#cache!.signalFor(body),
      drop: (bodyId) => this.#cache!.delete(bodyId),
    });
  }

  /**
   * Encodes `plan`'s answer and sends it on `reply`, with the other answers
   * of this event-loop turn at its end (turn-end.ts): the route
   * handler must not answer itself. Resolves once the answer is queued;
   * rejects, before a byte is sent, when the encoding or a commit-first
   * commit fails (the caller releases the lease).
   */
  async respond(reply: FastifyReply, plan: ResponsePlan): Promise<void> {
    this.#preparation?.fetching(plan.body, formOf(plan.format, plan.fetch));
    const commit = () => this.#commit(plan);
    const response = this.#inline(plan) ?? (await this.#encoded(plan, commit));
    plan.transfer.sending();
    reply.type(plan.format.kind === 'arrow' ? arrowStreamType(plan.format.codec) : JSON_CONTENT_TYPE);
    // Single use under store faults (SPEC 5): a small answer is committed before it is sent (a
    // failed commit is then a clean error document), any other holds its last bytes until then.
    if (plan.encoding === undefined && Buffer.isBuffer(response) && response.byteLength <= COMMIT_FIRST_MAX_BYTES) {
      await commit();
      return sendAtTurnEnd(reply, response);
    }
    // One Buffer holds back exactly the Arrow end-of-stream marker's length: the marker itself, or
    // the last bytes of the JSON tail (always longer), so neither document is complete without them.
    const cut = Buffer.isBuffer(response) ? Math.max(0, response.byteLength - END_OF_STREAM.byteLength) : 0;
    const gated = Buffer.isBuffer(response) ? new ReadyParts([response.subarray(0, cut), response.subarray(cut)], commit) : response;
    // Sent as a stream now, which fastify gives no length: one Buffer keeps its Content-Length.
    if (plan.encoding === undefined) {
      if (Buffer.isBuffer(response)) reply.header('content-length', response.byteLength);
      return sendAtTurnEnd(reply, gated);
    }
    reply.header('content-encoding', plan.encoding).header('vary', 'Accept, Accept-Encoding');
    const encoder = createEncoder(plan.encoding);
    pipeline(gated, encoder).catch(() => {}); // errors destroy both; the response sees the cut
    sendAtTurnEnd(reply, encoder);
  }

  /** Tells `listener` each body form prepared in think time, or stopped (for metrics). */
  observePreparation(listener: Listener<PreparationEvent>): Unsubscribe {
    return this.#preparation?.observe(listener) ?? (() => {});
  }

  /** Stops what the core made itself (a pool, a cache); shared ones are their owner's. */
  async close(): Promise<void> {
    this.#preparation?.stop();
    if (this.#cache !== this.#options.encodedCache) this.#cache?.close();
    if (this.#pool !== this.#options.workers) await this.#pool?.close();
  }

  async #commit(plan: ResponsePlan): Promise<void> {
    await plan.transfer.commit();
    this.#cache?.dropUnlessHeld(plan.body.id, this.#options.store, plan.token);
  }

  /**
   * Encodes every row and column of `body` in `form` into the cache, in the
   * pool's idle threads (background tasks), as a fetch in that form would;
   * stops when `signal` aborts. Resolves once done or stopped, never rejects.
   */
  async prepare(body: CachedBody, form: PreparedForm, signal: AbortSignal): Promise<void> {
    if (this.#pool === undefined || this.#cache === undefined) return;
    // A body of at most one inline chunk is answered from its column buffers at once: nothing to prepare.
    if (body.totalRows * body.table.numCols <= this.#inlineCellLimit) return;
    const format: ResponseFormat = form === 'json' ? { kind: 'json' } : { kind: 'arrow', codec: form };
    const plan = this.#chunkPlan(body, { sortedIds: undefined, columns: undefined }, format, signal, true);
    await Promise.all(plan.chunks.map((chunk) => encodeOne(plan, chunk))).catch(() => {});
    if (!signal.aborted) this.#gc.soon();
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

  /** The chunked answers: ready compressed parts, one inline chunk, or a stream (the last two hold their last bytes for `commit`). */
  async #encoded(plan: ResponsePlan, commit: () => Promise<void>): Promise<Readable | Buffer> {
    const chunked = this.#chunkPlan(plan.body, plan.fetch, plan.format, plan.transfer.signal, false);
    const { table, format } = chunked;
    // Every part encoded already (compressed buffers, prepared JSON): they go out in corked batches
    // of a mebibyte per event-loop turn (write-pacing.ts), not one socket write and turn per part.
    const ready = readyEncodedParts(chunked);
    if (ready !== undefined) return new ReadyParts([opening(chunked), ...ready, closing(chunked)], commit);
    // One inline chunk: one buffer with a Content-Length, no stream machinery, one write.
    // (Compressed whole stored batches go through the cache instead: compressed once, kept. JSON
    // is prepared only for bodies too large to be one inline chunk.)
    const { chunks } = chunked;
    if (chunks.length <= 1 && chunks.every((chunk) => runsInline(chunked, chunk) && (cachedBatchesOf(chunked, chunk)?.codec ?? 'json') === 'json')) {
      const rows = chunks.length === 0 ? [] : encodeChunk(table, chunks[0], format, chunked.compression);
      return Buffer.concat([opening(chunked), ...rows, closing(chunked)]);
    }
    return streamed(chunked, commit);
  }

  #chunkPlan(
    body: CachedBody,
    fetch: Pick<ResolvedFetch, 'sortedIds' | 'columns'>,
    format: ResponseFormat,
    signal: AbortSignal | undefined,
    preparing: boolean,
  ): ChunkPlan {
    const table = projectColumns(body.table, fetch.columns);
    return {
      body,
      table,
      columns: fetch.columns === undefined ? null : table.schema.fields.map((f) => f.name),
      chunks: planChunks(body.totalRows, fetch.sortedIds, this.#chunkRows),
      selection: selectionPlanOf(body.table, fetch.columns),
      format,
      pool: this.#pool,
      compression: format.codec === undefined ? undefined : { codec: format.codec, compress: ipcCodec(format.codec).compress },
      encodedCache: this.#cache,
      inlineCellLimit: this.#inlineCellLimit,
      signal,
      preparing,
    };
  }
}

/**
 * A small selection's whole answer as one Buffer written straight from the
 * body's column buffers (per-body work kept in a SelectionPlan; no arrow-js
 * objects, no stream), or undefined when it is not one: compressed Arrow, more
 * than `cellLimit` cells (rows x response columns), a non-flat Arrow column.
 */
export function selectionBuffer(body: Table, fetch: ResolvedFetch, format: ResponseFormat, cellLimit: number): Buffer | undefined {
  if (format.kind === 'arrow' && format.codec !== undefined) return undefined;
  const rows = fetch.sortedIds === undefined ? body.numRows : fetch.sortedIds.length;
  // The plan is kept per body and projection (the chunked path asks for it too); its fields are the response's columns.
  const plan = selectionPlanOf(body, fetch.columns);
  if (rows * plan.fields.length > cellLimit) return undefined;
  const ids = fetch.sortedIds ?? allRows(rows);
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
  /** The projection's plan: where each stored batch starts, each response column's body field. */
  readonly selection: SelectionPlan;
  readonly format: ChunkFormat;
  readonly pool: EncoderPool | undefined;
  /** The codec's compressor when `format.codec` is set. */
  readonly compression: BufferCompression | undefined;
  readonly encodedCache: EncodedBatchCache | undefined;
  readonly inlineCellLimit: number;
  /** Aborted when the client went away (or a preparation stops): chunk tasks still queued in the pool are dropped. */
  readonly signal: AbortSignal | undefined;
  /** A preparation (no client yet): background tasks, and what is encoded is kept. */
  readonly preparing: boolean;
}

/** True when a chunk is encoded on the main thread instead of in a worker. */
function runsInline(plan: ChunkPlan, chunk: RowChunk, table: Table = plan.table): boolean {
  if (plan.pool === undefined) return true;
  if (plan.preparing) return false; // think-time work never takes the event loop
  // Uncompressed Arrow over a range is views of the cached buffers: nothing to encode.
  if (plan.format.kind === 'arrow' && plan.format.codec === undefined && !('ids' in chunk)) return true;
  return chunkLength(chunk) * table.numCols <= plan.inlineCellLimit;
}

/**
 * Starts encoding and resolves once the first chunk is ready, so a failure
 * before any byte is sent can still become a clean 500 (the lease is kept).
 * A failure after that destroys the stream: the client sees a cut transfer,
 * as it does when `commit`, awaited before the closing part, rejects.
 */
async function streamed(plan: ChunkPlan, commit: () => Promise<void>): Promise<Readable> {
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
    // At most a mebibyte per event-loop turn (write-pacing.ts): a worker's JSON chunk is 4-12 MB.
    const pacer = new WritePacer();
    yield opening(plan);
    let wroteRows = false;
    while (pending.length > 0) {
      const chunkParts = await pending.shift()!;
      fill();
      if (json && chunkParts.length > 0) {
        if (wroteRows) yield ROW_SEPARATOR;
        wroteRows = true;
      }
      for (const part of coalesce(chunkParts)) {
        for (const slice of slicesOf(part)) {
          if (pacer.before(slice.byteLength)) await nextTurn();
          yield slice;
        }
      }
    }
    await commit();
    yield closing(plan);
  }
  return Readable.from(parts(), { objectMode: true, highWaterMark: 1 });
}

async function encodeOne(plan: ChunkPlan, chunk: RowChunk): Promise<Uint8Array[]> {
  const cached = cachedBatchesOf(plan, chunk);
  if (cached === undefined) return encodeAnywhere(plan, chunk, plan.table, plan.columns);
  return cached.codec === 'json' ? cachedJsonParts(plan, cached) : cachedCompressedParts(plan, { ...cached, codec: cached.codec });
}

/** Encodes `chunk` of `table` (the body projected to `columns`) inline or in a worker, by {@link runsInline}. */
async function encodeAnywhere(plan: ChunkPlan, chunk: RowChunk, table: Table, columns: readonly string[] | null): Promise<Uint8Array[]> {
  if (runsInline(plan, chunk, table)) return encodeChunk(table, chunk, plan.format, plan.compression);
  const options = { signal: plan.signal, background: plan.preparing };
  const bytes = await plan.pool!.run({ ipc: plan.body.ipc, bodyId: plan.body.id, columns, chunk, format: plan.format }, options);
  return [bytes];
}

/**
 * A chunk that is whole stored batches `first` to `end` (exclusive), kept
 * encoded in the cache: compressed Arrow in `codec` (any projection), or
 * JSON of every column (`codec` 'json').
 */
interface StoredBatches<Form extends PreparedForm = PreparedForm> {
  readonly codec: Form;
  readonly first: number;
  readonly end: number;
}

/** The stored batches a chunk covers exactly when the cache keeps its form, or undefined. */
function cachedBatchesOf(plan: ChunkPlan, chunk: RowChunk): StoredBatches | undefined {
  if (plan.encodedCache === undefined || 'ids' in chunk || chunk.end <= chunk.start) return undefined;
  const { format } = plan;
  const codec = format.kind === 'json' ? (plan.columns === null ? 'json' : undefined) : format.codec;
  if (codec === undefined || (codec !== 'json' && hasDictionaries(plan.body.table.schema))) return undefined;
  const { starts } = plan.selection;
  const first = starts.indexOf(chunk.start);
  const end = starts.indexOf(chunk.end, first + 1);
  return first < 0 || end < 0 ? undefined : { codec, first, end };
}

/** The parts of every chunk when each is whole stored batches the cache keeps encoded already, else undefined. */
function readyEncodedParts(plan: ChunkPlan): Uint8Array[] | undefined {
  if (plan.encodedCache === undefined || plan.chunks.length === 0) return undefined;
  const { starts, indices } = plan.selection;
  const parts: Uint8Array[] = [];
  for (const chunk of plan.chunks) {
    const batches = cachedBatchesOf(plan, chunk);
    if (batches === undefined) return undefined;
    const { codec, first, end } = batches;
    if (codec === 'json') {
      const rows = plan.encodedCache.peekJson(plan.body, first, end);
      if (rows === undefined) return undefined;
      joinRows(parts, rows);
      continue;
    }
    for (let k = first; k < end; k++) {
      const columns = plan.encodedCache.peek(plan.body, codec, k, indices);
      if (columns === undefined) return undefined;
      // Not coalesced: these go out corked, a writev per mebibyte, where a part costs a write() call (~1 us),
      // not a syscall; copying ZSTD's many small buffers together cost more (0.4-2.5 ms a fetch).
      for (const part of compressedColumnsMessage(starts[k + 1] - starts[k], columns, codec)) parts.push(part);
    }
  }
  return parts;
}

/**
 * The JSON rows of whole stored batches: prepared ones from the cache (or
 * under way there), the others encoded now, and kept only by a preparation.
 */
async function cachedJsonParts(plan: ChunkPlan, { first, end }: StoredBatches): Promise<Uint8Array[]> {
  const { starts } = plan.selection;
  const batches: Array<Promise<Uint8Array>> = [];
  for (let k = first; k < end; k++) {
    const chunk = { start: starts[k], end: starts[k + 1] };
    const encode = () => encodeAnywhere(plan, chunk, plan.table, plan.columns).then((parts) => (parts.length === 1 ? parts[0] : concatParts(parts)));
    batches.push(plan.encodedCache!.jsonBatch(plan.body, k, encode, plan.preparing ? plan.signal : undefined));
  }
  return joinRows([], await Promise.all(batches));
}

/** Appends the JSON rows of whole batches to `parts`, a separator between non-empty ones; returns `parts`. */
function joinRows(parts: Uint8Array[], batches: readonly Uint8Array[]): Uint8Array[] {
  for (const rows of batches) {
    if (rows.byteLength === 0) continue;
    if (parts.length > 0) parts.push(ROW_SEPARATOR);
    parts.push(rows);
  }
  return parts;
}

/** The chunk's messages from cached compressed columns, compressing (once) those not cached yet. */
async function cachedCompressedParts(plan: ChunkPlan, { codec, first, end }: StoredBatches<IpcCodec>): Promise<Uint8Array[]> {
  const { starts, indices } = plan.selection;
  const messages: Array<Promise<Uint8Array[]>> = [];
  for (let k = first; k < end; k++) {
    const chunk = { start: starts[k], end: starts[k + 1] };
    const compress = (missing: readonly number[]) => compressColumns(plan, k, chunk, missing);
    messages.push(
      plan
        .encodedCache!.columns(plan.body, codec, k, indices, compress, plan.preparing ? plan.signal : undefined)
        .then((columns) => compressedColumnsMessage(chunk.end - chunk.start, columns, codec)),
    );
  }
  return (await Promise.all(messages)).flat();
}

/**
 * Compresses columns `fields` (body field indices) of stored batch `k`, where
 * any other chunk would be encoded (a worker for a whole batch), and splits
 * the message back into columns. The message also holds `_row_id` (every
 * projection does); it is kept when it was asked for.
 */
async function compressColumns(plan: ChunkPlan, k: number, chunk: RowChunk, fields: readonly number[]): Promise<CompressedColumn[]> {
  const body = plan.body.table;
  const projection = selectionPlanOf(
    body,
    fields.map((i) => body.schema.fields[i].name),
  );
  const names = projection.fields.map((f) => f.name);
  const projected = projectColumns(body, names);
  // Not cancelled with the transfer that started it: other transfers of the body may be waiting on
  // this compression (encoded-batch-cache.ts), and a hang-up must not cut them. Finishing it
  // costs one batch's compression, which the cache keeps for the next fetch anyway. A preparation
  // does stop with its signal: a transfer that joined it compresses again (encoded-batch-cache.ts).
  const parts = await encodeAnywhere({ ...plan, signal: plan.preparing ? plan.signal : undefined }, chunk, projected, names);
  // A worker's answer is already one buffer (transferred): keep it, do not copy it.
  const message = parts.length === 1 ? parts[0] : concatParts(parts);
  const columns = splitCompressedColumns(
    message,
    projection.indices.map((i) => body.batches[k].getChildAt(i)!),
  );
  return fields.map((field) => columns[projection.indices.indexOf(field)]);
}

/** Between the rows of two chunks. */
const ROW_SEPARATOR = Buffer.of(JSON_ROW_SEPARATOR);

function opening(plan: ChunkPlan): Uint8Array {
  return plan.format.kind === 'json' ? JSON_BODY_OPEN : schemaMessage(plan.table.schema);
}

function closing(plan: ChunkPlan): Uint8Array {
  if (plan.format.kind !== 'json') return END_OF_STREAM;
  let rows = 0;
  for (const chunk of plan.chunks) rows += chunkLength(chunk);
  return Buffer.from(
    jsonBodyClose(
      rows,
      plan.table.schema.fields.map((f) => f.name),
    ),
  );
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
  const flush = () => {
    if (smallBytes > 0) out.push(Buffer.concat(small, smallBytes));
    small = [];
    smallBytes = 0;
  };
  for (const part of parts) {
    if (part.byteLength >= WRITE_AS_IS_BYTES) {
      flush();
      out.push(part);
    } else {
      small.push(part);
      smallBytes += part.byteLength;
      if (smallBytes >= WRITE_AS_IS_BYTES) flush();
    }
  }
  flush();
  return out;
}

/**
 * A compressing stream for `encoding` (JSON only: Arrow bodies compress their
 * buffers inside the IPC stream, and two layers would only cost CPU). Levels
 * favour throughput: this runs on the main thread over bodies of many
 * megabytes (brotli's default quality 11 would cost seconds).
 */
function createEncoder(encoding: ContentEncoding): Transform {
  if (encoding === 'gzip') return createGzip({ level: 4 });
  return createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
}
