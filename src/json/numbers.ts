/**
 * Numbers and booleans in JSON, each type's writer beside its reader:
 * integers exact (beyond 2^53 the digits, read back as a bigint), floats as
 * their shortest round-trip text with `.0` on whole values and non-finite
 * values as strings (float-text.ts), decimals as Python's `str(Decimal)`
 * text (decimal-text.ts).
 */
import { Precision, type Data, type Decimal, type Float, type Int } from 'apache-arrow';
import type { ByteWriter } from './byte-writer.js';
import { FALSE_BYTES, TRUE_BYTES } from './bytes.js';
import { int64Numbers, int64Values } from './column-access.js';
import type { JsonCodec } from './json-codec.js';
import { decimalText } from './decimal-text.js';
import { finiteFloatText, float16ToNumber, nonFiniteName } from './float-text.js';

const DOT_ZERO = Buffer.from('.0');

export function intCodec(_field: unknown, data: Data): JsonCodec {
  if ((data.type as Int).bitWidth === 64) {
    const values = data.values as BigInt64Array | BigUint64Array;
    const asNumber = int64Numbers(values);
    return {
      write: (w, i) => {
        const v = asNumber(i);
        if (Number.isSafeInteger(v)) w.integer(v);
        else w.ascii(String(values[i])); // beyond 2^53: the exact digits
      },
      read: int64Values(values),
    };
  }
  const values = data.values as ArrayLike<number>;
  return { write: (w, i) => w.integer(values[i]), read: (i) => values[i] };
}

export function floatCodec(_field: unknown, data: Data): JsonCodec {
  const values = data.values as ArrayLike<number>;
  if ((data.type as Float).precision === Precision.HALF) {
    return { write: (w, i) => writeFloat(w, float16ToNumber(values[i])), read: (i) => floatValue(float16ToNumber(values[i])) };
  }
  return { write: (w, i) => writeFloat(w, values[i]), read: (i) => floatValue(values[i]) };
}

export function boolCodec(_field: unknown, data: Data): JsonCodec {
  const bits = data.values as Uint8Array;
  const offset = data.offset;
  const read = (i: number): boolean => (bits[(offset + i) >> 3] & (1 << ((offset + i) & 7))) !== 0;
  return { write: (w, i) => w.bytes(read(i) ? TRUE_BYTES : FALSE_BYTES), read };
}

export function decimalCodec(_field: unknown, data: Data): JsonCodec {
  const words = data.values as Uint32Array;
  const { scale, bitWidth } = data.type as Decimal;
  const stride = bitWidth / 32;
  const read = (i: number): string => decimalText(words, i, stride, scale);
  return { write: (w, i) => w.quotedAscii(read(i)), read };
}

/** Appends a float: shortest round-trip text, `.0` on whole values, non-finite values as strings (float-text.ts). */
export function writeFloat(w: ByteWriter, v: number): void {
  if (Number.isSafeInteger(v) && v !== 0) {
    w.integer(v);
    w.bytes(DOT_ZERO);
    return;
  }
  const name = nonFiniteName(v);
  if (name !== undefined) w.quotedAscii(name);
  else w.ascii(finiteFloatText(v));
}

/** A float as its JSON value: the number, or "NaN" / "Infinity" / "-Infinity". */
export function floatValue(v: number): number | string {
  return Number.isFinite(v) ? v : (nonFiniteName(v) as string);
}
