import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TimeUnit } from 'apache-arrow';
import { ByteWriter } from '../../src/json/byte-writer.js';
import { date64Text, dateText, durationText, timeText, timestampJsonWriter, timestampText } from '../../src/json/temporal-text.js';
import { offsetResolver, offsetText } from '../../src/table/time-zone.js';

/** The range of a JS Date, in milliseconds: an independent oracle (toISOString) within it. */
const DATE_MS = 8.64e15;
const DAY_MS = 86_400_000;

test('property: a millisecond timestamp reads as toISOString does (without its Z), expanded years included', () => {
  fc.assert(
    fc.property(fc.integer({ min: -DATE_MS, max: DATE_MS }), (ms) => {
      assert.equal(timestampText(ms, TimeUnit.MILLISECOND), new Date(ms).toISOString().slice(0, -1));
    }),
    { numRuns: 2000 },
  );
});

test('property: microsecond and nanosecond timestamps add their digits, also beyond 2^53 (bigints)', () => {
  fc.assert(
    fc.property(fc.integer({ min: -9e12, max: 9e12 }), fc.integer({ min: 0, max: 999_999 }), (ms, sub) => {
      const iso = new Date(ms).toISOString().slice(0, -1);
      const us = BigInt(ms) * 1000n + BigInt(sub % 1000);
      const ns = BigInt(ms) * 1_000_000n + BigInt(sub);
      const asStored = (v: bigint): number | bigint => (Number.isSafeInteger(Number(v)) ? Number(v) : v);
      assert.equal(timestampText(asStored(us), TimeUnit.MICROSECOND), `${iso}${String(sub % 1000).padStart(3, '0')}`);
      assert.equal(timestampText(asStored(ns), TimeUnit.NANOSECOND), `${iso}${String(sub).padStart(6, '0')}`);
    }),
    { numRuns: 2000 },
  );
});

test('property: Date32 days and whole-day Date64 values read as toISOString dates', () => {
  fc.assert(
    fc.property(fc.integer({ min: -1e8, max: 1e8 }), (days) => {
      const iso = new Date(days * DAY_MS).toISOString();
      assert.equal(dateText(days), iso.slice(0, iso.indexOf('T')));
      assert.equal(date64Text(days * DAY_MS), iso.slice(0, iso.indexOf('T')));
    }),
    { numRuns: 2000 },
  );
});

test('seconds timestamps beyond the JS Date range still format (bigint seconds, years past 275760)', () => {
  // Expected values from Python: the Gregorian calendar repeats every 400 years (146,097 days).
  assert.equal(timestampText(2n ** 62n, TimeUnit.SECOND), '+146138514283-06-19T07:45:04');
  assert.equal(timestampText(-(2n ** 63n), TimeUnit.SECOND), '-292277022657-01-27T08:29:52');
});

test('zones: a fixed offset, UTC names, and a named zone across a DST change', () => {
  const utc = offsetResolver('UTC')!;
  assert.equal(timestampText(0, TimeUnit.SECOND, utc), '1970-01-01T00:00:00+00:00');
  const minus = offsetResolver('-03:30')!;
  assert.equal(timestampText(0, TimeUnit.MILLISECOND, minus), '1969-12-31T20:30:00.000-03:30');
  const berlin = offsetResolver('Europe/Berlin')!;
  // 2024-03-31 01:00 UTC: 02:00 CET becomes 03:00 CEST.
  assert.equal(timestampText(1711846799, TimeUnit.SECOND, berlin), '2024-03-31T01:59:59+01:00');
  assert.equal(timestampText(1711846800, TimeUnit.SECOND, berlin), '2024-03-31T03:00:00+02:00');
  // Lord Howe changes by 30 minutes; Kathmandu is +05:45.
  assert.equal(timestampText(1704067200, TimeUnit.SECOND, offsetResolver('Australia/Lord_Howe')), '2024-01-01T11:00:00+11:00');
  assert.equal(timestampText(1720000000, TimeUnit.SECOND, offsetResolver('Australia/Lord_Howe')), '2024-07-03T20:16:40+10:30');
  assert.equal(timestampText(0, TimeUnit.SECOND, offsetResolver('Asia/Kathmandu')), '1970-01-01T05:30:00+05:30');
  assert.equal(timestampText(1704067200, TimeUnit.SECOND, offsetResolver('Asia/Kathmandu')), '2024-01-01T05:45:00+05:45');
  assert.equal(offsetResolver('Mars/Olympus_Mons'), undefined);
  assert.equal(offsetResolver('+25:00'), undefined);
  assert.equal(offsetText(-(5 * 3600 + 30)), '-05:00:30');
});

test('property: a named zone agrees with the hour-by-hour cache switched off (every second near a change)', () => {
  const cached = offsetResolver('America/New_York')!;
  const berlin = offsetResolver('Europe/Berlin')!;
  fc.assert(
    fc.property(fc.integer({ min: -3600, max: 3600 }), (delta) => {
      // Fresh resolvers have empty caches, so each lookup asks ICU for that very second.
      assert.equal(cached(1710054000 + delta), offsetResolver('America/New_York')!(1710054000 + delta));
      assert.equal(berlin(1711846800 + delta), offsetResolver('Europe/Berlin')!(1711846800 + delta));
    }),
    { numRuns: 300 },
  );
});

test('times of day and durations keep the unit digits; signs and big values survive', () => {
  assert.equal(timeText(0, TimeUnit.SECOND), '00:00:00');
  assert.equal(timeText(86_399_999_999_999n, TimeUnit.NANOSECOND), '23:59:59.999999999');
  assert.equal(timeText(90_000, TimeUnit.SECOND), '25:00:00');
  assert.equal(timeText(-1500, TimeUnit.MILLISECOND), '-00:00:01.500');
  assert.equal(durationText(0, TimeUnit.SECOND), 'PT0S');
  assert.equal(durationText(-1, TimeUnit.NANOSECOND), '-PT0.000000001S');
  assert.equal(durationText(-(2n ** 63n), TimeUnit.MICROSECOND), '-PT9223372036854.775808S');
  assert.equal(date64Text(-1), '1969-12-31T23:59:59.999');
});

test('property: the byte-level timestamp writer writes exactly the quoted timestampText, every unit and zone', () => {
  const zones = [undefined, 'UTC', '+05:30', '-09:45', 'America/New_York', 'Australia/Lord_Howe'];
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }),
      fc.constantFrom(TimeUnit.SECOND, TimeUnit.MILLISECOND, TimeUnit.MICROSECOND, TimeUnit.NANOSECOND),
      fc.constantFrom(...zones),
      (wide, near, unit, zone) => {
        const offsetAt = zone === undefined ? undefined : offsetResolver(zone);
        // One writer per column: a second value exercises its cached date and offset bytes.
        const write = timestampJsonWriter(unit, offsetAt);
        const w = new ByteWriter(64);
        const values = [wide, near, near + 1n];
        for (const v of values) {
          write(w, Number(BigInt.asIntN(32, v >> 32n)), Number(BigInt.asIntN(32, v)));
          w.ascii(',');
        }
        const expected = values.map((v) => `${JSON.stringify(timestampText(Number.isSafeInteger(Number(v)) ? Number(v) : v, unit, offsetAt))},`).join('');
        assert.equal(Buffer.from(w.take()).toString('latin1'), expected);
      },
    ),
    { numRuns: 3000 },
  );
});
