/**
 * Test support: one table holding every Arrow type a query engine produces,
 * built from raw buffers (so no builder rounds a value on the way in), each
 * column with the JSON text every row must encode to, written out by hand
 * from the README's "JSON encoding of Arrow types" (never computed by the
 * code under test). Row 5 is null in every column that can be null.
 */
import {
  Binary,
  BinaryView,
  Bool,
  BufferType,
  Data,
  DateDay,
  DateMillisecond,
  Decimal,
  DenseUnion,
  Dictionary,
  DurationMicrosecond,
  DurationMillisecond,
  DurationNanosecond,
  DurationSecond,
  Field,
  FixedSizeBinary,
  FixedSizeList,
  Float16,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  IntervalDayTime,
  IntervalMonthDayNano,
  IntervalYearMonth,
  LargeBinary,
  LargeList,
  LargeUtf8,
  List,
  Map_,
  Null,
  SparseUnion,
  Struct,
  Table,
  TimeMicrosecond,
  TimeMillisecond,
  TimeNanosecond,
  TimeSecond,
  Timestamp,
  TimeUnit,
  Type,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  Utf8View,
  makeData,
  makeVector,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import type { Buffers } from 'apache-arrow/data';

/** Rows in the matrix table. */
export const MATRIX_ROWS = 6;
/** The row that is null in every nullable column. */
export const NULL_ROW = 5;

/** How polars (the independent Arrow reader) takes a column. */
export type PolarsView = 'same' | 'cast-utf8' | 'unreadable';

/** One column of the matrix. */
export interface MatrixColumn {
  name: string;
  data: Data;
  /** The JSON text of each row's value. */
  json: readonly string[];
  /**
   * `unreadable`: nodejs-polars cannot read it (Decimal256, a negative scale, intervals, unions, a
   * fixed-offset zone); `cast-utf8`: a dictionary, compared decoded.
   */
  polars: PolarsView;
}

type Cell<T> = T | null;

function bitmap(values: readonly unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else nullBitmap[i >> 3] |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

/** A typed array as the constructor of one: fixed-width values go in by index. */
type NumberArrayConstructor = new (n: number) => { [i: number]: number | bigint };

/** Data from raw buffers, validity from which cells are null (arrow-js's builders would convert values on the way). */
function rawData<T extends DataType>(type: T, cells: readonly unknown[], buffers: Partial<Buffers<T>>, children?: Data[]): Data<T> {
  const { nullBitmap, nullCount } = bitmap(cells);
  return new Data(type, 0, cells.length, nullCount, { ...buffers, [BufferType.VALIDITY]: nullBitmap }, children);
}

/** Fixed-width values with a null where the cell is null (stride values per cell). */
function fixed<T extends DataType>(type: T, cells: readonly Cell<readonly (number | bigint)[]>[], Ctor: NumberArrayConstructor): Data<T> {
  const stride = cells.find((c) => c !== null)!.length;
  const values = new Ctor(cells.length * stride);
  cells.forEach((cell, i) => cell?.forEach((v, k) => (values[i * stride + k] = v)));
  return rawData(type, cells, { [BufferType.DATA]: values as Buffers<T>[BufferType.DATA] });
}

function scalars<T extends DataType>(type: T, cells: readonly Cell<number | bigint>[], Ctor: NumberArrayConstructor): Data<T> {
  return fixed(
    type,
    cells.map((c) => (c === null ? null : [c])),
    Ctor,
  );
}

/** Decimal words: the unscaled integer in `bits / 32` little-endian 32-bit words, two's complement. */
function decimal(precision: number, scale: number, bits: number, cells: readonly Cell<bigint>[]): Data<Decimal> {
  const words = bits / 32;
  return fixed(
    new Decimal(scale, precision, bits),
    cells.map((c) => (c === null ? null : Array.from({ length: words }, (_, k) => Number(BigInt.asUintN(32, BigInt.asUintN(bits, c) >> BigInt(32 * k)))))),
    Uint32Array,
  );
}

/** Offsets over element counts: Int32, or (`large`) Int64. */
function offsetsOf(counts: readonly number[], large: boolean): Int32Array | BigInt64Array {
  const offsets = large ? new BigInt64Array(counts.length + 1) : new Int32Array(counts.length + 1);
  let at = 0;
  counts.forEach((n, i) => {
    at += n;
    if (offsets instanceof BigInt64Array) offsets[i + 1] = BigInt(at);
    else offsets[i + 1] = at;
  });
  return offsets;
}

/** Variable-width bytes with Int32 (or, `large`, Int64) offsets. */
function variable<T extends DataType>(type: T, cells: readonly Cell<Uint8Array>[], large = false): Data<T> {
  const bytes = new Uint8Array(cells.reduce((n, c) => n + (c?.length ?? 0), 0));
  let at = 0;
  for (const c of cells) {
    if (c !== null) bytes.set(c, at);
    at += c?.length ?? 0;
  }
  return rawData(type, cells, {
    [BufferType.OFFSET]: offsetsOf(
      cells.map((c) => c?.length ?? 0),
      large,
    ) as Buffers<T>[BufferType.OFFSET],
    [BufferType.DATA]: bytes as Buffers<T>[BufferType.DATA],
  });
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

/** A list-like column (List, LargeList, Map): `cells` holds each row's element count, null for a null row. */
function list<T extends DataType>(type: T, cells: readonly Cell<number>[], child: Data, large = false): Data<T> {
  return rawData(
    type,
    cells,
    {
      [BufferType.OFFSET]: offsetsOf(
        cells.map((n) => n ?? 0),
        large,
      ) as Buffers<T>[BufferType.OFFSET],
    },
    [child],
  );
}

const N = null;
const I32 = Int32Array;
const I64 = BigInt64Array;
const field = (name: string, type: DataType, nullable = true): Field => new Field(name, type, nullable);

const structType = new Struct([field('a', new Int64()), field('b', new Utf8()), field('c', new List(field('item', new Bool())))]);
const mapType = new Map_(field('entries', new Struct([field('key', new Utf8(), false), field('value', new Int32())]), false));
const sparseType = new SparseUnion([0, 1], [field('i', new Int32()), field('s', new Utf8())]);
const denseType = new DenseUnion([5, 7], [field('f', new Float64()), field('b', new Bool())]);

/** Every column of the matrix, with its expected JSON per row. */
/** The layouts take-rows.ts gathers (the Arrow fast path writes them): a scattered selection of only these is gathered, not sliced. */
export const GATHERED_TYPES: ReadonlySet<Type> = new Set<Type>([
  Type.Null,
  Type.Bool,
  Type.Int,
  Type.Float,
  Type.Decimal,
  Type.Date,
  Type.Time,
  Type.Timestamp,
  Type.Duration,
  Type.Interval,
  Type.FixedSizeBinary,
  Type.Utf8,
  Type.Binary,
]);

export const MATRIX: readonly MatrixColumn[] = [
  {
    name: 'bool',
    polars: 'same',
    data: vectorFromArray([true, false, true, false, true, N], new Bool()).data[0],
    json: ['true', 'false', 'true', 'false', 'true', 'null'],
  },
  { name: 'int8', polars: 'same', data: scalars(new Int8(), [-128, 127, 0, -1, 1, N], Int8Array), json: ['-128', '127', '0', '-1', '1', 'null'] },
  {
    name: 'int16',
    polars: 'same',
    data: scalars(new Int16(), [-32768, 32767, 0, -1, 300, N], Int16Array),
    json: ['-32768', '32767', '0', '-1', '300', 'null'],
  },
  {
    name: 'int32',
    polars: 'same',
    data: scalars(new Int32(), [-2147483648, 2147483647, 0, -1, 70000, N], I32),
    json: ['-2147483648', '2147483647', '0', '-1', '70000', 'null'],
  },
  {
    name: 'int64',
    polars: 'same',
    data: scalars(new Int64(), [-(2n ** 63n), 2n ** 63n - 1n, 9007199254740993n, -9007199254740993n, 1704164645123n, N], I64),
    json: ['-9223372036854775808', '9223372036854775807', '9007199254740993', '-9007199254740993', '1704164645123', 'null'],
  },
  { name: 'uint8', polars: 'same', data: scalars(new Uint8(), [0, 255, 1, 2, 3, N], Uint8Array), json: ['0', '255', '1', '2', '3', 'null'] },
  { name: 'uint16', polars: 'same', data: scalars(new Uint16(), [0, 65535, 1, 2, 3, N], Uint16Array), json: ['0', '65535', '1', '2', '3', 'null'] },
  { name: 'uint32', polars: 'same', data: scalars(new Uint32(), [0, 4294967295, 1, 2, 3, N], Uint32Array), json: ['0', '4294967295', '1', '2', '3', 'null'] },
  {
    name: 'uint64',
    polars: 'same',
    data: scalars(new Uint64(), [0n, 2n ** 64n - 1n, 9007199254740993n, 2n ** 63n, 1n, N], BigUint64Array),
    json: ['0', '18446744073709551615', '9007199254740993', '9223372036854775808', '1', 'null'],
  },
  // Half-precision bits: 2.0, -0.0, NaN, -Infinity, 0.1 (rounded to 0.0999755859375).
  {
    name: 'float16',
    polars: 'same',
    data: scalars(new Float16(), [0x4000, 0x8000, 0x7e00, 0xfc00, 0x2e66, N], Uint16Array),
    json: ['2.0', '-0.0', '"NaN"', '"-Infinity"', '0.0999755859375', 'null'],
  },
  {
    name: 'float32',
    polars: 'same',
    data: scalars(new Float32(), [0.1, 2, NaN, Infinity, 3.4028234663852886e38, N], Float32Array),
    json: ['0.10000000149011612', '2.0', '"NaN"', '"Infinity"', '3.4028234663852886e+38', 'null'],
  },
  {
    name: 'float64',
    polars: 'same',
    data: scalars(new Float64(), [2, 0.1, NaN, -Infinity, 1e20, N], Float64Array),
    json: ['2.0', '0.1', '"NaN"', '"-Infinity"', '100000000000000000000.0', 'null'],
  },
  {
    name: 'decimal32',
    polars: 'same',
    data: decimal(7, 2, 32, [12345n, -1n, 0n, 2147483647n, 100n, N]),
    json: ['"123.45"', '"-0.01"', '"0.00"', '"21474836.47"', '"1.00"', 'null'],
  },
  {
    name: 'decimal64',
    polars: 'same',
    data: decimal(18, 3, 64, [123456789012345678n, -5n, 0n, -(10n ** 18n - 1n), 1000n, N]),
    json: ['"123456789012345.678"', '"-0.005"', '"0.000"', '"-999999999999999.999"', '"1.000"', 'null'],
  },
  {
    name: 'decimal128',
    polars: 'same',
    data: decimal(38, 10, 128, [1n, 0n, -12345678901234567890123456789n, 10n ** 38n - 1n, 123450000000n, N]),
    json: ['"1E-10"', '"0E-10"', '"-1234567890123456789.0123456789"', '"9999999999999999999999999999.9999999999"', '"12.3450000000"', 'null'],
  },
  {
    name: 'decimal128_negative_scale',
    polars: 'unreadable',
    data: decimal(5, -2, 128, [123n, -4n, 0n, 1n, 99999n, N]),
    json: ['"1.23E+4"', '"-4E+2"', '"0E+2"', '"1E+2"', '"9.9999E+6"', 'null'],
  },
  {
    name: 'decimal256',
    polars: 'unreadable',
    data: decimal(76, 2, 256, [2n ** 200n, -(2n ** 255n), 12345n, -1n, 0n, N]),
    json: [
      '"16069380442589902755419620923411626025222029937827928353013.76"',
      '"-578960446186580977117854925043439539266349923328202820197287920039565648199.68"',
      '"123.45"',
      '"-0.01"',
      '"0.00"',
      'null',
    ],
  },
  {
    name: 'date32',
    polars: 'same',
    data: scalars(new DateDay(), [0, 19724, -1, -719162, 2932897, N], I32),
    json: ['"1970-01-01"', '"2024-01-02"', '"1969-12-31"', '"0001-01-01"', '"+010000-01-01"', 'null'],
  },
  {
    name: 'date64',
    polars: 'same',
    data: scalars(new DateMillisecond(), [0n, 1704153600000n, -86400000n, 1704164645006n, 253402214400000n, N], I64),
    json: ['"1970-01-01"', '"2024-01-02"', '"1969-12-31"', '"2024-01-02T03:04:05.006"', '"9999-12-31"', 'null'],
  },
  {
    name: 'ts_s',
    polars: 'same',
    data: scalars(new Timestamp(TimeUnit.SECOND), [1704164645n, 0n, -1n, 253402300799n, -62135596800n, N], I64),
    json: ['"2024-01-02T03:04:05"', '"1970-01-01T00:00:00"', '"1969-12-31T23:59:59"', '"9999-12-31T23:59:59"', '"0001-01-01T00:00:00"', 'null'],
  },
  {
    name: 'ts_ms',
    polars: 'same',
    data: scalars(new Timestamp(TimeUnit.MILLISECOND), [1704164645123n, 0n, -1n, 1704164645000n, 951782400000n, N], I64),
    json: [
      '"2024-01-02T03:04:05.123"',
      '"1970-01-01T00:00:00.000"',
      '"1969-12-31T23:59:59.999"',
      '"2024-01-02T03:04:05.000"',
      '"2000-02-29T00:00:00.000"',
      'null',
    ],
  },
  {
    name: 'ts_us_utc',
    polars: 'same',
    data: scalars(new Timestamp(TimeUnit.MICROSECOND, 'UTC'), [1704164645123456n, 0n, -1n, 1704164645000001n, 1n, N], I64),
    json: [
      '"2024-01-02T03:04:05.123456+00:00"',
      '"1970-01-01T00:00:00.000000+00:00"',
      '"1969-12-31T23:59:59.999999+00:00"',
      '"2024-01-02T03:04:05.000001+00:00"',
      '"1970-01-01T00:00:00.000001+00:00"',
      'null',
    ],
  },
  {
    name: 'ts_ns',
    polars: 'same',
    data: scalars(new Timestamp(TimeUnit.NANOSECOND), [1704164645123456789n, -1n, 2n ** 63n - 1n, -(2n ** 63n) + 1n, 0n, N], I64),
    json: [
      '"2024-01-02T03:04:05.123456789"',
      '"1969-12-31T23:59:59.999999999"',
      '"2262-04-11T23:47:16.854775807"',
      '"1677-09-21T00:12:43.145224193"',
      '"1970-01-01T00:00:00.000000000"',
      'null',
    ],
  },
  {
    // polars refuses fixed-offset zones ("unable to parse time zone"), though Arrow allows them.
    name: 'ts_ms_kolkata',
    polars: 'unreadable',
    data: scalars(new Timestamp(TimeUnit.MILLISECOND, '+05:30'), [1704164645123n, 0n, -1n, 1704133800000n, 1n, N], I64),
    json: [
      '"2024-01-02T08:34:05.123+05:30"',
      '"1970-01-01T05:30:00.000+05:30"',
      '"1970-01-01T05:29:59.999+05:30"',
      '"2024-01-02T00:00:00.000+05:30"',
      '"1970-01-01T05:30:00.001+05:30"',
      'null',
    ],
  },
  // New York: winter (EST), summer (EDT), and both sides of the 2024-03-10 spring-forward.
  {
    name: 'ts_s_new_york',
    polars: 'same',
    data: scalars(new Timestamp(TimeUnit.SECOND, 'America/New_York'), [1704164645n, 1720000000n, 1710054000n, 1710053999n, 0n, N], I64),
    json: [
      '"2024-01-01T22:04:05-05:00"',
      '"2024-07-03T05:46:40-04:00"',
      '"2024-03-10T03:00:00-04:00"',
      '"2024-03-10T01:59:59-05:00"',
      '"1969-12-31T19:00:00-05:00"',
      'null',
    ],
  },
  {
    name: 'time32_s',
    polars: 'same',
    data: scalars(new TimeSecond(), [0, 86399, 11045, 43200, 1, N], I32),
    json: ['"00:00:00"', '"23:59:59"', '"03:04:05"', '"12:00:00"', '"00:00:01"', 'null'],
  },
  {
    name: 'time32_ms',
    polars: 'same',
    data: scalars(new TimeMillisecond(), [0, 86399999, 11045123, 1, 43200000, N], I32),
    json: ['"00:00:00.000"', '"23:59:59.999"', '"03:04:05.123"', '"00:00:00.001"', '"12:00:00.000"', 'null'],
  },
  {
    name: 'time64_us',
    polars: 'same',
    data: scalars(new TimeMicrosecond(), [0n, 86399999999n, 11045123456n, 1n, 43200000000n, N], I64),
    json: ['"00:00:00.000000"', '"23:59:59.999999"', '"03:04:05.123456"', '"00:00:00.000001"', '"12:00:00.000000"', 'null'],
  },
  {
    name: 'time64_ns',
    polars: 'same',
    data: scalars(new TimeNanosecond(), [0n, 86399999999999n, 11045123456789n, 1n, 43200000000000n, N], I64),
    json: ['"00:00:00.000000000"', '"23:59:59.999999999"', '"03:04:05.123456789"', '"00:00:00.000000001"', '"12:00:00.000000000"', 'null'],
  },
  {
    name: 'duration_s',
    polars: 'same',
    data: scalars(new DurationSecond(), [93784n, -5n, 0n, 1n, 2n ** 53n + 1n, N], I64),
    json: ['"PT93784S"', '"-PT5S"', '"PT0S"', '"PT1S"', '"PT9007199254740993S"', 'null'],
  },
  {
    name: 'duration_ms',
    polars: 'same',
    data: scalars(new DurationMillisecond(), [93784005n, -250n, 0n, 1n, 86400000n, N], I64),
    json: ['"PT93784.005S"', '"-PT0.250S"', '"PT0.000S"', '"PT0.001S"', '"PT86400.000S"', 'null'],
  },
  {
    name: 'duration_us',
    polars: 'same',
    data: scalars(new DurationMicrosecond(), [1n, -1500000n, 0n, 93784000005n, 1000000n, N], I64),
    json: ['"PT0.000001S"', '"-PT1.500000S"', '"PT0.000000S"', '"PT93784.000005S"', '"PT1.000000S"', 'null'],
  },
  {
    name: 'duration_ns',
    polars: 'same',
    data: scalars(new DurationNanosecond(), [2n ** 63n - 1n, -(2n ** 63n), 0n, 1n, 1500000000n, N], I64),
    json: ['"PT9223372036.854775807S"', '"-PT9223372036.854775808S"', '"PT0.000000000S"', '"PT0.000000001S"', '"PT1.500000000S"', 'null'],
  },
  {
    name: 'interval_year_month',
    polars: 'unreadable',
    data: scalars(new IntervalYearMonth(), [14, -3, 0, 1, 1200, N], I32),
    json: ['{"months":14}', '{"months":-3}', '{"months":0}', '{"months":1}', '{"months":1200}', 'null'],
  },
  {
    name: 'interval_day_time',
    polars: 'unreadable',
    data: fixed(new IntervalDayTime(), [[3, 4000], [-1, 5], [0, 0], [1, -1], [365, 86399999], N], I32),
    json: [
      '{"days":3,"milliseconds":4000}',
      '{"days":-1,"milliseconds":5}',
      '{"days":0,"milliseconds":0}',
      '{"days":1,"milliseconds":-1}',
      '{"days":365,"milliseconds":86399999}',
      'null',
    ],
  },
  {
    // Four Int32 words per value: months, days, then the int64 nanoseconds low word first.
    name: 'interval_month_day_nano',
    polars: 'unreadable',
    data: fixed(new IntervalMonthDayNano(), [[1, 2, 3, 0], [-1, 15, 1, 0x200000], [0, 0, 0, 0], [0, 0, -1, -1], [12, -30, 0x914f0000, 0x4e94], N], I32),
    json: [
      '{"months":1,"days":2,"nanoseconds":3}',
      '{"months":-1,"days":15,"nanoseconds":9007199254740993}',
      '{"months":0,"days":0,"nanoseconds":0}',
      '{"months":0,"days":0,"nanoseconds":-1}',
      '{"months":12,"days":-30,"nanoseconds":86400000000000}',
      'null',
    ],
  },
  {
    name: 'utf8',
    polars: 'same',
    data: variable(new Utf8(), [utf8(''), utf8('ü-日本 "q" \\ \n'), utf8('🌋'), utf8('\u0001</script>'), utf8('plain'), N]),
    json: ['""', '"ü-日本 \\"q\\" \\\\ \\n"', '"🌋"', '"\\u0001</script>"', '"plain"', 'null'],
  },
  {
    name: 'large_utf8',
    polars: 'same',
    data: variable(new LargeUtf8(), [utf8('a'), utf8(''), utf8('Zürich'), utf8('tab\there'), utf8('x'.repeat(40)), N], true),
    json: ['"a"', '""', '"Zürich"', '"tab\\there"', `"${'x'.repeat(40)}"`, 'null'],
  },
  {
    name: 'utf8_view',
    polars: 'same',
    data: vectorFromArray(['short', 'a string longer than twelve bytes', '', 'twelve bytes', 'thirteen byte', N], new Utf8View()).data[0],
    json: ['"short"', '"a string longer than twelve bytes"', '""', '"twelve bytes"', '"thirteen byte"', 'null'],
  },
  {
    name: 'binary',
    polars: 'same',
    data: variable(new Binary(), [bytes(), bytes(0, 1, 2), bytes(255), bytes(0xfb, 0xff), bytes(104, 105), N]),
    json: ['""', '"AAEC"', '"/w=="', '"+/8="', '"aGk="', 'null'],
  },
  {
    name: 'large_binary',
    polars: 'same',
    data: variable(new LargeBinary(), [bytes(1), bytes(), bytes(0, 0, 0), bytes(0xfb, 0xff, 0xbf), bytes(7, 7), N], true),
    json: ['"AQ=="', '""', '"AAAA"', '"+/+/"', '"Bwc="', 'null'],
  },
  {
    name: 'fixed_size_binary',
    polars: 'same',
    data: fixed(new FixedSizeBinary(3), [[1, 2, 3], [0, 0, 0], [255, 254, 253], [0xfb, 0xff, 0xbf], [97, 98, 99], N], Uint8Array),
    json: ['"AQID"', '"AAAA"', '"//79"', '"+/+/"', '"YWJj"', 'null'],
  },
  {
    name: 'binary_view',
    polars: 'same',
    data: vectorFromArray([bytes(1, 2), new Uint8Array(20).fill(65), bytes(), bytes(255), new Uint8Array(12).fill(0), N], new BinaryView()).data[0],
    json: ['"AQI="', '"QUFBQUFBQUFBQUFBQUFBQUFBQUE="', '""', '"/w=="', '"AAAAAAAAAAAAAAAA"', 'null'],
  },
  {
    name: 'list_int32',
    polars: 'same',
    data: list(new List(field('item', new Int32())), [2, 0, 2, 1, 3, N], scalars(new Int32(), [1, 2, N, 3, -4, 5, 6, 7], I32)),
    json: ['[1,2]', '[]', '[null,3]', '[-4]', '[5,6,7]', 'null'],
  },
  {
    name: 'large_list_utf8',
    polars: 'same',
    data: list(new LargeList(field('item', new Utf8())), [1, 2, 0, 1, 1, N], variable(new Utf8(), [utf8('a'), utf8('b'), utf8('c'), N, utf8('"')]), true),
    json: ['["a"]', '["b","c"]', '[]', '[null]', '["\\""]', 'null'],
  },
  {
    name: 'fixed_size_list_float64',
    polars: 'same',
    data: makeData({
      type: new FixedSizeList(2, field('item', new Float64())),
      length: MATRIX_ROWS,
      ...bitmap([1, 1, 1, 1, 1, N]),
      child: scalars(new Float64(), [1.5, 2, NaN, N, 0, -0, 1e-7, 3, 0, 0, 0, 0], Float64Array),
    }),
    json: ['[1.5,2.0]', '["NaN",null]', '[0.0,-0.0]', '[1e-7,3.0]', '[0.0,0.0]', 'null'],
  },
  {
    name: 'struct',
    polars: 'same',
    data: makeData({
      type: structType,
      length: MATRIX_ROWS,
      ...bitmap([1, 1, 1, 1, 1, N]),
      children: [
        scalars(new Int64(), [9007199254740993n, N, -1n, 0n, 2n, 0n], I64),
        variable(new Utf8(), [utf8('x'), utf8(''), N, utf8('y'), utf8('z'), utf8('')]),
        list(new List(field('item', new Bool())), [2, 0, 1, N, 0, 0], vectorFromArray([true, N, false], new Bool()).data[0]),
      ],
    }),
    json: [
      '{"a":9007199254740993,"b":"x","c":[true,null]}',
      '{"a":null,"b":"","c":[]}',
      '{"a":-1,"b":null,"c":[false]}',
      '{"a":0,"b":"y","c":null}',
      '{"a":2,"b":"z","c":[]}',
      'null',
    ],
  },
  {
    name: 'map_utf8_int32',
    polars: 'same',
    data: list(
      mapType,
      [2, 0, 1, 3, 1, N],
      makeData({
        type: mapType.children[0].type as Struct,
        length: 7,
        nullCount: 0,
        children: [variable(new Utf8(), ['a', 'b', 'k', 'x', 'y', 'x', '1'].map(utf8)), scalars(new Int32(), [1, N, -7, 1, 2, 3, 10], I32)],
      }),
    ),
    json: ['[["a",1],["b",null]]', '[]', '[["k",-7]]', '[["x",1],["y",2],["x",3]]', '[["1",10]]', 'null'],
  },
  {
    name: 'dictionary_utf8',
    polars: 'cast-utf8',
    data: makeData({
      type: new Dictionary(new Utf8(), new Int32()),
      length: MATRIX_ROWS,
      ...bitmap([0, 1, 0, N, 2, N]),
      data: Int32Array.of(0, 1, 0, 0, 2, 0),
      dictionary: makeVector(variable(new Utf8(), ['red', 'green', 'blue "b"'].map(utf8))),
    }),
    json: ['"red"', '"green"', '"red"', 'null', '"blue \\"b\\""', 'null'],
  },
  { name: 'null', polars: 'same', data: makeData({ type: new Null(), length: MATRIX_ROWS }), json: Array(MATRIX_ROWS).fill('null') },
  {
    // Unions have no validity of their own: row 5 is a null in the chosen child.
    name: 'sparse_union',
    polars: 'unreadable',
    data: makeData({
      type: sparseType,
      length: MATRIX_ROWS,
      nullCount: 0,
      typeIds: Int8Array.of(0, 1, 0, 1, 0, 1),
      children: [scalars(new Int32(), [1, 0, -2, 0, 2147483647, 0], I32), variable(new Utf8(), [utf8(''), utf8('x'), utf8(''), utf8('"y"'), utf8(''), N])],
    }),
    json: ['1', '"x"', '-2', '"\\"y\\""', '2147483647', 'null'],
  },
  {
    name: 'dense_union',
    polars: 'unreadable',
    data: makeData({
      type: denseType,
      length: MATRIX_ROWS,
      nullCount: 0,
      typeIds: Int8Array.of(5, 7, 5, 7, 5, 5),
      valueOffsets: Int32Array.of(0, 0, 1, 1, 2, 3),
      children: [scalars(new Float64(), [2, NaN, 0.5, N], Float64Array), vectorFromArray([true, false], new Bool()).data[0]],
    }),
    json: ['2.0', 'true', '"NaN"', 'false', '0.5', 'null'],
  },
];

/** The matrix as a Table (no `_row_id`: the tool's own table). */
export function matrixTable(columns: readonly MatrixColumn[] = MATRIX): Table {
  const vectors: Record<string, Vector> = {};
  for (const column of columns) vectors[column.name] = makeVector(column.data);
  return new Table(vectors);
}

/** The JSON text of row `i` over `columns`, `_row_id` first, exactly as the encoding writes it. */
export function expectedRowText(i: number, columns: readonly MatrixColumn[] = MATRIX): string {
  return `{"_row_id":${i}${columns.map((c) => `,${JSON.stringify(c.name)}:${c.json[i]}`).join('')}}`;
}
