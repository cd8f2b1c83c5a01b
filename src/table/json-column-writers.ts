/**
 * Per-chunk JSON writers: `(w, i)` appends the JSON of element `i` of one
 * column chunk to a ByteWriter, as UTF-8, following the encoding in the
 * README ("JSON encoding of Arrow types"). Common types never become JS
 * values on the way: integers are written digit by digit, strings are copied
 * as bytes (escaped only where JSON needs it), JSON-text columns verbatim.
 * Nested types (lists, structs, maps, unions, dictionaries) are written by
 * the writers of their children, so every type nests in every other.
 *
 * column-readers.ts turns the same elements into JS values; the two must
 * agree, and test/table/json-types.test.ts holds them to it.
 */
import {
  DateUnit,
  IntervalUnit,
  Precision,
  Type,
  type Data,
  type Decimal,
  type Field,
  type FixedSizeList,
  type Float,
  type Int,
  type Map_,
  type Struct,
  type Time,
  type Timestamp,
  type Duration,
  type Date_,
  type Interval,
  type Union,
} from 'apache-arrow';
import { S2SPError } from '../errors.js';
import type { ByteWriter } from './byte-writer.js';
import {
  bytesReader,
  childField,
  dictionaryLocator,
  int64Numbers,
  int64Values,
  monthDayNanoNanos,
  offsetReader,
  storedIntegers,
  unionLocator,
} from './column-access.js';
import { decimalText } from './decimal-text.js';
import { finiteFloatText, float16ToNumber, nonFiniteName } from './float-text.js';
import { isJsonField } from './json-column.js';
import { date64Text, dateText, durationText, timeText, timestampJsonWriter, type StoredInteger } from './temporal-text.js';
import { offsetResolver } from './time-zone.js';

/** Appends the JSON of element `i` to `w`. */
export type JsonWriter = (w: ByteWriter, i: number) => void;

const encoder = new TextEncoder();
const NULL = encoder.encode('null');
const TRUE = encoder.encode('true');
const FALSE = encoder.encode('false');
const DOT_ZERO = encoder.encode('.0');
const HEX = '0123456789abcdef';
const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

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

/** Appends a float: shortest round-trip text, `.0` on whole values, non-finite values as strings (float-text.ts). */
export function writeFloat(w: ByteWriter, v: number): void {
  if (Number.isSafeInteger(v) && v !== 0) {
    w.integer(v);
    w.bytes(DOT_ZERO);
    return;
  }
  const name = nonFiniteName(v);
  if (name !== undefined) writeAsciiString(w, name);
  else w.ascii(finiteFloatText(v));
}

function valueWriter(field: Field, data: Data): JsonWriter {
  switch (data.typeId) {
    case Type.Int: {
      const values = data.values as ArrayLike<number>;
      if ((data.type as Int).bitWidth === 64) return int64Writer(data.values as BigInt64Array | BigUint64Array);
      return (w, i) => w.integer(values[i]);
    }
    case Type.Float: {
      const values = data.values as ArrayLike<number>;
      if ((data.type as Float).precision === Precision.HALF) return (w, i) => writeFloat(w, float16ToNumber(values[i]));
      return (w, i) => writeFloat(w, values[i]);
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
    case Type.LargeUtf8:
    case Type.Utf8View: {
      const read = bytesReader(data);
      if (isJsonField(field)) return (w, i) => w.bytes(read(i));
      return (w, i) => {
        const bytes = read(i);
        writeJsonString(w, bytes, 0, bytes.length);
      };
    }
    case Type.Binary:
    case Type.LargeBinary:
    case Type.BinaryView:
    case Type.FixedSizeBinary: {
      const read = bytesReader(data);
      return (w, i) => {
        const bytes = read(i);
        writeAsciiString(w, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'));
      };
    }
    case Type.Decimal: {
      const words = data.values as Uint32Array;
      const { scale, bitWidth } = data.type as Decimal;
      const stride = bitWidth / 32;
      return (w, i) => writeAsciiString(w, decimalText(words, i, stride, scale));
    }
    case Type.Date: {
      if ((data.type as Date_).unit === DateUnit.DAY) {
        const days = data.values as Int32Array;
        return (w, i) => writeAsciiString(w, dateText(days[i]));
      }
      const read = int64Values(data.values as BigInt64Array);
      return (w, i) => writeAsciiString(w, date64Text(read(i)));
    }
    case Type.Timestamp: {
      const { unit, timezone } = data.type as Timestamp;
      const offsetAt = timezone ? offsetResolver(timezone) : undefined;
      if (timezone && offsetAt === undefined) throw unsupportedZone(field, timezone);
      const values = data.values as BigInt64Array;
      const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
      const write = timestampJsonWriter(unit, offsetAt);
      return (w, i) => write(w, words[2 * i + 1], words[2 * i]);
    }
    case Type.Time: {
      const unit = (data.type as Time).unit;
      const read = storedIntegers(data);
      return (w, i) => writeAsciiString(w, timeText(read(i), unit));
    }
    case Type.Duration: {
      const unit = (data.type as Duration).unit;
      const read = int64Values(data.values as BigInt64Array);
      return (w, i) => writeAsciiString(w, durationText(read(i), unit));
    }
    case Type.Interval:
      return intervalWriter(data);
    case Type.List:
    case Type.LargeList: {
      const offset = offsetReader(data);
      const child = jsonWriter(childField(field, data, 0), data.children[0]);
      return (w, i) => writeRange(w, child, offset(i), offset(i + 1));
    }
    case Type.FixedSizeList: {
      const size = (data.type as FixedSizeList).listSize;
      const child = jsonWriter(childField(field, data, 0), data.children[0]);
      return (w, i) => writeRange(w, child, i * size, (i + 1) * size);
    }
    case Type.Struct:
      return structWriter(data);
    case Type.Map: {
      const offset = offsetReader(data);
      const entries = data.children[0];
      const entriesType = (data.type as Map_).children[0].type as Struct;
      const key = jsonWriter(entriesType.children[0], entries.children[0]);
      const value = jsonWriter(entriesType.children[1], entries.children[1]);
      // [[key, value], ...]: keys keep their type and order, duplicates survive.
      return (w, i) => {
        const start = offset(i);
        const end = offset(i + 1);
        w.ensure(1);
        w.buf[w.pos++] = OPEN_BRACKET;
        for (let j = start; j < end; j++) {
          w.ensure(2);
          if (j > start) w.buf[w.pos++] = COMMA;
          w.buf[w.pos++] = OPEN_BRACKET;
          key(w, j);
          w.ensure(1);
          w.buf[w.pos++] = COMMA;
          value(w, j);
          w.ensure(1);
          w.buf[w.pos++] = CLOSE_BRACKET;
        }
        w.ensure(1);
        w.buf[w.pos++] = CLOSE_BRACKET;
      };
    }
    case Type.Union: {
      const where = unionLocator(data);
      const fields = (data.type as Union).children;
      const children = data.children.map((child, c) => jsonWriter(fields[c], child));
      return (w, i) => children[where.child(i)](w, where.index(i));
    }
    case Type.Dictionary:
      return dictionaryWriter(field, data);
  }
  throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unsupportedType', column: field.name, type: String(field.type) });
}

function structWriter(data: Data): JsonWriter {
  const fields = (data.type as Struct).children;
  const keys = fields.map((f, c) => encoder.encode((c === 0 ? '{' : ',') + JSON.stringify(f.name) + ':'));
  const children = data.children.map((child, c) => jsonWriter(fields[c], child));
  if (children.length === 0) return (w) => w.ascii('{}');
  return (w, i) => {
    for (let c = 0; c < children.length; c++) {
      w.bytes(keys[c]);
      children[c](w, i);
    }
    w.ensure(1);
    w.buf[w.pos++] = CLOSE_BRACE;
  };
}

const INTERVAL_KEYS = {
  months: encoder.encode('{"months":'),
  days: encoder.encode('{"days":'),
  commaDays: encoder.encode(',"days":'),
  commaMilliseconds: encoder.encode(',"milliseconds":'),
  commaNanoseconds: encoder.encode(',"nanoseconds":'),
};

/** Intervals as objects of their stored fields: exact, and mixed signs survive (ISO 8601 durations cannot say P1M-2D). */
function intervalWriter(data: Data): JsonWriter {
  const v = data.values as Int32Array;
  const close = (w: ByteWriter): void => {
    w.ensure(1);
    w.buf[w.pos++] = CLOSE_BRACE;
  };
  switch ((data.type as Interval).unit) {
    case IntervalUnit.YEAR_MONTH:
      return (w, i) => {
        w.bytes(INTERVAL_KEYS.months);
        w.integer(v[i]);
        close(w);
      };
    case IntervalUnit.DAY_TIME:
      return (w, i) => {
        w.bytes(INTERVAL_KEYS.days);
        w.integer(v[2 * i]);
        w.bytes(INTERVAL_KEYS.commaMilliseconds);
        w.integer(v[2 * i + 1]);
        close(w);
      };
    default: {
      const nanos = monthDayNanoNanos(v);
      return (w, i) => {
        w.bytes(INTERVAL_KEYS.months);
        w.integer(v[4 * i]);
        w.bytes(INTERVAL_KEYS.commaDays);
        w.integer(v[4 * i + 1]);
        w.bytes(INTERVAL_KEYS.commaNanoseconds);
        writeInteger(w, nanos(i));
        close(w);
      };
    }
  }
}

function dictionaryWriter(field: Field, data: Data): JsonWriter {
  const valueField = childField(field, data, -1);
  const dictionary = dictionaryLocator(data);
  const writers = dictionary.chunks.map((chunk) => jsonWriter(valueField, chunk));
  return (w, i) => {
    const c = dictionary.chunkOf(i);
    writers[c](w, dictionary.indexIn(c, i));
  };
}

function writeRange(w: ByteWriter, child: JsonWriter, start: number, end: number): void {
  w.ensure(1);
  w.buf[w.pos++] = OPEN_BRACKET;
  for (let j = start; j < end; j++) {
    if (j > start) {
      w.ensure(1);
      w.buf[w.pos++] = COMMA;
    }
    child(w, j);
  }
  w.ensure(1);
  w.buf[w.pos++] = CLOSE_BRACKET;
}

function int64Writer(values: BigInt64Array | BigUint64Array): JsonWriter {
  const read = int64Numbers(values);
  return (w, i) => {
    const v = read(i);
    if (Number.isSafeInteger(v)) w.integer(v);
    else w.ascii(String(values[i])); // beyond 2^53: the exact digits
  };
}

function writeInteger(w: ByteWriter, v: StoredInteger): void {
  if (typeof v === 'number') w.integer(v);
  else w.ascii(String(v));
}

/** Appends an ASCII string that needs no escaping, quoted. */
function writeAsciiString(w: ByteWriter, text: string): void {
  w.ensure(text.length + 2);
  w.buf[w.pos++] = QUOTE;
  w.ascii(text);
  w.buf[w.pos++] = QUOTE;
}

function unsupportedZone(field: Field, zone: string): S2SPError {
  return new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unknownZone', column: field.name, zone });
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
