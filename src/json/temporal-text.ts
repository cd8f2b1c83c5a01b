/**
 * ISO 8601 text for Arrow's temporal values (README, "JSON encoding of Arrow
 * types"), exact to the unit:
 *
 *   Date32                 2024-01-02
 *   Date64                 2024-01-02 (a value that is not a whole day: 2024-01-02T03:04:05.006)
 *   Timestamp[us]          2024-01-02T03:04:05.123456
 *   Timestamp[ms, +05:30]  2024-01-02T08:34:05.123+05:30   (local time in the zone, then its offset)
 *   Time64[ns]             03:04:05.123456789
 *   Duration[ms]           PT93784.005S, -PT0.250S
 *
 * The fraction always has the unit's digits (none for seconds, 3, 6 or 9),
 * so every value of a column has the same shape and no precision is hidden.
 * Years outside 0000-9999 use ISO 8601's expanded form: a sign and at least
 * six digits (+275760-09-13), as JavaScript's `toISOString` does.
 *
 * Values arrive as the stored integer: a number when it is a safe integer,
 * a bigint beyond (nanosecond timestamps usually are).
 */
import type { ByteWriter } from './byte-writer.js';
import { offsetText, type OffsetAt } from '../table/time-zone.js';
import { COLON, DOT, QUOTE, ZERO } from './bytes.js';

/** Fraction digits per Arrow TimeUnit (SECOND, MILLISECOND, MICROSECOND, NANOSECOND). */
const UNIT_DIGITS = [0, 3, 6, 9] as const;
/** Units per second per Arrow TimeUnit. */
const PER_SECOND = [1, 1e3, 1e6, 1e9] as const;
const DAY_SECONDS = 86_400;
const DAY_MS = 86_400_000;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An integer as stored: a number when safe, a bigint beyond. */
export type StoredInteger = number | bigint;

/** `YYYY-MM-DD` for days since 1970-01-01 (proleptic Gregorian). */
export function dateText(days: number): string {
  // Howard Hinnant's civil_from_days, in doubles (exact for any Date32).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${yearText(year)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Date64 (milliseconds): the date, with the time of day only when there is one. */
export function date64Text(ms: StoredInteger): string {
  const { whole: days, rest } = floorSplit(ms, DAY_MS);
  const date = dateText(Number(days));
  if (rest === 0) return date;
  return `${date}T${clockText(Math.floor(rest / 1000), rest % 1000, 3)}`;
}

/**
 * A timestamp: date `T` time with the unit's fraction digits; with a zone,
 * the local time there followed by its UTC offset.
 * @param unit Arrow TimeUnit (0 = s ... 3 = ns)
 */
export function timestampText(value: StoredInteger, unit: number, offsetAt?: OffsetAt): string {
  const { whole: seconds, rest: fraction } = floorSplit(value, PER_SECOND[unit]);
  const offset = offsetAt === undefined ? 0 : offsetAt(Number(seconds));
  const { whole: days, rest: secondOfDay } =
    typeof seconds === 'number' ? floorSplit(seconds + offset, DAY_SECONDS) : floorSplit(seconds + BigInt(offset), DAY_SECONDS);
  const text = `${dateText(Number(days))}T${clockText(secondOfDay, fraction, UNIT_DIGITS[unit])}`;
  return offsetAt === undefined ? text : text + offsetText(offset);
}

/** A time of day: `HH:MM:SS` and the unit's fraction (a value outside a day keeps counting hours, or takes a minus sign). */
export function timeText(value: StoredInteger, unit: number): string {
  const negative = value < 0;
  const { whole: seconds, rest: fraction } = floorSplit(negative ? -value : value, PER_SECOND[unit]);
  return (negative ? '-' : '') + clockText(Number(seconds), fraction, UNIT_DIGITS[unit]);
}

/** An ISO 8601 duration in seconds with the unit's fraction: `PT5.000S`, `-PT0.000250S`. */
export function durationText(value: StoredInteger, unit: number): string {
  const negative = value < 0;
  const { whole: seconds, rest: fraction } = floorSplit(negative ? -value : value, PER_SECOND[unit]);
  const digits = UNIT_DIGITS[unit];
  return `${negative ? '-' : ''}PT${seconds}${digits === 0 ? '' : `.${pad(fraction, digits)}`}S`;
}

/** `HH:MM:SS` plus `.` and `digits` fraction digits (none when `digits` is 0). */
function clockText(secondOfDay: number, fraction: number, digits: number): string {
  const hours = Math.floor(secondOfDay / 3600);
  const minutes = Math.floor((secondOfDay % 3600) / 60);
  const text = `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(secondOfDay % 60, 2)}`;
  return digits === 0 ? text : `${text}.${pad(fraction, digits)}`;
}

function yearText(year: number): string {
  if (year >= 0 && year <= 9999) return pad(year, 4);
  return (year < 0 ? '-' : '+') + pad(Math.abs(year), 6);
}

function pad(n: number, width: number): string {
  const text = String(n);
  return text.length >= width ? text : '0'.repeat(width - text.length) + text;
}

/** Floor division: `whole * divisor + rest === value`, `0 <= rest < divisor`; `whole` a number when safe. */
function floorSplit(value: StoredInteger, divisor: number): { whole: StoredInteger; rest: number } {
  if (typeof value === 'number') {
    let whole = Math.floor(value / divisor);
    // The double division can land one off near a multiple; the remainder says which way.
    let rest = value - whole * divisor;
    if (rest < 0) {
      whole -= 1;
      rest += divisor;
    } else if (rest >= divisor) {
      whole += 1;
      rest -= divisor;
    }
    return { whole, rest };
  }
  const d = BigInt(divisor);
  let whole = value / d;
  let rest = value % d;
  if (rest < 0n) {
    whole -= 1n;
    rest += d;
  }
  return { whole: whole >= -MAX_SAFE && whole <= MAX_SAFE ? Number(whole) : whole, rest: Number(rest) };
}

const TWO_32 = 4294967296;
/** Largest |seconds| the fast path computes in doubles. */
const FAST_SECONDS = 2 ** 52;
const DIGIT_PAIRS = Uint8Array.from({ length: 200 }, (_, k) => ZERO + (k & 1 ? (k >> 1) % 10 : Math.floor((k >> 1) / 10)));

/**
 * Writes one column's timestamps as quoted JSON text straight into a
 * ByteWriter: the same text as {@link timestampText}, without building
 * strings. The stored int64 arrives as its two 32-bit words, split into
 * seconds and fraction exactly without a bigint: a double quotient, then the
 * remainder recomputed modulo 2^32 (it is small, so that is all of it). A
 * day's date bytes are kept, since neighbouring rows usually share a day.
 * @param unit Arrow TimeUnit (0 = s ... 3 = ns)
 */
export function timestampJsonWriter(unit: number, offsetAt?: OffsetAt): (w: ByteWriter, high: number, low: number) => void {
  const perSecond = PER_SECOND[unit];
  const digits = UNIT_DIGITS[unit];
  const offsetBytes = new Map<number, Uint8Array>();
  let lastDay = NaN;
  let dateBytes: Uint8Array = new Uint8Array(0);
  return (w, high, low) => {
    const approx = high * TWO_32 + (low >>> 0);
    let seconds = Math.floor(approx / perSecond);
    if (!(Math.abs(seconds) < FAST_SECONDS)) {
      w.quotedAscii(timestampText((BigInt(high) << 32n) | BigInt(low >>> 0), unit, offsetAt));
      return;
    }
    // value - seconds * perSecond is within (-2^31, 2^31): its low 32 bits are all of it.
    const secondsLow = seconds - Math.floor(seconds / TWO_32) * TWO_32;
    let fraction = ((low >>> 0) - (Math.imul(secondsLow, perSecond) >>> 0)) | 0;
    while (fraction < 0) {
      fraction += perSecond;
      seconds -= 1;
    }
    while (fraction >= perSecond) {
      fraction -= perSecond;
      seconds += 1;
    }
    const offset = offsetAt === undefined ? 0 : offsetAt(seconds);
    const local = seconds + offset;
    const day = Math.floor(local / DAY_SECONDS);
    const secondOfDay = local - day * DAY_SECONDS;
    if (day !== lastDay) {
      lastDay = day;
      dateBytes = asciiBytes(dateText(day));
    }
    let zone: Uint8Array | undefined;
    if (offsetAt !== undefined) {
      zone = offsetBytes.get(offset);
      if (zone === undefined) offsetBytes.set(offset, (zone = asciiBytes(offsetText(offset))));
    }
    w.ensure(dateBytes.length + 24 + (zone?.length ?? 0));
    const buf = w.buf;
    let pos = w.pos;
    buf[pos++] = QUOTE;
    buf.set(dateBytes, pos);
    pos += dateBytes.length;
    buf[pos++] = 0x54; // 'T'
    pos = pair(buf, pos, Math.floor(secondOfDay / 3600));
    buf[pos++] = COLON;
    pos = pair(buf, pos, Math.floor((secondOfDay % 3600) / 60));
    buf[pos++] = COLON;
    pos = pair(buf, pos, secondOfDay % 60);
    if (digits > 0) {
      buf[pos++] = DOT;
      for (let k = digits - 1; k >= 0; k--) {
        buf[pos + k] = ZERO + (fraction % 10);
        fraction = Math.floor(fraction / 10);
      }
      pos += digits;
    }
    if (zone !== undefined) {
      buf.set(zone, pos);
      pos += zone.length;
    }
    buf[pos++] = QUOTE;
    w.pos = pos;
  };
}

/** Writes 0-99 as two digits. */
function pair(buf: Uint8Array, pos: number, n: number): number {
  buf[pos] = DIGIT_PAIRS[2 * n];
  buf[pos + 1] = DIGIT_PAIRS[2 * n + 1];
  return pos + 2;
}

function asciiBytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}
