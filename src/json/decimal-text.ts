/**
 * Exact decimal text for Arrow Decimal32/64/128/256 values, written the way
 * Python's `str(decimal.Decimal)` writes them (what the Python reference's
 * `json.dumps(..., default=str)` sends): `123.45`, `-0.01`, `0.00`, and
 * scientific notation where Python uses it (`1E-10` for a tiny value at a
 * large scale, `1.23E+4` for a negative scale).
 *
 * Storage: `stride` little-endian 32-bit words per value (bitWidth / 32), the
 * unscaled integer in two's complement; the value is unscaled * 10^-scale.
 */

const TWO_32 = 4294967296;
/** Below 2^21 in the second word, the two low words are a safe integer. */
const SAFE_HIGH = 0x200000;

/** The decimal text of value `i` in `words`. */
export function decimalText(words: Uint32Array, i: number, stride: number, scale: number): string {
  const at = i * stride;
  let negative: boolean;
  let digits: string;
  const fast = smallUnscaled(words, at, stride);
  if (fast !== undefined) {
    negative = fast < 0;
    digits = String(Math.abs(fast));
  } else {
    let value = 0n;
    for (let k = stride - 1; k >= 0; k--) value = (value << 32n) | BigInt(words[at + k]);
    value = BigInt.asIntN(stride * 32, value);
    negative = value < 0n;
    digits = (negative ? -value : value).toString();
  }
  return (negative ? '-' : '') + pythonDecimalText(digits, -scale);
}

/** The unscaled value as a number when it is a safe integer (the common case), else undefined. */
function smallUnscaled(words: Uint32Array, at: number, stride: number): number | undefined {
  if (stride === 1) return words[at] | 0;
  const high = words[at + 1];
  const fill = high >= 0x80000000 ? 0xffffffff : 0;
  for (let k = 2; k < stride; k++) if (words[at + k] !== fill) return undefined;
  if (fill === 0) return high < SAFE_HIGH ? high * TWO_32 + words[at] : undefined;
  // Negative: the two low words as a signed 64-bit value.
  return high >= 0x100000000 - SAFE_HIGH ? (high - TWO_32) * TWO_32 + words[at] : undefined;
}

/**
 * Python's Decimal.__str__ for a non-negative coefficient `digits` and an
 * exponent: plain notation when the exponent is <= 0 and the adjusted
 * exponent is >= -6, scientific otherwise.
 */
function pythonDecimalText(digits: string, exponent: number): string {
  const leftDigits = exponent + digits.length;
  const dotPlace = exponent <= 0 && leftDigits > -6 ? leftDigits : 1;
  let text: string;
  if (dotPlace <= 0) text = `0.${'0'.repeat(-dotPlace)}${digits}`;
  else if (dotPlace >= digits.length) text = digits + '0'.repeat(dotPlace - digits.length);
  else text = `${digits.slice(0, dotPlace)}.${digits.slice(dotPlace)}`;
  if (leftDigits === dotPlace) return text;
  const e = leftDigits - dotPlace;
  return `${text}E${e < 0 ? '-' : '+'}${Math.abs(e)}`;
}
