import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decimalText } from '../../src/json/decimal-text.js';

/** The little-endian 32-bit words of `value` in `bits` of two's complement. */
function words(value: bigint, bits: number): Uint32Array {
  return Uint32Array.from({ length: bits / 32 }, (_, k) => Number(BigInt.asUintN(32, BigInt.asUintN(bits, value) >> BigInt(32 * k))));
}

/** Reads decimal text back as an unscaled integer at `scale`, or undefined when it does not land on it exactly. */
function unscaledOf(text: string, scale: number): bigint | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:E([+-]\d+))?$/.exec(text);
  if (m === null) return undefined;
  const digits = BigInt(m[2] + (m[3] ?? ''));
  const exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0) + scale;
  const magnitude = exponent >= 0 ? digits * 10n ** BigInt(exponent) : digits / 10n ** BigInt(-exponent);
  if (exponent < 0 && magnitude * 10n ** BigInt(-exponent) !== digits) return undefined;
  return m[1] === '-' ? -magnitude : magnitude;
}

test('Python str(Decimal) forms: plain, trailing zeros kept, scientific for tiny values and negative scales', () => {
  const cases: Array<[bigint, number, number, string]> = [
    [12345n, 2, 128, '123.45'],
    [-1n, 2, 128, '-0.01'],
    [0n, 2, 128, '0.00'],
    [0n, 0, 128, '0'],
    [1n, 6, 128, '0.000001'],
    [1n, 7, 128, '1E-7'],
    [10n, 7, 128, '0.0000010'],
    [0n, 10, 128, '0E-10'],
    [123n, -2, 128, '1.23E+4'],
    [5n, -1, 32, '5E+1'],
    [-(2n ** 31n), 0, 32, '-2147483648'],
    [-(2n ** 63n), 3, 64, '-9223372036854775.808'],
    [2n ** 255n - 1n, 76, 256, '5.7896044618658097711785492504343953926634992332820282019728792003956564819967'],
  ];
  for (const [value, scale, bits, expected] of cases) assert.equal(decimalText(words(value, bits), 0, bits / 32, scale), expected, `${value}e-${scale}`);
});

test('property: the text is the exact value, for every width and scale', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(32, 64, 128, 256),
      fc.integer({ min: -5, max: 40 }),
      fc.bigInt({ min: -(2n ** 255n), max: 2n ** 255n - 1n }),
      (bits, scale, raw) => {
        const value = BigInt.asIntN(bits, raw);
        const text = decimalText(words(value, bits), 0, bits / 32, scale);
        assert.equal(unscaledOf(text, scale), value, text);
      },
    ),
    { numRuns: 3000 },
  );
});

test('property: values in the fast path (safe integers) and the bigint path agree at the boundary', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 54n), max: 2n ** 54n }), (value) => {
      const text = decimalText(words(value, 128), 0, 4, 3);
      assert.equal(unscaledOf(text, 3), value, text);
    }),
    { numRuns: 2000 },
  );
});
