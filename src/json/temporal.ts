/**
 * Dates, times, timestamps, durations and intervals in JSON, each type's
 * writer beside its reader: ISO 8601 text exact to the unit
 * (temporal-text.ts), intervals as objects of their stored fields (exact,
 * and mixed signs survive: ISO 8601 durations cannot say P1M-2D).
 */
import { DateUnit, IntervalUnit, type Data, type Date_, type Duration, type Field, type Interval, type Time, type Timestamp } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { offsetResolver } from '../table/time-zone.js';
import type { ByteWriter } from './byte-writer.js';
import { CLOSE_BRACE } from './bytes.js';
import { int64Values, monthDayNanoNanos, storedIntegers } from './column-access.js';
import type { JsonCodec } from './json-codec.js';
import { date64Text, dateText, durationText, timeText, timestampJsonWriter, timestampText, type StoredInteger } from './temporal-text.js';

/** A codec whose JSON is its reader's text, quoted. */
function quotedText(read: (i: number) => string): JsonCodec {
  return { write: (w, i) => w.quotedAscii(read(i)), read };
}

export function dateCodec(_field: Field, data: Data): JsonCodec {
  if ((data.type as Date_).unit === DateUnit.DAY) {
    const days = data.values as Int32Array;
    return quotedText((i) => dateText(days[i]));
  }
  const read = int64Values(data.values as BigInt64Array);
  return quotedText((i) => date64Text(read(i)));
}

export function timestampCodec(field: Field, data: Data): JsonCodec {
  const { unit, timezone } = data.type as Timestamp;
  const offsetAt = timezone ? offsetResolver(timezone) : undefined;
  if (timezone && offsetAt === undefined) {
    throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unknownZone', column: field.name, zone: timezone });
  }
  const values = data.values as BigInt64Array;
  // The writer splits the stored int64 from its two 32-bit words, without a bigint.
  const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  const write = timestampJsonWriter(unit, offsetAt);
  const stored = int64Values(values);
  return { write: (w, i) => write(w, words[2 * i + 1], words[2 * i]), read: (i) => timestampText(stored(i), unit, offsetAt) };
}

export function timeCodec(_field: Field, data: Data): JsonCodec {
  const unit = (data.type as Time).unit;
  const read = storedIntegers(data);
  return quotedText((i) => timeText(read(i), unit));
}

export function durationCodec(_field: Field, data: Data): JsonCodec {
  const unit = (data.type as Duration).unit;
  const read = int64Values(data.values as BigInt64Array);
  return quotedText((i) => durationText(read(i), unit));
}

const INTERVAL_KEYS = {
  months: Buffer.from('{"months":'),
  days: Buffer.from('{"days":'),
  commaDays: Buffer.from(',"days":'),
  commaMilliseconds: Buffer.from(',"milliseconds":'),
  commaNanoseconds: Buffer.from(',"nanoseconds":'),
};

export function intervalCodec(_field: Field, data: Data): JsonCodec {
  const v = data.values as Int32Array;
  switch ((data.type as Interval).unit) {
    case IntervalUnit.YEAR_MONTH:
      return {
        write: (w, i) => {
          w.bytes(INTERVAL_KEYS.months);
          w.integer(v[i]);
          close(w);
        },
        read: (i) => ({ months: v[i] }),
      };
    case IntervalUnit.DAY_TIME:
      return {
        write: (w, i) => {
          w.bytes(INTERVAL_KEYS.days);
          w.integer(v[2 * i]);
          w.bytes(INTERVAL_KEYS.commaMilliseconds);
          w.integer(v[2 * i + 1]);
          close(w);
        },
        read: (i) => ({ days: v[2 * i], milliseconds: v[2 * i + 1] }),
      };
    default: {
      const nanos = monthDayNanoNanos(v);
      return {
        write: (w, i) => {
          w.bytes(INTERVAL_KEYS.months);
          w.integer(v[4 * i]);
          w.bytes(INTERVAL_KEYS.commaDays);
          w.integer(v[4 * i + 1]);
          w.bytes(INTERVAL_KEYS.commaNanoseconds);
          writeStoredInteger(w, nanos(i));
          close(w);
        },
        read: (i) => ({ months: v[4 * i], days: v[4 * i + 1], nanoseconds: nanos(i) }),
      };
    }
  }
}

function close(w: ByteWriter): void {
  w.ensure(1);
  w.buf[w.pos++] = CLOSE_BRACE;
}

function writeStoredInteger(w: ByteWriter, v: StoredInteger): void {
  if (typeof v === 'number') w.integer(v);
  else w.ascii(String(v));
}
