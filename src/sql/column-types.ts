/**
 * How a column's type crosses between Arrow and DuckDB, both ways, with no
 * value changed on the way (README, "query_rows" › "Types"). One table
 * answers both directions, so a body loaded into the engine and selected
 * back out comes out with the type it went in with, except where Arrow has
 * two layouts of one value type (LargeUtf8 and Utf8View come back Utf8,
 * LargeBinary, BinaryView and FixedSizeBinary come back Binary, Decimal32
 * and Decimal64 come back Decimal128 of the same precision and scale).
 *
 * `storage` says how the values are laid out on each side: the same bytes
 * (integers, floats, dates, times, timestamps, decimals of one width,
 * HUGEINT as Decimal(38, 0)), decimals of two widths (resize-integers.ts),
 * booleans (a byte against a bit), or variable-length bytes.
 * A type missing here is refused with the column named, never approximated.
 */
import {
  Binary,
  Bool,
  DateDay,
  Decimal,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  Null,
  Precision,
  TimeMicrosecond,
  TimeNanosecond,
  Timestamp,
  TimeUnit,
  Type,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  type DataType,
} from 'apache-arrow';

/** How a column's values are laid out on the two sides. */
export type ColumnStorage =
  /** The same little-endian bytes on both sides, `bytes` per value. */
  | { kind: 'fixed'; bytes: number }
  /** A decimal whose widths differ: DuckDB keeps DECIMAL(p) in 2, 4, 8 or 16 bytes by p; Arrow in 4, 8 or 16 by its bit width. */
  | { kind: 'decimal'; duckdbBytes: number; arrowBytes: number }
  /** DuckDB's HUGEINT / UHUGEINT: Arrow's Decimal(38, 0) bytes, whose range is narrower (10^38). */
  | { kind: 'hugeint'; signed: boolean }
  /** A byte per value in DuckDB, a bit in Arrow. */
  | { kind: 'bool' }
  /** Variable-length bytes: VARCHAR (UTF-8) or BLOB. */
  | { kind: 'bytes' }
  /** DuckDB's type of a bare NULL: no values at all. */
  | { kind: 'null' };

/** One column type as both sides spell it. */
export interface ColumnType {
  /** The DuckDB type, as CREATE TABLE takes it. */
  sql: string;
  /** The Arrow type a result column of this DuckDB type gets. */
  arrow: DataType;
  storage: ColumnStorage;
}

const fixed = (bytes: number): ColumnStorage => ({ kind: 'fixed', bytes });

/** DuckDB type ids (DuckDBTypeId of @duckdb/node-api, fixed by DuckDB's C API), named here so this file needs no engine. */
export const DUCKDB_TYPE_ID = {
  BOOLEAN: 1,
  TINYINT: 2,
  SMALLINT: 3,
  INTEGER: 4,
  BIGINT: 5,
  UTINYINT: 6,
  USMALLINT: 7,
  UINTEGER: 8,
  UBIGINT: 9,
  FLOAT: 10,
  DOUBLE: 11,
  TIMESTAMP: 12,
  DATE: 13,
  TIME: 14,
  HUGEINT: 16,
  VARCHAR: 17,
  BLOB: 18,
  DECIMAL: 19,
  TIMESTAMP_S: 20,
  TIMESTAMP_MS: 21,
  TIMESTAMP_NS: 22,
  TIMESTAMP_TZ: 31,
  UHUGEINT: 32,
  SQLNULL: 36,
  TIME_NS: 39,
} as const;

const ID = DUCKDB_TYPE_ID;

/** The simple DuckDB types (no parameters), by type id. */
const SIMPLE: Record<number, ColumnType> = {
  [ID.BOOLEAN]: { sql: 'BOOLEAN', arrow: new Bool(), storage: { kind: 'bool' } },
  [ID.TINYINT]: { sql: 'TINYINT', arrow: new Int8(), storage: fixed(1) },
  [ID.SMALLINT]: { sql: 'SMALLINT', arrow: new Int16(), storage: fixed(2) },
  [ID.INTEGER]: { sql: 'INTEGER', arrow: new Int32(), storage: fixed(4) },
  [ID.BIGINT]: { sql: 'BIGINT', arrow: new Int64(), storage: fixed(8) },
  [ID.UTINYINT]: { sql: 'UTINYINT', arrow: new Uint8(), storage: fixed(1) },
  [ID.USMALLINT]: { sql: 'USMALLINT', arrow: new Uint16(), storage: fixed(2) },
  [ID.UINTEGER]: { sql: 'UINTEGER', arrow: new Uint32(), storage: fixed(4) },
  [ID.UBIGINT]: { sql: 'UBIGINT', arrow: new Uint64(), storage: fixed(8) },
  [ID.FLOAT]: { sql: 'FLOAT', arrow: new Float32(), storage: fixed(4) },
  [ID.DOUBLE]: { sql: 'DOUBLE', arrow: new Float64(), storage: fixed(8) },
  [ID.VARCHAR]: { sql: 'VARCHAR', arrow: new Utf8(), storage: { kind: 'bytes' } },
  [ID.BLOB]: { sql: 'BLOB', arrow: new Binary(), storage: { kind: 'bytes' } },
  [ID.DATE]: { sql: 'DATE', arrow: new DateDay(), storage: fixed(4) },
  [ID.TIME]: { sql: 'TIME', arrow: new TimeMicrosecond(), storage: fixed(8) },
  [ID.TIME_NS]: { sql: 'TIME_NS', arrow: new TimeNanosecond(), storage: fixed(8) },
  [ID.TIMESTAMP_S]: { sql: 'TIMESTAMP_S', arrow: new Timestamp(TimeUnit.SECOND), storage: fixed(8) },
  [ID.TIMESTAMP_MS]: { sql: 'TIMESTAMP_MS', arrow: new Timestamp(TimeUnit.MILLISECOND), storage: fixed(8) },
  [ID.TIMESTAMP]: { sql: 'TIMESTAMP', arrow: new Timestamp(TimeUnit.MICROSECOND), storage: fixed(8) },
  [ID.TIMESTAMP_NS]: { sql: 'TIMESTAMP_NS', arrow: new Timestamp(TimeUnit.NANOSECOND), storage: fixed(8) },
  // DuckDB keeps an instant in UTC microseconds; its zone is the session's, which is not part of the value.
  [ID.TIMESTAMP_TZ]: { sql: 'TIMESTAMPTZ', arrow: new Timestamp(TimeUnit.MICROSECOND, 'UTC'), storage: fixed(8) },
  // No Arrow integer holds 128 bits; DuckDB's own Arrow export gives HUGEINT as Decimal(38, 0) too.
  [ID.HUGEINT]: { sql: 'HUGEINT', arrow: new Decimal(0, 38, 128), storage: { kind: 'hugeint', signed: true } },
  [ID.UHUGEINT]: { sql: 'UHUGEINT', arrow: new Decimal(0, 38, 128), storage: { kind: 'hugeint', signed: false } },
  [ID.SQLNULL]: { sql: 'INTEGER', arrow: new Null(), storage: { kind: 'null' } },
};

/**
 * DuckDB's DECIMAL(width, scale) against an Arrow decimal of `arrowBits`
 * (a result gets Decimal128, the width DuckDB's own Arrow export uses).
 */
export function decimalColumnType(width: number, scale: number, arrowBits = 128): ColumnType {
  const duckdbBytes = width <= 4 ? 2 : width <= 9 ? 4 : width <= 18 ? 8 : 16;
  const arrowBytes = arrowBits / 8;
  const storage: ColumnStorage = duckdbBytes === arrowBytes ? fixed(arrowBytes) : { kind: 'decimal', duckdbBytes, arrowBytes };
  return { sql: `DECIMAL(${width}, ${scale})`, arrow: new Decimal(scale, width, arrowBits), storage };
}

/**
 * The column type of a DuckDB result column.
 * @param typeId its DuckDBTypeId
 * @param decimal width and scale, for DECIMAL
 * @returns undefined for a type with no exact Arrow counterpart here (LIST, STRUCT, INTERVAL, UUID, ...)
 */
export function columnTypeOfDuckDB(typeId: number, decimal?: { width: number; scale: number }): ColumnType | undefined {
  if (typeId === ID.DECIMAL && decimal !== undefined) return decimalColumnType(decimal.width, decimal.scale);
  return SIMPLE[typeId];
}

const INT_IDS: Record<string, number> = {
  '8,true': ID.TINYINT,
  '16,true': ID.SMALLINT,
  '32,true': ID.INTEGER,
  '64,true': ID.BIGINT,
  '8,false': ID.UTINYINT,
  '16,false': ID.USMALLINT,
  '32,false': ID.UINTEGER,
  '64,false': ID.UBIGINT,
};

const TIMESTAMP_IDS: Record<number, number> = {
  [TimeUnit.SECOND]: ID.TIMESTAMP_S,
  [TimeUnit.MILLISECOND]: ID.TIMESTAMP_MS,
  [TimeUnit.MICROSECOND]: ID.TIMESTAMP,
  [TimeUnit.NANOSECOND]: ID.TIMESTAMP_NS,
};

/** Zones under which a stored instant is the UTC one TIMESTAMPTZ keeps. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Z', '+00:00']);

/**
 * The column type a body column of Arrow type `type` is loaded as.
 * @returns undefined for a type DuckDB cannot hold exactly (Float16, a zoned
 *   timestamp in a unit other than microseconds or a zone other than UTC,
 *   Date64, Time32, intervals, durations, nested types, ...)
 */
export function columnTypeOfArrow(type: DataType): ColumnType | undefined {
  switch (type.typeId) {
    case Type.Bool:
      return SIMPLE[ID.BOOLEAN];
    case Type.Int: {
      const { bitWidth, isSigned } = type as unknown as { bitWidth: number; isSigned: boolean };
      return SIMPLE[INT_IDS[`${bitWidth},${isSigned}`]];
    }
    case Type.Float: {
      const { precision } = type as unknown as { precision: Precision };
      if (precision === Precision.SINGLE) return SIMPLE[ID.FLOAT];
      return precision === Precision.DOUBLE ? SIMPLE[ID.DOUBLE] : undefined;
    }
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Utf8View:
      return SIMPLE[ID.VARCHAR];
    case Type.Binary:
    case Type.LargeBinary:
    case Type.BinaryView:
    case Type.FixedSizeBinary:
      return SIMPLE[ID.BLOB];
    case Type.Decimal: {
      const { precision, scale, bitWidth } = type as unknown as { precision: number; scale: number; bitWidth: number };
      // DuckDB's DECIMAL goes to 38 digits, with a scale from 0 to the precision; Decimal256 and negative scales stay out.
      const fits = bitWidth <= 128 && precision >= 1 && precision <= 38 && scale >= 0 && scale <= precision;
      return fits ? decimalColumnType(precision, scale, bitWidth) : undefined;
    }
    case Type.Date:
      return (type as unknown as { unit: number }).unit === 0 ? SIMPLE[ID.DATE] : undefined;
    case Type.Time: {
      const { unit, bitWidth } = type as unknown as { unit: TimeUnit; bitWidth: number };
      if (bitWidth !== 64) return undefined;
      return unit === TimeUnit.MICROSECOND ? SIMPLE[ID.TIME] : unit === TimeUnit.NANOSECOND ? SIMPLE[ID.TIME_NS] : undefined;
    }
    case Type.Timestamp: {
      const { unit, timezone } = type as unknown as { unit: TimeUnit; timezone?: string | null };
      if (timezone === undefined || timezone === null || timezone === '') return SIMPLE[TIMESTAMP_IDS[unit]];
      return unit === TimeUnit.MICROSECOND && UTC_ZONES.has(timezone) ? SIMPLE[ID.TIMESTAMP_TZ] : undefined;
    }
    default:
      return undefined;
  }
}
