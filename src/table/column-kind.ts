/**
 * Schema inference for JSON rows: watches every value of a column and picks
 * the narrowest Arrow type that gives each value back unchanged.
 *
 *   only booleans                      -> Bool
 *   only integers in int32             -> Int32
 *   only safe integers, some > int32   -> Int64 (epoch milliseconds live here)
 *   only numbers, some fractional      -> Float64 (int/float mixes too)
 *   only strings                       -> Utf8
 *   anything else (objects, arrays,
 *   values whose type changes)         -> JSON text (`s2sp:encoding = json`)
 *   only null or missing               -> Null
 */

import { S2SPError } from '../errors.js';

/** The storage kinds a JSON column can be inferred as. */
export const ColumnKind = {
  Null: 'null',
  Bool: 'bool',
  Int32: 'int32',
  Int64: 'int64',
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
const SEEN_NUMBER = SEEN_INT32 | SEEN_INT64 | SEEN_FLOAT;

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
        if ((value | 0) === value && !Object.is(value, -0)) this.seen |= SEEN_INT32;
        else if (Number.isSafeInteger(value)) this.seen |= SEEN_INT64;
        else this.seen |= SEEN_FLOAT;
        return;
      case 'string': {
        this.seen |= SEEN_STRING;
        const n = value.length;
        this.textLength += n;
        if (n > this.maxTextLength) this.maxTextLength = n;
        return;
      }
      case 'object':
        this.seen |= SEEN_OTHER;
        return;
      default:
        // bigint, function, symbol: no JSON value, so nothing a client could get back.
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
      if (s & SEEN_FLOAT) return ColumnKind.Float64;
      if (s & SEEN_INT64) return ColumnKind.Int64;
      return ColumnKind.Int32;
    }
    return ColumnKind.Json;
  }
}
