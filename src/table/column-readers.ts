/**
 * Per-chunk readers for one column: `(i) => JS value`, for rows handed to
 * user code and to the envelope object. Element `i` reads as the JSON value
 * json-column-writers.ts writes for it (README, "JSON encoding of Arrow
 * types"), with one difference JSON text has and JS values cannot: an
 * integer beyond 2^53 is a bigint, not a rounded number. So for any table,
 * `rowsFromTable(t)` equals `parseJsonExact` of the JSON body of `t`.
 *
 * Common types read the typed arrays directly (column-access.ts has the
 * layout); nested types read through their children's readers.
 */
import {
  DateUnit,
  IntervalUnit,
  Precision,
  Type,
  type Data,
  type Date_,
  type Decimal,
  type Duration,
  type Field,
  type FixedSizeList,
  type Float,
  type Int,
  type Interval,
  type Map_,
  type Struct,
  type Time,
  type Timestamp,
  type Union,
} from 'apache-arrow';
import { S2SPError } from '../errors.js';
import {
  bytesReader,
  childField,
  dictionaryLocator,
  int64Values,
  monthDayNanoNanos,
  offsetReader,
  storedIntegers,
  unionLocator,
  validity,
} from './column-access.js';
import { decimalText } from './decimal-text.js';
import { parseJsonExact } from './exact-json.js';
import { float16ToNumber, nonFiniteName } from './float-text.js';
import { isJsonField } from './json-column.js';
import { date64Text, dateText, durationText, timeText, timestampText } from './temporal-text.js';
import { offsetResolver } from './time-zone.js';

/** Reads element `i` of one chunk as a plain JS value. */
export type ValueReader = (i: number) => unknown;

/** A JS-value reader for `data`, the chunk of `field` in one batch. */
export function valueReader(field: Field, data: Data): ValueReader {
  if (data.typeId === Type.Null) return () => null;
  const valid = validity(data);
  const read = rawValueReader(field, data);
  return valid ? (i) => (valid(i) ? read(i) : null) : read;
}

/** A float as its JSON value: the number, or "NaN" / "Infinity" / "-Infinity". */
export function floatValue(v: number): number | string {
  return Number.isFinite(v) ? v : (nonFiniteName(v) as string);
}

function rawValueReader(field: Field, data: Data): ValueReader {
  switch (data.typeId) {
    case Type.Int: {
      if ((data.type as Int).bitWidth === 64) return int64Values(data.values as BigInt64Array | BigUint64Array);
      const values = data.values as ArrayLike<number>;
      return (i) => values[i];
    }
    case Type.Float: {
      const values = data.values as ArrayLike<number>;
      if ((data.type as Float).precision === Precision.HALF) return (i) => floatValue(float16ToNumber(values[i]));
      return (i) => {
        const v = values[i];
        return Number.isFinite(v) ? v : floatValue(v);
      };
    }
    case Type.Bool: {
      const bits = data.values as Uint8Array;
      const offset = data.offset;
      return (i) => (bits[(offset + i) >> 3] & (1 << ((offset + i) & 7))) !== 0;
    }
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Utf8View: {
      const text = textReader(data);
      if (isJsonField(field)) return (i) => parseJsonExact(text(i));
      return text;
    }
    case Type.Binary:
    case Type.LargeBinary:
    case Type.BinaryView:
    case Type.FixedSizeBinary: {
      const read = bytesReader(data);
      return (i) => {
        const bytes = read(i);
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
      };
    }
    case Type.Decimal: {
      const words = data.values as Uint32Array;
      const { scale, bitWidth } = data.type as Decimal;
      const stride = bitWidth / 32;
      return (i) => decimalText(words, i, stride, scale);
    }
    case Type.Date: {
      if ((data.type as Date_).unit === DateUnit.DAY) {
        const days = data.values as Int32Array;
        return (i) => dateText(days[i]);
      }
      const read = int64Values(data.values as BigInt64Array);
      return (i) => date64Text(read(i));
    }
    case Type.Timestamp: {
      const { unit, timezone } = data.type as Timestamp;
      const offsetAt = timezone ? offsetResolver(timezone) : undefined;
      if (timezone && offsetAt === undefined) {
        throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unknownZone', column: field.name, zone: timezone });
      }
      const read = int64Values(data.values as BigInt64Array);
      return (i) => timestampText(read(i), unit, offsetAt);
    }
    case Type.Time: {
      const unit = (data.type as Time).unit;
      const read = storedIntegers(data);
      return (i) => timeText(read(i), unit);
    }
    case Type.Duration: {
      const unit = (data.type as Duration).unit;
      const read = int64Values(data.values as BigInt64Array);
      return (i) => durationText(read(i), unit);
    }
    case Type.Interval: {
      const v = data.values as Int32Array;
      switch ((data.type as Interval).unit) {
        case IntervalUnit.YEAR_MONTH:
          return (i) => ({ months: v[i] });
        case IntervalUnit.DAY_TIME:
          return (i) => ({ days: v[2 * i], milliseconds: v[2 * i + 1] });
        default: {
          const nanos = monthDayNanoNanos(v);
          return (i) => ({ months: v[4 * i], days: v[4 * i + 1], nanoseconds: nanos(i) });
        }
      }
    }
    case Type.List:
    case Type.LargeList: {
      const offset = offsetReader(data);
      const child = valueReader(childField(field, data, 0), data.children[0]);
      return (i) => readRange(child, offset(i), offset(i + 1));
    }
    case Type.FixedSizeList: {
      const size = (data.type as FixedSizeList).listSize;
      const child = valueReader(childField(field, data, 0), data.children[0]);
      return (i) => readRange(child, i * size, (i + 1) * size);
    }
    case Type.Struct: {
      const fields = (data.type as Struct).children;
      const names = fields.map((f) => f.name);
      const children = data.children.map((child, c) => valueReader(fields[c], child));
      return (i) => {
        const out: Record<string, unknown> = {};
        for (let c = 0; c < children.length; c++) setOwn(out, names[c], children[c](i));
        return out;
      };
    }
    case Type.Map: {
      const offset = offsetReader(data);
      const entries = data.children[0];
      const entriesType = (data.type as Map_).children[0].type as Struct;
      const key = valueReader(entriesType.children[0], entries.children[0]);
      const value = valueReader(entriesType.children[1], entries.children[1]);
      return (i) => {
        const out: unknown[][] = [];
        for (let j = offset(i); j < offset(i + 1); j++) out.push([key(j), value(j)]);
        return out;
      };
    }
    case Type.Union: {
      const where = unionLocator(data);
      const fields = (data.type as Union).children;
      const children = data.children.map((child, c) => valueReader(fields[c], child));
      return (i) => children[where.child(i)](where.index(i));
    }
    case Type.Dictionary: {
      const valueField = childField(field, data, -1);
      const dictionary = dictionaryLocator(data);
      const readers = dictionary.chunks.map((chunk) => valueReader(valueField, chunk));
      return (i) => {
        const c = dictionary.chunkOf(i);
        return readers[c](dictionary.indexIn(c, i));
      };
    }
  }
  throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unsupportedType', column: field.name, type: String(field.type) });
}

/** Decodes string `i` of a Utf8 chunk without copying the value buffer first. */
function textReader(data: Data): (i: number) => string {
  if (data.typeId === Type.Utf8) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return (i) => buffer.toString('utf8', offsets[i], offsets[i + 1]);
  }
  const read = bytesReader(data);
  return (i) => {
    const bytes = read(i);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  };
}

function readRange(child: ValueReader, start: number, end: number): unknown[] {
  const out = new Array<unknown>(end - start);
  for (let j = start; j < end; j++) out[j - start] = child(j);
  return out;
}

/** Sets `key` as an own property: a struct field named `__proto__` must not set the prototype. */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
