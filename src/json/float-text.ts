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
 *
 * The texts of a run of floats (a column's cells, cell-texts.ts) come at
 * once from the float-text addon
 * (src/native/float-text.cc, built at install when a C++ compiler is there):
 * the same bytes, at a fraction of the cost, which is most of a full JSON
 * fetch's (native-notes.md, "Float text"). Without the addon, or with
 * `S2SP_NATIVE=off` in the environment, floats are formatted here one by one.
 */
import { createRequire } from 'node:module';
import { S2SPError } from '../errors.js';
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
  // A value with a fraction always shows a dot or an exponent, so only a whole value's text is
  // scanned (scanning every text was about a fifth of writing a float: 65 against 53 ns a value).
  // String() writes 1e21 and beyond with an exponent: already a float to any reader.
  if (!Number.isInteger(v)) return text;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === DOT || c === LOWER_E) return text;
  }
  return `${text}.0`;
}

/** The addon's one function: see float-text.cc. */
interface FloatTextAddon {
  formatFloats(values: Float64Array, from: number, to: number, text: Uint8Array, at: number, ends: Uint32Array, endAt: number): number;
}

/** The longest text of one double: "-0.00000" and 17 digits. */
export const MAX_TEXT_BYTES = 25;

let addon: FloatTextAddon | null | undefined;

function loadedAddon(): FloatTextAddon | null {
  if (addon === undefined) {
    addon = null;
    if (process.env.S2SP_NATIVE !== 'off') {
      try {
        // dist/src/json/ -> dist/native/, where src/native/build.mjs puts it.
        addon = createRequire(import.meta.url)('../../native/float-text.node') as FloatTextAddon;
      } catch {
        // Not built here (no compiler at install): JavaScript formats floats.
      }
    }
  }
  return addon;
}

/** True when the addon is loaded, so {@link formatFloatsAt} formats. */
export function floatTextAddonLoaded(): boolean {
  return loadedAddon() !== null;
}

/**
 * Writes the texts of `values[from..to)` into `text` from byte `at` (which
 * has {@link MAX_TEXT_BYTES} of room a value), the end of value i's text at
 * `ends[endAt + i - from]`, as a position in `text`. Returns how many of the
 * values are not finite (their texts are empty: the caller writes their
 * names), or -1 without the addon, when nothing is written.
 * @throws S2SPError `S2SP_ERR_INTERNAL_INVARIANT` should the addon refuse its arguments
 */
export function formatFloatsAt(values: Float64Array, from: number, to: number, text: Uint8Array, at: number, ends: Uint32Array, endAt: number): number {
  const native = loadedAddon();
  if (native === null) return -1;
  const nonFinite = native.formatFloats(values, from, to, text, at, ends, endAt);
  if (nonFinite < 0) throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'floatText' });
  return nonFinite;
}
