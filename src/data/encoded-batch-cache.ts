/**
 * Encoded forms of cached bodies' stored batches, kept for the next
 * response: the compressed buffers of each column (Arrow IPC compresses each
 * body buffer on its own, so a response of whole stored batches, every full
 * fetch and every projection of one, is assembled from buffers an earlier
 * response or the think-time preparation compressed), and the JSON rows of
 * whole batches that preparation wrote. Each column of each stored batch is
 * compressed at most once per codec, also when two responses ask for it at
 * the same time.
 *
 * Bounded in bytes, least recently used body first, and counted in the
 * store's byte budget when the store shares it (cache/body-store.ts,
 * BudgetShare; a put that needs the room takes it back from here first). A
 * body's entries are dropped once the body itself is garbage (the store let
 * go of it), or by {@link EncodedBatchCache.delete}, or after a transfer once
 * the store no longer holds the body ({@link EncodedBatchCache.dropUnlessHeld}):
 * the eviction policy lives here, not in the route. A dropped body's
 * {@link EncodedBatchCache.signalFor} aborts, which cancels its preparation.
 */
import { nonNegativeOption, optionsObject } from '../option-checks.js';
import type { BodyStore, BudgetShare } from '../cache/body-store.js';
import type { CompressedColumn } from '../ipc/compression/compressed-columns.js';
import type { IpcCodec } from '../protocol/media-types.js';

/** Compresses the columns `fields` (body field indices) of one stored batch; resolves in the same order. */
export type ColumnCompressor = (fields: readonly number[]) => Promise<CompressedColumn[]>;

/** What {@link EncodedBatchCache.dropUnlessHeld} asks of a body store (a BodyStore is one). */
export type BodyHolder = Pick<BodyStore, 'holdsBody' | 'has'>;

/** Options of {@link EncodedBatchCache}. */
export interface EncodedBatchCacheOptions {
  /** Bytes of encoded batches kept over all bodies (default 512 MiB). */
  maxBytes?: number;
}

/**
 * Default bound of an {@link EncodedBatchCache}: 512 MiB, room for one 1M-row
 * x 10-column body's JSON (188 MB) and its LZ4 and ZSTD buffers at once.
 */
export const DEFAULT_ENCODED_CACHE_BYTES = 512 * 1024 * 1024;

/** What one key holds: a compressed column, or one batch's JSON rows. */
type Encoded = CompressedColumn | Uint8Array;

interface BodyEntry {
  ref: WeakRef<object>;
  /** `codec:batch:field` or `json:batch` -> what is kept, or the encoding under way. */
  items: Map<string, Encoded | Promise<Encoded>>;
  bytes: number;
  /** Aborted when the entry is dropped, or had no room for what it was to keep: work for it (preparation) stops. */
  readonly stopped: AbortController;
}

/** Counters, for tests and metrics. */
export interface EncodedBatchCacheStats {
  readonly bodies: number;
  readonly bytes: number;
  readonly maxBytes: number;
  /** Columns compressed and kept so far (each one once per body, batch and codec while it stays cached). */
  readonly compressedColumns: number;
  /** Batches of JSON rows kept so far. */
  readonly jsonBatches: number;
}

/** Encoded batches of cached bodies; see the file comment. */
export class EncodedBatchCache {
  readonly maxBytes: number;
  readonly #bodies = new Map<string, BodyEntry>();
  readonly #finalizer = new FinalizationRegistry<string>((id) => this.#collected(id));
  #budget: BudgetShare | undefined;
  #bytes = 0;
  #compressedColumns = 0;
  #jsonBatches = 0;

  constructor(options: EncodedBatchCacheOptions = {}) {
    this.maxBytes = nonNegativeOption(optionsObject(options).maxBytes, 'maxBytes') ?? DEFAULT_ENCODED_CACHE_BYTES;
  }

  /**
   * Counts what this cache keeps in `store`'s byte budget from now on, when
   * the store shares it: a column or batch that does not fit is served but
   * not kept, and a put short of room takes bodies' entries back (least
   * recently used first). Ended by {@link close}.
   */
  shareBudgetOf(store: Pick<BodyStore, 'shareBudget'>): void {
    this.#budget?.close();
    this.#budget = store.shareBudget?.((bytes) => this.#reclaim(bytes));
    if (this.#budget !== undefined && this.#bytes > 0 && !this.#budget.take(this.#bytes)) this.clear();
  }

  /**
   * The compressed columns `fields` of stored batch `batch` of `body`, in
   * that order: from the cache, or through `compress` (one call for all the
   * missing ones). A failed compression is not cached; one that was
   * cancelled (a preparation stopped) is done again through `compress`,
   * unless the caller is that preparation.
   * @param body the cached body (its `id` keys the entry; the object itself tells when it is gone)
   * @param preparation set when the caller is a preparation, which this signal stops
   */
  async columns(
    body: { readonly id: string },
    codec: IpcCodec,
    batch: number,
    fields: readonly number[],
    compress: ColumnCompressor,
    preparation?: AbortSignal,
  ): Promise<CompressedColumn[]> {
    const entry = this.#entryFor(body);
    const keyOf = (field: number) => `${codec}:${batch}:${field}`;
    const missing = fields.filter((field) => !entry.items.has(keyOf(field)));
    if (missing.length > 0) {
      const compressing = compress(missing);
      missing.forEach((field, i) =>
        this.#encoding(
          body.id,
          entry,
          keyOf(field),
          compressing.then((columns) => columns[i]),
        ),
      );
    }
    const again = (field: number) => () => this.columns(body, codec, batch, [field], compress).then(([column]) => column);
    const joined = fields.map((field) => this.#joined(entry.items.get(keyOf(field))!, preparation === undefined ? again(field) : undefined));
    return Promise.all(joined) as Promise<CompressedColumn[]>;
  }

  /**
   * The JSON rows of stored batch `batch` of `body`: kept ones, or the
   * encoding under way (prepared), or else `encode`'s, which is kept only for
   * a preparation (a fetch's own JSON is not worth its memory). A fetch that
   * joined a preparation that was stopped encodes through `encode`.
   * @param preparation set when the caller is a preparation, which this signal stops
   */
  jsonBatch(body: { readonly id: string }, batch: number, encode: () => Promise<Uint8Array>, preparation?: AbortSignal): Promise<Uint8Array> {
    const key = `json:${batch}`;
    const keep = preparation !== undefined;
    const entry = keep ? this.#entryFor(body) : this.#bodies.get(body.id);
    const found = entry?.items.get(key);
    if (found !== undefined) return this.#joined(found, keep ? undefined : encode) as Promise<Uint8Array>;
    if (!keep) return encode();
    return this.#encoding(body.id, entry!, key, encode()) as Promise<Uint8Array>;
  }

  /**
   * The columns `fields` of stored batch `batch` of `body` when every one of
   * them is compressed and kept already, else undefined (nothing is
   * compressed). Counts as a use of the body.
   */
  peek(body: { readonly id: string }, codec: IpcCodec, batch: number, fields: readonly number[]): CompressedColumn[] | undefined {
    const found = this.#peek(
      body,
      fields.map((field) => `${codec}:${batch}:${field}`),
    );
    return found as CompressedColumn[] | undefined;
  }

  /** The JSON rows of stored batches `first` to `end` (exclusive) of `body` when every one is kept, else undefined. */
  peekJson(body: { readonly id: string }, first: number, end: number): Uint8Array[] | undefined {
    const keys: string[] = [];
    for (let k = first; k < end; k++) keys.push(`json:${k}`);
    return this.#peek(body, keys) as Uint8Array[] | undefined;
  }

  /** Aborted once `body`'s entry is dropped or has no room for more: work to keep for it should stop. */
  signalFor(body: { readonly id: string }): AbortSignal {
    return this.#entryFor(body).stopped.signal;
  }

  /**
   * The eviction policy after a transfer of the body consumed its token: the
   * entries help only a later fetch of the body (any token sharing it), so
   * once its store let the body go, keeping them only costs memory and
   * garbage collections. A store that cannot tell which bodies it holds is
   * asked about `token`: it loses reuse then, not data. Cheap when nothing
   * of the body is kept (every commit calls this).
   */
  dropUnlessHeld(bodyId: string, store: BodyHolder, token: string): void {
    if (!this.#bodies.has(bodyId)) return;
    if (store.holdsBody !== undefined) {
      if (!store.holdsBody(bodyId)) this.delete(bodyId);
    } else
      void store.has(token).then(
        (alive) => alive || this.delete(bodyId),
        () => {},
      );
  }

  /** Drops one body's entries. */
  delete(bodyId: string): void {
    const entry = this.#bodies.get(bodyId);
    if (entry === undefined) return;
    this.#bodies.delete(bodyId);
    this.#release(entry.bytes);
    entry.stopped.abort();
  }

  /** Drops everything. */
  clear(): void {
    for (const id of [...this.#bodies.keys()]) this.delete(id);
  }

  /** Drops everything and ends the budget share. */
  close(): void {
    this.clear();
    this.#budget?.close();
    this.#budget = undefined;
  }

  stats(): EncodedBatchCacheStats {
    return {
      bodies: this.#bodies.size,
      bytes: this.#bytes,
      maxBytes: this.maxBytes,
      compressedColumns: this.#compressedColumns,
      jsonBatches: this.#jsonBatches,
    };
  }

  /** Records `encoding` as the value under way for `key`, kept once it resolves; a failure is forgotten. */
  #encoding(bodyId: string, entry: BodyEntry, key: string, encoding: Promise<Encoded>): Promise<Encoded> {
    const one = encoding.then((encoded) => {
      if (entry.items.get(key) === one) this.#keep(bodyId, entry, key, encoded);
      return encoded;
    });
    // A failure is the caller's to see; the entry just forgets it.
    one.catch(() => {
      if (entry.items.get(key) === one) entry.items.delete(key);
    });
    entry.items.set(key, one);
    return one;
  }

  /**
   * `found`, or when it is an encoding that was cancelled (its preparation
   * stopped), `again`'s. A preparation passes no `again`: its own encodings
   * stop with it (retrying under its stopped signal would fail again, and
   * again, in a loop of microtasks that starves the event loop).
   */
  #joined(found: Encoded | Promise<Encoded>, again: (() => Promise<Encoded>) | undefined): Promise<Encoded> {
    if (!(found instanceof Promise)) return Promise.resolve(found);
    if (again === undefined) return found;
    return found.catch((error: unknown) => {
      if ((error as Error | undefined)?.name === 'AbortError') return again();
      throw error;
    });
  }

  #peek(body: { readonly id: string }, keys: readonly string[]): Encoded[] | undefined {
    const entry = this.#bodies.get(body.id);
    if (entry === undefined) return undefined;
    const out: Encoded[] = [];
    for (const key of keys) {
      const found = entry.items.get(key);
      if (found === undefined || found instanceof Promise) return undefined;
      out.push(found);
    }
    this.#entryFor(body);
    return out;
  }

  #entryFor(body: { readonly id: string }): BodyEntry {
    let entry = this.#bodies.get(body.id);
    if (entry === undefined) {
      entry = { ref: new WeakRef(body), items: new Map(), bytes: 0, stopped: new AbortController() };
      this.#finalizer.register(body, body.id);
    } else {
      this.#bodies.delete(body.id); // re-inserted below: most recently used last
      if (entry.ref.deref() !== body) {
        // The same body as another object (a store may hand out a fresh one per lease).
        entry.ref = new WeakRef(body);
        this.#finalizer.register(body, body.id);
      }
    }
    this.#bodies.set(body.id, entry);
    return entry;
  }

  #keep(bodyId: string, entry: BodyEntry, key: string, encoded: Encoded): void {
    const bytes = byteLengthOf(encoded);
    const dropped = this.#bodies.get(bodyId) !== entry;
    if (dropped || !this.#make(bodyId, bytes)) {
      // Dropped while encoding, or no room (this body alone is over the bounds, or the budget is
      // spent): served, not kept, and what works to keep more for this body stops.
      entry.items.delete(key);
      entry.stopped.abort();
      return;
    }
    entry.items.set(key, encoded);
    entry.bytes += bytes;
    if (encoded instanceof Uint8Array) this.#jsonBatches++;
    else this.#compressedColumns++;
  }

  /** Makes room for `bytes` more (other bodies first out, least recently used first); false when there is none. */
  #make(bodyId: string, bytes: number): boolean {
    for (const id of [...this.#bodies.keys()]) {
      if (this.#bytes + bytes <= this.maxBytes) break;
      if (id !== bodyId) this.delete(id);
    }
    if (this.#bytes + bytes > this.maxBytes) return false;
    if (this.#budget !== undefined && !this.#budget.take(bytes)) return false;
    this.#bytes += bytes;
    return true;
  }

  #release(bytes: number): void {
    this.#bytes -= bytes;
    this.#budget?.give(bytes);
  }

  /** Memory pressure: gives back at least `bytes` (least recently used bodies first), as far as it holds them. */
  #reclaim(bytes: number): number {
    const before = this.#bytes;
    for (const id of [...this.#bodies.keys()]) {
      if (before - this.#bytes >= bytes) break;
      this.delete(id);
    }
    return before - this.#bytes;
  }

  #collected(bodyId: string): void {
    const entry = this.#bodies.get(bodyId);
    if (entry !== undefined && entry.ref.deref() === undefined) this.delete(bodyId);
  }
}

function byteLengthOf(encoded: Encoded): number {
  if (encoded instanceof Uint8Array) return encoded.byteLength;
  let bytes = 0;
  for (const buffer of encoded.buffers) bytes += buffer.byteLength;
  return bytes;
}
