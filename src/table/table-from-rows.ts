/**
 * Rows (plain JSON objects) to an Arrow Table with `_row_id` first.
 *
 * Two passes, column-major in the second: pass one finds the columns in
 * first-seen order and infers each one's kind (column-kind.ts); pass two
 * writes each column straight into typed arrays and hands them to `makeData`.
 * This skips arrow-js's generic builders, which dominate `tableFromJSON`'s
 * time on wide string columns.
 */
import { Bool, Field, Float64, Int32, Int64, Null, Uint64, RecordBatch, Schema, Struct, Table, Utf8, makeData, type Data } from 'apache-arrow';
import type { DataProps } from 'apache-arrow/data';
import { S2SPError } from '../errors.js';
import { ColumnKind, ColumnObserver } from './column-kind.js';
import { stringifyJsonExact } from '../json/exact-json.js';
import { WholeFloat } from '../json/whole-float.js';
import { isWellFormedText } from './carriable-types.js';
import { jsonField } from '../json/json-text-field.js';
import { ROW_ID_FIELD, rowIdData } from './with-row-ids.js';
import { ROW_ID } from '../protocol/row-id.js';

type Row = Record<string, unknown>;

/** Largest byte length a Utf8 column's Int32 offsets can address. */
const MAX_UTF8_BYTES = 0x7fffffff;

/** Options of {@link tableFromRows}. */
export interface TableFromRowsOptions {
  /**
   * `false` (default): `_row_id` is the row's position and any incoming
   * `_row_id` key is ignored (a resource tool's rows). `true`: every row must
   * carry an integer `_row_id`, which is kept (rows fetched from a body).
   */
  preserveRowIds?: boolean;
  /**
   * The columns in their source's first-seen order, when a row's own key
   * order is not it (a JS object lists `"10"` before `"b"`) or when no row
   * holds some of them (a CSV header without records). They come first, in
   * this order; a column no row holds is Null.
   */
  columns?: readonly string[];
}

/**
 * Converts rows to an Arrow Table: `_row_id` (Int32) first, then every column
 * in first-seen order. A key a row lacks becomes null.
 *
 * @param rows an array of plain objects
 * @throws S2SPError `S2SP_ERR_TABLE_INVALID` when an element is not a plain object,
 *   or, with `preserveRowIds`, lacks an integer `_row_id`
 */
export function tableFromRows(rows: readonly unknown[], options: TableFromRowsOptions = {}): Table {
  const observers = observeColumns(rows, options.columns);
  const n = rows.length;
  const rowIds = options.preserveRowIds ? rowIdsFromRows(rows as readonly Row[]) : rowIdData(0, n);
  const columns = observers.map((observer) => {
    const read = cellReader(observer.name);
    return { observer, cell: (i: number) => read((rows as readonly Row[])[i]) };
  });
  return tableFromColumns(rowIds, n, columns);
}

/** One column of {@link tableFromColumns}: what it held, and its i-th cell (undefined: missing). */
export interface ObservedColumn {
  observer: ColumnObserver;
  cell: (i: number) => unknown;
}

/**
 * Builds the Table from columns already observed, `_row_id` first: the
 * second pass of {@link tableFromRows}, apart so a reader that gathers its
 * values column by column (the consumer's streamed JSON body) need not keep
 * row objects.
 *
 * @param rowIds the `_row_id` column
 * @param n the row count
 * @param columns every other column, in order
 * @throws S2SPError `S2SP_ERR_TABLE_TOO_LARGE` when a text column passes 2 GiB
 */
export function tableFromColumns(rowIds: Data<Int32>, n: number, columns: readonly ObservedColumn[]): Table {
  const fields: Field[] = [ROW_ID_FIELD];
  const children: Data[] = [rowIds];
  for (const { observer, cell } of columns) {
    const built = buildColumn(n, cell, observer);
    fields.push(built.field);
    children.push(built.data);
  }
  const schema = new Schema(fields);
  const data = makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children });
  return new Table(schema, [new RecordBatch(schema, data)]);
}

function observeColumns(rows: readonly unknown[], columns: readonly string[] = []): ColumnObserver[] {
  const byName = new Map<string, ColumnObserver>();
  const ordered: ColumnObserver[] = [];
  for (const name of columns) {
    if (name === ROW_ID || byName.has(name)) continue;
    if (!isWellFormedText(name)) throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'loneSurrogateName', column: name });
    const observer = new ColumnObserver(name);
    byName.set(name, observer);
    ordered.push(observer);
  }
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'rowNotObject', index: r });
    }
    for (const key in row) {
      if (key === ROW_ID) continue;
      let observer = byName.get(key);
      if (observer === undefined) {
        // Refused here too, not only when cached: sync mode caches nothing.
        if (!isWellFormedText(key)) throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'loneSurrogateName', column: key });
        observer = new ColumnObserver(key);
        byName.set(key, observer);
        ordered.push(observer);
      }
      observer.observe((row as Row)[key]);
    }
  }
  return ordered;
}

function rowIdsFromRows(rows: readonly Row[]): Data<Int32> {
  const ids = new Int32Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const id = rows[i][ROW_ID];
    if (typeof id !== 'number' || (id | 0) !== id || id < 0) {
      throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'rowNoRowId', index: i });
    }
    ids[i] = id;
  }
  return makeData({ type: new Int32(), length: rows.length, nullCount: 0, data: ids });
}

interface BuiltColumn {
  field: Field;
  data: Data;
}

/**
 * Reads one column's cell from a row. A column named like an Object.prototype
 * member (`constructor`, `toString`, `__proto__`) must read own properties
 * only: a row that lacks the key would otherwise yield the inherited function
 * or prototype instead of a missing value.
 */
function cellReader(name: string): (row: Row) => unknown {
  if (!(name in Object.prototype)) return (row) => row[name];
  return (row) => (Object.prototype.hasOwnProperty.call(row, name) ? row[name] : undefined);
}

function buildColumn(n: number, cell: (i: number) => unknown, observer: ColumnObserver): BuiltColumn {
  const { name } = observer;
  const nullCount = n - observer.valid;
  switch (observer.kind()) {
    case ColumnKind.Null:
      return { field: new Field(name, new Null(), true), data: makeData({ type: new Null(), length: n }) };
    case ColumnKind.Bool: {
      const bits = new Uint8Array((n + 7) >> 3);
      const validity = nullCount > 0 ? new Uint8Array((n + 7) >> 3) : undefined;
      for (let i = 0; i < n; i++) {
        const v = cell(i);
        if (v === null || v === undefined) continue;
        if (validity) validity[i >> 3] |= 1 << (i & 7);
        if (v === true) bits[i >> 3] |= 1 << (i & 7);
      }
      const type = new Bool();
      return { field: new Field(name, type, true), data: makeData({ type, length: n, nullCount, nullBitmap: validity, data: bits }) };
    }
    case ColumnKind.Int32:
      return numeric(n, name, cell, nullCount, new Int32(), new Int32Array(n));
    case ColumnKind.Float64:
      return numeric(n, name, cell, nullCount, new Float64(), new Float64Array(n));
    case ColumnKind.Int64:
      return int64(n, name, cell, nullCount, new Int64(), new BigInt64Array(n));
    case ColumnKind.UInt64:
      return int64(n, name, cell, nullCount, new Uint64(), new BigUint64Array(n));
    case ColumnKind.Utf8:
      return { field: new Field(name, new Utf8(), true), data: utf8(n, name, cell, nullCount, observer, false) };
    case ColumnKind.Json:
      return { field: jsonField(name), data: utf8(n, name, cell, nullCount, observer, true) };
  }
}

function numeric(
  n: number,
  name: string,
  cell: (i: number) => unknown,
  nullCount: number,
  type: Int32 | Float64,
  values: Int32Array | Float64Array,
): BuiltColumn {
  const validity = nullCount > 0 ? new Uint8Array((n + 7) >> 3) : undefined;
  for (let i = 0; i < n; i++) {
    const v = cell(i);
    if (v === null || v === undefined) continue;
    if (validity) validity[i >> 3] |= 1 << (i & 7);
    // A Float64 column may hold floats the source wrote whole (`2.0`).
    values[i] = v instanceof WholeFloat ? v.value : (v as number);
  }
  const props = { type, length: n, nullCount, nullBitmap: validity, data: values };
  const data: Data = type instanceof Int32 ? makeData(props as DataProps<Int32>) : makeData(props as DataProps<Float64>);
  return { field: new Field(name, type, true), data };
}

/** Int64 or UInt64 from integers given as numbers or bigints. */
function int64(
  n: number,
  name: string,
  cell: (i: number) => unknown,
  nullCount: number,
  type: Int64 | Uint64,
  values: BigInt64Array | BigUint64Array,
): BuiltColumn {
  const validity = nullCount > 0 ? new Uint8Array((n + 7) >> 3) : undefined;
  for (let i = 0; i < n; i++) {
    const v = cell(i);
    if (v === null || v === undefined) continue;
    if (validity) validity[i >> 3] |= 1 << (i & 7);
    values[i] = BigInt(v as number | bigint);
  }
  const common = { length: n, nullCount, nullBitmap: validity };
  const data: Data =
    type instanceof Uint64
      ? makeData({ ...common, type, data: values as BigUint64Array })
      : makeData({ ...common, type: type as Int64, data: values as BigInt64Array });
  return { field: new Field(name, type, true), data };
}

/**
 * Writes strings (or, for JSON columns, each value's JSON text) into one UTF-8
 * buffer with Int32 offsets. Buffer#write encodes in C++ without an
 * intermediate allocation; the buffer is sized from pass one so ASCII text
 * never grows it.
 */
function utf8(n: number, name: string, cell: (i: number) => unknown, nullCount: number, observer: ColumnObserver, asJson: boolean): Data<Utf8> {
  const offsets = new Int32Array(n + 1);
  const validity = nullCount > 0 ? new Uint8Array((n + 7) >> 3) : undefined;
  let buffer: Buffer = Buffer.allocUnsafe(Math.max(64, observer.textLength + 3 * observer.maxTextLength + 64));
  let end = 0;
  for (let i = 0; i < n; i++) {
    const v = cell(i);
    if (v !== null && v !== undefined) {
      if (validity) validity[i >> 3] |= 1 << (i & 7);
      // JSON text escapes a lone surrogate (`\ud800`) and keeps it; a Utf8 value cannot.
      const text = asJson ? stringifyJsonExact(v) : (v as string);
      if (!asJson && !isWellFormedText(text)) throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'loneSurrogateValue', column: name, index: i });
      const worst = text.length * 3;
      if (buffer.length - end < worst) buffer = grow(buffer, end, worst);
      end += buffer.write(text, end, 'utf8');
      if (end > MAX_UTF8_BYTES) {
        throw new S2SPError('S2SP_ERR_TABLE_TOO_LARGE', { problem: 'column', column: name });
      }
    }
    offsets[i + 1] = end;
  }
  const data = new Uint8Array(buffer.buffer, buffer.byteOffset, end);
  return makeData({ type: new Utf8(), length: n, nullCount, nullBitmap: validity, valueOffsets: offsets, data });
}

function grow(buffer: Buffer, used: number, needed: number): Buffer {
  const next = Buffer.allocUnsafe(Math.max(buffer.length * 2, used + needed + 64));
  buffer.copy(next, 0, 0, used);
  return next;
}
