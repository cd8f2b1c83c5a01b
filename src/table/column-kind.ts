/**
 * Schema inference for JSON rows: watches every value of a column and picks
 * the narrowest Arrow type that gives each value back unchanged.
 *
 *   only booleans                      -> Bool
 *   only integers in int32             -> Int32
 *   only integers in int64, some > int32 -> Int64 (epoch milliseconds live here;
 *                                         bigints too, as exact JSON readers give them)
 *   only integers >= 0, some > int64   -> UInt64
 *   only numbers, some fractional      -> Float64 (int/float mixes too, and whole
 *                                         numbers the source wrote as floats: `2.0`,
 *                                         a WholeFloat from the exact reader)
 *   only strings                       -> Utf8
 *   anything else (objects, arrays,
 *   values whose type changes, bigints
 *   with fractions or beyond 64 bits)  -> JSON text (`s2sp:encoding = json`)
 *   only null or missing               -> Null
 */

import { S2SPError } from '../errors.js';
import { WholeFloat } from '../json/whole-float.js';

/** The storage kinds a JSON column can be inferred as. */
export const ColumnKind = {
  Null: 'null',
  Bool: 'bool',
  Int32: 'int32',
  Int64: 'int64',
  UInt64: 'uint64',
  Float64: 'float64',
  Utf8: 'utf8',
  Json: 'json',
} as const;
export type ColumnKind = (typeof ColumnKind)[keyof typeof ColumnKind];

const SEEN_BOOL = 1;
const SEEN_INT32 = 2;
const SEEN_INT64 = 4;
const SEEN_FLOAT = 8;
const SEEN_STRING = 16;
const SEEN_OTHER = 32;
/** A bigint within int64 (a JS number there would have lost digits). */
const SEEN_BIGINT = 64;
/** An integer above int64's maximum and within uint64's. */
const SEEN_UINT64 = 128;
/** A negative integer (rules out UInt64). */
const SEEN_NEGATIVE = 256;
const SEEN_NUMBER = SEEN_INT32 | SEEN_INT64 | SEEN_FLOAT | SEEN_BIGINT | SEEN_UINT64 | SEEN_NEGATIVE;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Accumulates what one column has held, then names its kind. */
export class ColumnObserver {
  readonly name: string;
  /** Count of values that were neither null nor undefined. */
  valid = 0;
  /** Sum of string lengths (UTF-16 units), to size the Utf8 buffer. */
  textLength = 0;
  /** Longest string seen (UTF-16 units). */
  maxTextLength = 0;
  private seen = 0;

  constructor(name: string) {
    this.name = name;
  }

  /** Records one value of the column. */
  observe(value: unknown): void {
    if (value === null || value === undefined) return;
    this.valid++;
    switch (typeof value) {
      case 'boolean':
        this.seen |= SEEN_BOOL;
        return;
      case 'number':
        // -0 is a float: an integer column would make it 0.
        if (Object.is(value, -0)) this.seen |= SEEN_FLOAT;
        else if ((value | 0) === value) this.seen |= value < 0 ? SEEN_INT32 | SEEN_NEGATIVE : SEEN_INT32;
        else if (Number.isSafeInteger(value)) this.seen |= value < 0 ? SEEN_INT64 | SEEN_NEGATIVE : SEEN_INT64;
        else this.seen |= SEEN_FLOAT;
        return;
      case 'bigint':
        if (value > INT64_MAX && value <= UINT64_MAX) this.seen |= SEEN_UINT64;
        else if (value >= INT64_MIN && value <= INT64_MAX) this.seen |= value < 0n ? SEEN_BIGINT | SEEN_NEGATIVE : SEEN_BIGINT;
        else this.seen |= SEEN_OTHER; // beyond 64 bits: kept exact as JSON text
        return;
      case 'string': {
        this.seen |= SEEN_STRING;
        const n = value.length;
        this.textLength += n;
        if (n > this.maxTextLength) this.maxTextLength = n;
        return;
      }
      case 'object':
        // A float the source wrote whole (`2.0`): Float64, not an integer.
        this.seen |= value instanceof WholeFloat ? SEEN_FLOAT : SEEN_OTHER;
        return;
      default:
        // function, symbol: no JSON value, so nothing a client could get back.
        throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'notJsonValue', column: this.name, type: typeof value });
    }
  }

  /** The kind this column is stored as. */
  kind(): ColumnKind {
    const s = this.seen;
    if (s === 0) return ColumnKind.Null;
    if (s === SEEN_BOOL) return ColumnKind.Bool;
    if (s === SEEN_STRING) return ColumnKind.Utf8;
    if ((s & ~SEEN_NUMBER) === 0) {
      const big = (s & (SEEN_BIGINT | SEEN_UINT64)) !== 0;
      // A float column holding a bigint: Float64 would round the bigint, so JSON text keeps both.
      if (s & SEEN_FLOAT) return big ? ColumnKind.Json : ColumnKind.Float64;
      if (s & SEEN_UINT64) return s & SEEN_NEGATIVE ? ColumnKind.Json : ColumnKind.UInt64;
      if (s & (SEEN_INT64 | SEEN_BIGINT)) return ColumnKind.Int64;
      return ColumnKind.Int32;
    }
    return ColumnKind.Json;
  }
}
