/**
 * The UTC offset of an Arrow timestamp's zone at a given instant. Arrow names
 * a zone as an IANA name (`America/New_York`, `UTC`) or a fixed offset
 * (`+05:30`); a zoned timestamp is written as the local time in its zone plus
 * that offset, as Python's `str(datetime)` writes it.
 *
 * Named zones go through ICU (`Intl.DateTimeFormat`), a few microseconds per
 * call, so offsets are cached per hour of UTC time: an hour whose first and
 * last second share an offset has it throughout (zone rules change at most
 * once within an hour).
 */

/** Seconds east of UTC at `epochSeconds` (a whole number of seconds since 1970). */
export type OffsetAt = (epochSeconds: number) => number;

const FIXED_OFFSET = /^([+-])(\d{2}):?(\d{2})$/;
const UTC_NAMES = new Set(['UTC', 'Z', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Zulu', 'Etc/Zulu', 'Etc/Universal', 'Universal']);
const LONG_OFFSET = /^GMT(?:([+-])(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?)?$/;
/** The instants JS Date can hold, in seconds; ICU is asked about the nearest one beyond. */
const DATE_LIMIT_SECONDS = 8.64e12;
const HOUR = 3600;
const MAX_CACHED_HOURS = 1 << 16;

/**
 * The offset function of an Arrow time zone, or undefined when the zone is
 * neither a fixed offset nor a name ICU knows.
 */
export function offsetResolver(zone: string): OffsetAt | undefined {
  if (UTC_NAMES.has(zone)) return () => 0;
  const fixed = FIXED_OFFSET.exec(zone);
  if (fixed !== null) {
    const hours = Number(fixed[2]);
    const minutes = Number(fixed[3]);
    if (hours > 23 || minutes > 59) return undefined;
    const seconds = (fixed[1] === '-' ? -1 : 1) * (hours * HOUR + minutes * 60);
    return () => seconds;
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  } catch {
    return undefined;
  }
  return cachedByHour((epochSeconds) => icuOffset(format, epochSeconds));
}

function icuOffset(format: Intl.DateTimeFormat, epochSeconds: number): number {
  const clamped = Math.max(-DATE_LIMIT_SECONDS, Math.min(DATE_LIMIT_SECONDS, epochSeconds));
  const name = format.formatToParts(new Date(clamped * 1000)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = LONG_OFFSET.exec(name);
  if (m === null || m[1] === undefined) return 0;
  const seconds = Number(m[2]) * HOUR + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
  return m[1] === '-' ? -seconds : seconds;
}

function cachedByHour(lookup: OffsetAt): OffsetAt {
  // hour -> its offset, or NaN when the offset changes within that hour.
  const cache = new Map<number, number>();
  return (epochSeconds) => {
    const hour = Math.floor(epochSeconds / HOUR);
    let offset = cache.get(hour);
    if (offset === undefined) {
      if (cache.size >= MAX_CACHED_HOURS) cache.clear();
      const first = lookup(hour * HOUR);
      offset = first === lookup(hour * HOUR + HOUR - 1) ? first : NaN;
      cache.set(hour, offset);
    }
    return Number.isNaN(offset) ? lookup(epochSeconds) : offset;
  };
}

/** `+HH:MM`, or `+HH:MM:SS` when the offset has seconds (as Python writes a UTC offset). */
export function offsetText(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const abs = Math.abs(seconds);
  const hh = Math.floor(abs / HOUR);
  const mm = Math.floor((abs % HOUR) / 60);
  const ss = abs % 60;
  const text = `${sign}${pad2(hh)}:${pad2(mm)}`;
  return ss === 0 ? text : `${text}:${pad2(ss)}`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
