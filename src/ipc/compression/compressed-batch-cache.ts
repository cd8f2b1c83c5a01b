/**
 * Compressed buffers of cached bodies, kept for the next response: Arrow IPC
 * compresses each body buffer on its own, so a response of whole stored
 * batches (every full fetch, and every projection of one) can be assembled
 * from buffers compressed by an earlier response. Each column of each stored
 * batch is compressed at most once per codec, also when two responses ask
 * for it at the same time.
 *
 * Bounded in bytes, least recently used body first; a body's buffers are
 * dropped once the body itself is garbage (the store let go of it), or by
 * {@link CompressedBatchCache.delete}, or after a transfer once the store no
 * longer holds the body ({@link CompressedBatchCache.dropUnlessHeld}): the
 * eviction policy lives here, not in the route.
 */
import { nonNegativeOption, optionsObject } from '../../option-checks.js';
import type { FieldNode } from 'apache-arrow/ipc/metadata/message';
import type { IpcCodec } from '../../protocol/media-types.js';

/** One column of one stored record batch with its body buffers compressed. */
export interface CompressedColumn {
  /** The column's field nodes (itself, then its children depth first). */
  readonly nodes: readonly FieldNode[];
  /** Its body buffers in order, each `int64 length | frame` (or `-1 | raw`), unpadded. */
  readonly buffers: readonly Uint8Array[];
  readonly variadicBufferCounts: readonly number[];
}

/** Compresses the columns `fields` (body field indices) of one stored batch; resolves in the same order. */
export type ColumnCompressor = (fields: readonly number[]) => Promise<CompressedColumn[]>;

/** What {@link CompressedBatchCache.dropUnlessHeld} asks of a body store (cache/body-store.ts's BodyStore is one). */
export interface BodyHolder {
  /** True while the store holds body `bodyId` under any token; a store that cannot tell leaves it out. */
  holdsBody?(bodyId: string): boolean;
  /** True while `token` is alive. */
  has(token: string): Promise<boolean>;
}

/** Options of {@link CompressedBatchCache}. */
export interface CompressedBatchCacheOptions {
  /** Bytes of compressed buffers kept over all bodies (default 256 MiB). */
  maxBytes?: number;
}

/** Default budget of a {@link CompressedBatchCache}: 256 MiB. */
export const DEFAULT_COMPRESSED_CACHE_BYTES = 256 * 1024 * 1024;

interface BodyEntry {
  ref: WeakRef<object>;
  /** `codec:batch:field` -> the column, or the compression under way. */
  columns: Map<string, CompressedColumn | Promise<CompressedColumn>>;
  bytes: number;
}

/** Counters, for tests and metrics. */
export interface CompressedBatchCacheStats {
  readonly bodies: number;
  readonly bytes: number;
  readonly maxBytes: number;
  /** Columns compressed so far (each one once per body, batch and codec while it stays cached). */
  readonly compressedColumns: number;
}

/** Compressed buffers of stored batches, per body; see the file comment. */
export class CompressedBatchCache {
  readonly maxBytes: number;
  readonly #bodies = new Map<string, BodyEntry>();
  readonly #finalizer = new FinalizationRegistry<string>((id) => this.#collected(id));
  #bytes = 0;
  #compressedColumns = 0;

  constructor(options: CompressedBatchCacheOptions = {}) {
    this.maxBytes = nonNegativeOption(optionsObject(options).maxBytes, 'maxBytes') ?? DEFAULT_COMPRESSED_CACHE_BYTES;
  }

  /**
   * The compressed columns `fields` of stored batch `batch` of `body`, in
   * that order: from the cache, or through `compress` (one call for all the
   * missing ones). A failed compression is not cached.
   * @param body the cached body (its `id` keys the entry; the object itself tells when it is gone)
   */
  async columns(
    body: { readonly id: string },
    codec: IpcCodec,
    batch: number,
    fields: readonly number[],
    compress: ColumnCompressor,
  ): Promise<CompressedColumn[]> {
    const entry = this.#entryFor(body);
    const keyOf = (field: number) => `${codec}:${batch}:${field}`;
    const missing = fields.filter((field) => !entry.columns.has(keyOf(field)));
    if (missing.length > 0) {
      const compressing = compress(missing);
      missing.forEach((field, i) => {
        const key = keyOf(field);
        const one = compressing.then((columns) => {
          const column = columns[i];
          if (entry.columns.get(key) === one) this.#keep(body.id, entry, key, column);
          return column;
        });
        // A failure is the caller's to see (awaited below); the entry just forgets it.
        one.catch(() => {
          if (entry.columns.get(key) === one) entry.columns.delete(key);
        });
        entry.columns.set(key, one);
      });
    }
    return Promise.all(fields.map((field) => entry.columns.get(keyOf(field))!));
  }

  /**
   * The columns `fields` of stored batch `batch` of `body` when every one of
   * them is compressed and kept already, else undefined (nothing is
   * compressed). Counts as a use of the body.
   */
  peek(body: { readonly id: string }, codec: IpcCodec, batch: number, fields: readonly number[]): CompressedColumn[] | undefined {
    const entry = this.#bodies.get(body.id);
    if (entry === undefined) return undefined;
    const out: CompressedColumn[] = [];
    for (const field of fields) {
      const column = entry.columns.get(`${codec}:${batch}:${field}`);
      if (column === undefined || column instanceof Promise) return undefined;
      out.push(column);
    }
    this.#entryFor(body);
    return out;
  }

  /**
   * The eviction policy after a transfer of the body consumed its token: the
   * buffers help only a later fetch of the body (any token sharing it), so
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

  /** Drops one body's buffers. */
  delete(bodyId: string): void {
    const entry = this.#bodies.get(bodyId);
    if (entry === undefined) return;
    this.#bodies.delete(bodyId);
    this.#bytes -= entry.bytes;
  }

  /** Drops everything. */
  clear(): void {
    this.#bodies.clear();
    this.#bytes = 0;
  }

  stats(): CompressedBatchCacheStats {
    return { bodies: this.#bodies.size, bytes: this.#bytes, maxBytes: this.maxBytes, compressedColumns: this.#compressedColumns };
  }

  #entryFor(body: { readonly id: string }): BodyEntry {
    let entry = this.#bodies.get(body.id);
    if (entry === undefined) {
      entry = { ref: new WeakRef(body), columns: new Map(), bytes: 0 };
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

  #keep(bodyId: string, entry: BodyEntry, key: string, column: CompressedColumn): void {
    this.#compressedColumns++;
    let bytes = 0;
    for (const buffer of column.buffers) bytes += buffer.byteLength;
    entry.columns.set(key, column);
    if (this.#bodies.get(bodyId) !== entry) return; // dropped while compressing: serve it, keep nothing
    entry.bytes += bytes;
    this.#bytes += bytes;
    for (const id of [...this.#bodies.keys()]) {
      if (this.#bytes <= this.maxBytes) break;
      if (id !== bodyId) this.delete(id); // least recently used first
    }
    if (this.#bytes > this.maxBytes) {
      // This body alone is over the budget: this column is served but not kept.
      entry.columns.delete(key);
      entry.bytes -= bytes;
      this.#bytes -= bytes;
    }
  }

  #collected(bodyId: string): void {
    const entry = this.#bodies.get(bodyId);
    if (entry !== undefined && entry.ref.deref() === undefined) this.delete(bodyId);
  }
}
