/**
 * Loads Arrow record batches into a DuckDB table: each batch cut into data
 * chunks of DuckDB's vector size, each column written into its vector whole
 * (one copy for fixed-width values and for the null mask when Arrow's is
 * byte-aligned; strings and blobs of up to 12 bytes, which DuckDB keeps
 * inline, in the same copy; a call per longer value, whose bytes DuckDB
 * copies into its own heap), then the chunk appended. No JS value is made
 * for a number, a date or a decimal on the way.
 */
import { Type, makeVector, type Data, type RecordBatch } from 'apache-arrow';
import type { DuckDBAppender, DuckDBType } from '@duckdb/node-api';
import type { Vector as DuckDBVectorHandle } from '@duckdb/node-bindings';
import type { ColumnStorage } from './column-types.js';
import type { DuckDB } from './duckdb-package.js';
import { resizeIntegers } from './resize-integers.js';

/** Bytes of DuckDB's duckdb_string_t, and of the string it holds inline. */
const STRING_STRUCT_BYTES = 16;
const INLINE_STRING_BYTES = 12;

/** One loaded column: where it goes and how its bytes are laid out. */
export interface LoadColumn {
  /** The DuckDB type of the table's column (the appender's). */
  type: DuckDBType;
  storage: ColumnStorage;
}

/**
 * Appends every row of `batches` through `appender`.
 * @param columns one per batch column, in order
 * @param stopped checked between chunks: true ends the load early (the query's time is up, or it was cancelled)
 */
export async function appendBatches(
  duck: DuckDB,
  appender: DuckDBAppender,
  columns: readonly LoadColumn[],
  batches: AsyncIterable<RecordBatch>,
  stopped: () => boolean,
): Promise<void> {
  const { api, bindings } = duck;
  const chunkRows = bindings.vector_size();
  const types = columns.map((column) => column.type);
  for await (const batch of batches) {
    for (let start = 0; start < batch.numRows; start += chunkRows) {
      if (stopped()) return;
      const count = Math.min(chunkRows, batch.numRows - start);
      const chunk = api.DuckDBDataChunk.create(types, count);
      for (let c = 0; c < columns.length; c++) {
        const data = batch.getChildAt(c)!.data[0];
        writeColumn(duck, bindings.data_chunk_get_vector(chunk.chunk, c), data, start, count, columns[c].storage);
      }
      appender.appendDataChunk(chunk);
    }
  }
}

/** Writes rows `start .. start + count` of `data` into `vector`. */
function writeColumn(duck: DuckDB, vector: DuckDBVectorHandle, data: Data, start: number, count: number, storage: ColumnStorage): void {
  const { bindings } = duck;
  switch (storage.kind) {
    case 'fixed': {
      // arrow-js slices fixed-width values with the Data, so value i sits at i * bytes.
      const values = data.values as ArrayBufferView;
      const from = values.byteOffset + start * storage.bytes;
      bindings.copy_data_to_vector(vector, 0, values.buffer as ArrayBuffer, from, count * storage.bytes);
      break;
    }
    case 'decimal': {
      const words = data.values as ArrayBufferView;
      const wide = new Uint8Array(words.buffer, words.byteOffset + start * storage.arrowBytes, count * storage.arrowBytes);
      const out = resizeIntegers(wide, count, storage.arrowBytes, storage.duckdbBytes);
      bindings.copy_data_to_vector(vector, 0, out.buffer as ArrayBuffer, 0, out.byteLength);
      break;
    }
    case 'bool': {
      const bits = data.values as Uint8Array;
      const out = new Uint8Array(count);
      for (let i = 0, bit = data.offset + start; i < count; i++, bit++) out[i] = (bits[bit >> 3] >> (bit & 7)) & 1;
      bindings.copy_data_to_vector(vector, 0, out.buffer, 0, count);
      break;
    }
    case 'bytes':
      writeBytes(duck, vector, data, start, count);
      break;
    default:
      // 'hugeint' and 'null' are result types only: columnTypeOfArrow never loads one.
      break;
  }
  writeValidity(duck, vector, data, start, count);
}

/** Strings and blobs: DuckDB copies each value's bytes into the vector's heap. */
function writeBytes(duck: DuckDB, vector: DuckDBVectorHandle, data: Data, start: number, count: number): void {
  const { bindings } = duck;
  const typeId = data.type.typeId;
  if (typeId === Type.Utf8View || typeId === Type.BinaryView || typeId === Type.FixedSizeBinary) {
    // Views keep short values inline and long ones in side buffers, fixed-size binary has no offsets: arrow-js reads them.
    const view = makeVector(data);
    for (let i = 0; i < count; i++) {
      if (!data.getValid(start + i)) continue;
      const value = view.get(start + i) as string | Uint8Array;
      if (typeof value === 'string') bindings.vector_assign_string_element(vector, i, value);
      else bindings.vector_assign_string_element_len(vector, i, value);
    }
    return;
  }
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const bytes = data.values as Uint8Array;
  // DuckDB's duckdb_string_t is 16 bytes: the length, then up to 12 bytes inline, or a prefix and a
  // pointer into the vector's heap. Inline ones are written here and copied in with the vector; only
  // longer ones need the call that copies their bytes into the heap.
  const structs = new Uint8Array(count * STRING_STRUCT_BYTES);
  const lengths = new DataView(structs.buffer);
  const long: number[] = [];
  for (let i = 0; i < count; i++) {
    if (!data.getValid(start + i)) continue;
    const from = Number(offsets[start + i]);
    const length = Number(offsets[start + i + 1]) - from;
    if (length > INLINE_STRING_BYTES) {
      long.push(i);
      continue;
    }
    const at = i * STRING_STRUCT_BYTES;
    lengths.setUint32(at, length, true);
    for (let k = 0; k < length; k++) structs[at + 4 + k] = bytes[from + k];
  }
  bindings.copy_data_to_vector(vector, 0, structs.buffer, 0, structs.byteLength);
  for (const i of long) {
    const from = Number(offsets[start + i]);
    bindings.vector_assign_string_element_len(vector, i, bytes.subarray(from, Number(offsets[start + i + 1])));
  }
}

/** Copies Arrow's null mask (1 = valid, least significant bit first, as DuckDB's) when the column has nulls. */
function writeValidity(duck: DuckDB, vector: DuckDBVectorHandle, data: Data, start: number, count: number): void {
  // The test arrow-js's own getValid makes before it reads the mask.
  if (!data.nullable || data.nullCount === 0) return;
  const { bindings } = duck;
  bindings.vector_ensure_validity_writable(vector);
  const bitmap = data.nullBitmap;
  const first = data.offset + start;
  const byteCount = Math.ceil(count / 8);
  let mask: Uint8Array;
  if ((first & 7) === 0) {
    mask = bitmap.slice(first >> 3, (first >> 3) + byteCount);
  } else {
    mask = new Uint8Array(byteCount);
    for (let i = 0, bit = first; i < count; i++, bit++) mask[i >> 3] |= ((bitmap[bit >> 3] >> (bit & 7)) & 1) << (i & 7);
  }
  bindings.copy_data_to_vector_validity(vector, 0, mask.buffer as ArrayBuffer, mask.byteOffset, mask.byteLength);
}
