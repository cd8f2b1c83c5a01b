/**
 * Test helper: a table holding every column type the gather (take-rows.ts)
 * supports, with nulls where asked, and two oracles to compare against.
 */
import {
  Binary,
  Bool,
  DateDay,
  DateMillisecond,
  Decimal,
  DurationMillisecond,
  FixedSizeBinary,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  Null,
  Table,
  TimeMillisecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { rowsFromTable, type Row } from '../../src/table/rows-from-table.js';

/** One column of the all-types table. */
export interface ColumnSpec {
  name: string;
  type: DataType;
  value(i: number): unknown;
}

const DAY_MS = 86_400_000;

/** Every column type takeRows gathers (Int8..Uint64, floats, Bool, Utf8, Binary, Null, dates, times, decimals...). */
export const COLUMNS: ColumnSpec[] = [
  { name: 'i8', type: new Int8(), value: (i) => ((i * 37) % 256) - 128 },
  { name: 'i16', type: new Int16(), value: (i) => ((i * 7919) % 65536) - 32768 },
  { name: 'i32', type: new Int32(), value: (i) => (i % 2 ? -1 : 1) * (2_147_483_647 - i) },
  { name: 'i64', type: new Int64(), value: (i) => (i % 2 ? -1n : 1n) * (2n ** 62n + BigInt(i)) },
  { name: 'i64_small', type: new Int64(), value: (i) => BigInt(1517966773840 + i) },
  { name: 'u8', type: new Uint8(), value: (i) => (i * 13) % 256 },
  { name: 'u16', type: new Uint16(), value: (i) => (i * 4099) % 65536 },
  { name: 'u32', type: new Uint32(), value: (i) => 4_294_967_295 - i * 3 },
  { name: 'u64', type: new Uint64(), value: (i) => 2n ** 64n - 1n - BigInt(i) },
  { name: 'f32', type: new Float32(), value: (i) => i * 0.5 - 7.25 },
  { name: 'f64', type: new Float64(), value: (i) => i / 3 - 1e10 },
  { name: 'bool', type: new Bool(), value: (i) => i % 3 === 0 },
  { name: 'utf8', type: new Utf8(), value: (i) => (i % 5 === 0 ? '' : `ü-${i}-日本-${'x'.repeat(i % 9)}`) },
  { name: 'binary', type: new Binary(), value: (i) => Uint8Array.from({ length: i % 6 }, (_, k) => (i * 31 + k) & 255) },
  { name: 'null', type: new Null(), value: () => null },
  { name: 'date_day', type: new DateDay(), value: (i) => new Date(i * DAY_MS) },
  { name: 'date_ms', type: new DateMillisecond(), value: (i) => new Date(1517966773840 + i * 1001) },
  { name: 'ts_ms', type: new TimestampMillisecond(), value: (i) => 1517966773840 + i },
  { name: 'ts_us', type: new TimestampMicrosecond(), value: (i) => 1517966773840 + i * 3 },
  { name: 'ts_s', type: new TimestampSecond(), value: (i) => (1517966773 + i) * 1000 },
  { name: 'time_ms', type: new TimeMillisecond(), value: (i) => i * 1000 + 7 },
  { name: 'duration_ms', type: new DurationMillisecond(), value: (i) => BigInt(i) * 1000n - 5n },
  { name: 'decimal', type: new Decimal(2, 10, 128), value: (i) => Uint32Array.of(i * 101, i, 0, 0) },
  { name: 'fixed3', type: new FixedSizeBinary(3), value: (i) => Uint8Array.of(i & 255, (i * 2) & 255, (i * 3) & 255) },
];

/**
 * `n` rows of every column, row `i` holding value `first + i`. With `nullEvery`,
 * every column is null where `(first + i + c) % nullEvery === 0` (c: the
 * column's index, so nulls sit at different rows per column).
 */
export function allTypes(n: number, first = 0, nullEvery?: number): Table {
  const vectors: Record<string, Vector> = {};
  COLUMNS.forEach((spec, c) => {
    const values = Array.from({ length: n }, (_, k) => {
      const i = first + k;
      return nullEvery !== undefined && (i + c) % nullEvery === 0 ? null : spec.value(i);
    });
    vectors[spec.name] = vectorFromArray(values as never[], spec.type) as Vector;
  });
  return new Table(vectors);
}

/** The oracle: row by row, from rowsFromTable of the whole table. */
export function oracleRows(table: Table, ids: ArrayLike<number>): Row[] {
  const rows = rowsFromTable(table);
  return Array.from(ids, (id) => rows[id]);
}

/** The exact cell values (bigints, byte arrays, decimals) as arrow-js reads them. */
export function exactCells(table: Table, ids: ArrayLike<number>): unknown[][] {
  const columns = table.schema.fields.map((_f, c) => table.getChildAt(c)!);
  return Array.from(ids, (id) => columns.map((column) => column.get(id)));
}
