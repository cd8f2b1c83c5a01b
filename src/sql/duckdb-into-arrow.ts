/**
 * A DuckDB result as Arrow record batches: the result's data chunks read
 * vector by vector into growing column buffers (one copy per vector for
 * fixed-width values and null masks, the string bytes copied as they are,
 * never decoded), cut into record batches of {@link BATCH_ROWS} rows.
 * Counts the bytes it has made as it goes and stops at a limit, so a result
 * larger than the store could hold is refused before it is all in memory.
 */
import { BufferType, Data, Field, RecordBatch, Schema, Struct, makeData, type DataType } from 'apache-arrow';
import type { Buffers } from 'apache-arrow/data';
import type { DuckDBDataChunk } from '@duckdb/node-api';
import type { Vector as DuckDBVectorHandle } from '@duckdb/node-bindings';
import { S2SPError } from '../errors.js';
import type { ColumnType } from './column-types.js';
import type { DuckDB } from './duckdb-package.js';
import { resizeIntegers } from './resize-integers.js';

/** Rows per record batch of a result (DuckDB's chunks are 2,048 rows: too small a batch for the data plane). */
export const BATCH_ROWS = 65_536;

/** One result column: its name, type, and place among the engine's result columns. */
export interface ResultColumn {
  name: string;
  type: ColumnType;
  index: number;
}

/** Reads a result's chunks into record batches. */
export class ResultBatches {
  readonly schema: Schema;
  readonly #duck: DuckDB;
  readonly #builders: ColumnBuilder[];
  readonly #indexes: number[];
  readonly #maxBytes: number;
  readonly #batches: RecordBatch[] = [];
  #rows = 0;
  #bytes = 0;

  /** @param maxBytes the result may hold at most this many bytes of column buffers */
  constructor(duck: DuckDB, columns: readonly ResultColumn[], maxBytes: number) {
    this.#duck = duck;
    this.#maxBytes = maxBytes;
    this.schema = new Schema(columns.map((column) => new Field(column.name, column.type.arrow, true)));
    this.#builders = columns.map((column) => new ColumnBuilder(column.type));
    this.#indexes = columns.map((column) => column.index);
  }

  /**
   * Takes one data chunk of the result.
   * @throws S2SPError `S2SP_ERR_QUERY_TOO_LARGE` once the result outgrows its byte limit;
   *   `S2SP_ERR_QUERY_TYPE_UNSUPPORTED` for a HUGEINT beyond Decimal(38, 0)
   */
  add(chunk: DuckDBDataChunk): void {
    const count = chunk.rowCount;
    for (let c = 0; c < this.#builders.length; c++) {
      const vector = this.#duck.bindings.data_chunk_get_vector(chunk.chunk, this.#indexes[c]);
      this.#bytes += this.#builders[c].append(this.#duck, vector, count, this.schema.fields[c].name);
    }
    this.#rows += count;
    if (this.#bytes > this.#maxBytes) throw new S2SPError('S2SP_ERR_QUERY_TOO_LARGE', { problem: 'result', limitBytes: this.#maxBytes });
    if (this.#rows >= BATCH_ROWS) this.#cut();
  }

  /** The record batches of every chunk taken (an empty result gives one batch of no rows). */
  finish(): RecordBatch[] {
    if (this.#rows > 0 || this.#batches.length === 0) this.#cut();
    return this.#batches;
  }

  #cut(): void {
    const children = this.#builders.map((builder) => builder.finish(this.#rows));
    const struct = makeData({ type: new Struct(this.schema.fields), length: this.#rows, nullCount: 0, children });
    this.#batches.push(new RecordBatch(this.schema, struct));
    this.#rows = 0;
  }
}

/** A growing byte buffer. */
class Bytes {
  buffer = new Uint8Array(1024);
  length = 0;

  /** Room for `more` bytes at `length`; the caller writes, then advances `length`. */
  reserve(more: number): Uint8Array {
    if (this.length + more > this.buffer.length) {
      const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + more));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    return this.buffer;
  }

  push(bytes: Uint8Array): void {
    this.reserve(bytes.length).set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes written, copied out, and the buffer emptied. */
  take(): Uint8Array {
    const out = this.buffer.slice(0, this.length);
    this.clear();
    return out;
  }

  /** Empties the buffer; zeroed, since bits are ORed into it. */
  clear(): void {
    this.buffer.fill(0, 0, this.length);
    this.length = 0;
  }
}

/** One result column under construction. */
class ColumnBuilder {
  readonly #type: ColumnType;
  readonly #values = new Bytes();
  readonly #offsets: number[] = [0];
  readonly #validity = new Bytes();
  #rows = 0;
  #nulls = 0;

  constructor(type: ColumnType) {
    this.#type = type;
  }

  /** Appends a vector's `count` values; returns the bytes it added. */
  append(duck: DuckDB, vector: DuckDBVectorHandle, count: number, column: string): number {
    const { bindings } = duck;
    const storage = this.#type.storage;
    const before = this.#values.length + this.#validity.length;
    // DuckDB's null mask, read once for the column's values and its own: null when every row is valid.
    const mask = storage.kind === 'null' ? undefined : bindings.vector_get_validity(vector, Math.ceil(count / 64) * 8);
    const valid = (i: number): boolean => mask === null || (mask !== undefined && ((mask[i >> 3] >> (i & 7)) & 1) === 1);
    switch (storage.kind) {
      case 'fixed':
        this.#values.push(bindings.vector_get_data(vector, count * storage.bytes));
        break;
      case 'decimal':
        this.#values.push(resizeIntegers(bindings.vector_get_data(vector, count * storage.duckdbBytes), count, storage.duckdbBytes, storage.arrowBytes));
        break;
      case 'hugeint': {
        const bytes = bindings.vector_get_data(vector, count * 16);
        checkDecimal38(bytes, count, storage.signed, column, valid);
        this.#values.push(bytes);
        break;
      }
      case 'bool': {
        const bytes = bindings.vector_get_data(vector, count);
        const out = this.#values.reserve(Math.ceil((this.#rows + count) / 8) - this.#values.length);
        for (let i = 0, bit = this.#rows; i < count; i++, bit++) if (bytes[i] !== 0) out[bit >> 3] |= 1 << (bit & 7);
        this.#values.length = Math.ceil((this.#rows + count) / 8);
        break;
      }
      case 'bytes':
        this.#appendStrings(duck, vector, count, valid);
        break;
      case 'null':
        break;
    }
    this.#appendValidity(count, valid);
    this.#rows += count;
    return this.#values.length + this.#validity.length - before + (storage.kind === 'bytes' ? count * 4 : 0);
  }

  /** The column's data for the rows appended since the last call, and the builder emptied. */
  finish(length: number): Data {
    const type = this.#type.arrow as DataType;
    const nullCount = this.#nulls;
    const nullBitmap = nullCount === 0 ? undefined : this.#validity.take();
    this.#validity.clear();
    this.#rows = 0;
    this.#nulls = 0;
    const storage = this.#type.storage;
    if (storage.kind === 'null') return new Data(type, 0, length, length);
    const bytes = this.#values.take();
    const buffers: Partial<Buffers<DataType>> = { [BufferType.VALIDITY]: nullBitmap };
    if (storage.kind === 'bytes') {
      buffers[BufferType.OFFSET] = Int32Array.from(this.#offsets);
      buffers[BufferType.DATA] = bytes;
      this.#offsets.length = 1;
    } else {
      // The type's own array (Int32Array, BigInt64Array, Uint32Array for decimals, ...) over the copied bytes.
      const ArrayType = (type as unknown as { ArrayType: new (buffer: ArrayBuffer) => DataType['TArray'] }).ArrayType;
      buffers[BufferType.DATA] = storage.kind === 'bool' ? bytes : new ArrayType(bytes.buffer as ArrayBuffer);
    }
    return new Data(type, 0, length, nullCount, buffers);
  }

  /** duckdb_string_t: 4 bytes of length, then the bytes inline (12 or fewer) or a prefix and a pointer. */
  #appendStrings(duck: DuckDB, vector: DuckDBVectorHandle, count: number, valid: (i: number) => boolean): void {
    const { bindings } = duck;
    const structs = bindings.vector_get_data(vector, count * 16);
    const view = new DataView(structs.buffer, structs.byteOffset, structs.byteLength);
    for (let i = 0; i < count; i++) {
      if (valid(i)) {
        const length = view.getUint32(i * 16, true);
        const at = structs.byteOffset + i * 16;
        this.#values.push(
          length <= 12 ? structs.subarray(i * 16 + 4, i * 16 + 4 + length) : bindings.get_data_from_pointer(structs.buffer as ArrayBuffer, at + 8, length),
        );
      }
      this.#offsets.push(this.#values.length);
    }
  }

  /** The vector's validity appended bit by bit after the rows taken so far. */
  #appendValidity(count: number, valid: (i: number) => boolean): void {
    const start = this.#rows;
    const bytesAfter = Math.ceil((start + count) / 8);
    const out = this.#validity.reserve(bytesAfter - this.#validity.length);
    for (let i = 0, bit = start; i < count; i++, bit++) {
      if (valid(i)) out[bit >> 3] |= 1 << (bit & 7);
      else this.#nulls++;
    }
    this.#validity.length = bytesAfter;
  }
}

const DECIMAL38_MAX = 10n ** 38n - 1n;

/**
 * HUGEINT's range is wider than Decimal(38, 0)'s (10^38 - 1): a value
 * beyond it is refused, naming the column, rather than sent wrong. Only
 * values whose high word is large need the exact check; null rows hold no
 * value (their bytes are whatever the vector had), so they are not read.
 */
function checkDecimal38(bytes: Uint8Array, count: number, signed: boolean, column: string, valid: (i: number) => boolean): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < count; i++) {
    if (!valid(i)) continue;
    const high = signed ? view.getBigInt64(i * 16 + 8, true) : view.getBigUint64(i * 16 + 8, true);
    // |value| < 2^126 < 10^38 whenever the high word is within +-2^62.
    if (high < 1n << 62n && high >= -(1n << 62n)) continue;
    const value = (high << 64n) | view.getBigUint64(i * 16, true);
    if (value > DECIMAL38_MAX || value < -DECIMAL38_MAX) {
      throw new S2SPError('S2SP_ERR_QUERY_TYPE_UNSUPPORTED', { problem: 'hugeintRange', column });
    }
  }
}
