/**
 * Per-chunk JSON writers: `(w, i)` appends the JSON of element `i` of one
 * column chunk to a ByteWriter, as UTF-8. Common types never become JS values
 * on the way: integers are written digit by digit, strings are copied as
 * bytes (escaped only where JSON needs it), JSON-text columns verbatim. Other
 * types go through arrow-js's `get` and `JSON.stringify`.
 *
 * Layout after arrow-js slicing (data.ts `_sliceBuffers`): fixed-width values
 * and var-width offsets are sub-arrays starting at the slice; Bool values and
 * validity bitmaps keep the whole buffer and are indexed by `offset + i`.
 */
import { Type, makeVector, type Data, type Field, type Timestamp } from 'apache-arrow';
import type { ByteWriter } from './byte-writer.js';
import { toJsonValue } from './column-readers.js';
import { isJsonField } from './json-column.js';

/** Appends the JSON of element `i` to `w`. */
export type JsonWriter = (w: ByteWriter, i: number) => void;

const NULL = Uint8Array.from([0x6e, 0x75, 0x6c, 0x6c]);
const TRUE = Uint8Array.from([0x74, 0x72, 0x75, 0x65]);
const FALSE = Uint8Array.from([0x66, 0x61, 0x6c, 0x73, 0x65]);
const TWO_32 = 4294967296;
const HEX = '0123456789abcdef';

/** A JSON writer for `data`, the chunk of `field` in one batch. */
export function jsonWriter(field: Field, data: Data): JsonWriter {
  if (data.typeId === Type.Null) return (w) => w.bytes(NULL);
  const write = valueWriter(field, data);
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return write;
  const offset = data.offset;
  return (w, i) => {
    const bit = offset + i;
    if ((bitmap[bit >> 3] & (1 << (bit & 7))) === 0) w.bytes(NULL);
    else write(w, i);
  };
}

/** Appends a finite number as JSON (as `JSON.stringify` would), NaN and infinities as null. */
export function writeNumber(w: ByteWriter, v: number): void {
  if (Number.isSafeInteger(v)) w.integer(v);
  else if (Number.isFinite(v)) w.ascii(String(v));
  else w.bytes(NULL);
}

function valueWriter(field: Field, data: Data): JsonWriter {
  switch (data.typeId) {
    case Type.Int:
    case Type.Float: {
      const values = data.values as ArrayLike<number>;
      if (values instanceof BigInt64Array || values instanceof BigUint64Array) return int64Writer(values);
      if (values instanceof Uint16Array && data.typeId === Type.Float) break; // Float16
      if (data.typeId === Type.Int) return (w, i) => w.integer(values[i]);
      return (w, i) => writeNumber(w, values[i]);
    }
    case Type.Bool: {
      const bits = data.values as Uint8Array;
      const offset = data.offset;
      return (w, i) => w.bytes((bits[(offset + i) >> 3] & (1 << ((offset + i) & 7))) !== 0 ? TRUE : FALSE);
    }
    case Type.Utf8: {
      const offsets = data.valueOffsets as Int32Array;
      const bytes = data.values as Uint8Array;
      if (isJsonField(field)) return (w, i) => w.bytes(bytes, offsets[i], offsets[i + 1]);
      return (w, i) => writeJsonString(w, bytes, offsets[i], offsets[i + 1]);
    }
    case Type.Timestamp: {
      const values = data.values as ArrayLike<unknown>;
      if (!(values instanceof BigInt64Array)) break;
      const read = int64Reader(values);
      // Epoch milliseconds, as the JSON world has them (what `get` returns too).
      const toMs = [1000, 1, 1 / 1000, 1 / 1_000_000][(data.type as Timestamp).unit];
      return (w, i) => writeNumber(w, read(i) * toMs);
    }
  }
  const vector = makeVector(data);
  return (w, i) => w.utf8(JSON.stringify(toJsonValue(vector.get(i))) ?? 'null');
}

/**
 * Reads 64-bit integers as numbers through an Int32 view of the same bytes:
 * reading a BigInt64Array allocates a BigInt per element. Exact below 2^53.
 */
function int64Reader(values: BigInt64Array | BigUint64Array): (i: number) => number {
  const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  if (values instanceof BigUint64Array) return (i) => (words[2 * i + 1] >>> 0) * TWO_32 + (words[2 * i] >>> 0);
  return (i) => words[2 * i + 1] * TWO_32 + (words[2 * i] >>> 0);
}

function int64Writer(values: BigInt64Array | BigUint64Array): JsonWriter {
  const read = int64Reader(values);
  return (w, i) => {
    const v = read(i);
    if (Number.isSafeInteger(v)) w.integer(v);
    else w.ascii(String(values[i])); // beyond 2^53: the exact digits
  };
}

/**
 * Appends UTF-8 bytes `[start, end)` as a JSON string. Bytes >= 0x80 are
 * copied as is (JSON allows raw UTF-8); only quote, backslash and control
 * characters are escaped, as `JSON.stringify` escapes them.
 */
export function writeJsonString(w: ByteWriter, src: Uint8Array, start: number, end: number): void {
  w.ensure((end - start) * 6 + 2);
  const buf = w.buf;
  let pos = w.pos;
  buf[pos++] = 0x22;
  for (let k = start; k < end; k++) {
    const b = src[k];
    if (b >= 0x20 && b !== 0x22 && b !== 0x5c) {
      buf[pos++] = b;
      continue;
    }
    buf[pos++] = 0x5c;
    switch (b) {
      case 0x22: buf[pos++] = 0x22; break;
      case 0x5c: buf[pos++] = 0x5c; break;
      case 0x08: buf[pos++] = 0x62; break; // \b
      case 0x0c: buf[pos++] = 0x66; break; // \f
      case 0x0a: buf[pos++] = 0x6e; break; // \n
      case 0x0d: buf[pos++] = 0x72; break; // \r
      case 0x09: buf[pos++] = 0x74; break; // \t
      default:
        buf[pos++] = 0x75; // \u00XX
        buf[pos++] = 0x30;
        buf[pos++] = 0x30;
        buf[pos++] = HEX.charCodeAt(b >> 4);
        buf[pos++] = HEX.charCodeAt(b & 15);
    }
  }
  buf[pos++] = 0x22;
  w.pos = pos;
}
