/**
 * Floats in JSON (README, "JSON encoding of Arrow types"). JSON has no
 * literal for NaN or the infinities: `JSON.stringify` writes null, which
 * cannot be told from a missing value, and Python's `json.dumps` writes bare
 * `NaN`, which strict JSON parsers reject. We write the strings "NaN",
 * "Infinity" and "-Infinity": valid JSON, distinct from null, and what
 * Python's `float()` and JavaScript's `Number()` read back as the number.
 *
 * A finite float is written as the shortest text that reads back as the same
 * double (Float16 and Float32 values widened first, as Python's `float`
 * does), and a whole value keeps a fraction (`2.0`, `-0.0`), so a reader that
 * types numbers by their text (Python's `json`) still sees a float.
 */
import { DOT, LOWER_E } from './bytes.js';

/** The JSON string standing for a non-finite float (undefined for a finite one). */
export function nonFiniteName(v: number): 'NaN' | 'Infinity' | '-Infinity' | undefined {
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return Number.isNaN(v) ? 'NaN' : undefined;
}

/** The value of IEEE 754 half-precision bits (Float16 storage). */
export function float16ToNumber(bits: number): number {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** JSON text of a finite float: JS's shortest round-trip text, with `.0` added to a whole value. */
export function finiteFloatText(v: number): string {
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const text = String(v);
  // String() writes 1e21 and beyond, and tiny values, with an exponent: already a float to any reader.
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === DOT || c === LOWER_E) return text;
  }
  return `${text}.0`;
}
