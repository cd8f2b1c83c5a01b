/**
 * JSON text <-> JS values without losing integers. `JSON.parse` reads every
 * number as a double, so 12345678901234567891 comes back as
 * 12345678901234567000 without a word; Python's `json` keeps it exact, and
 * so must we (our JSON file reader, our consumer's JSON path, the
 * dispatcher). This is a small parser of its own, not Node 22's reviver
 * `context.source` and `JSON.rawJSON`: measured on those three uses, the
 * reviver route took 2x to 4.3x as long (native-notes.md, "Exact JSON
 * numbers"; `node dist/bench/exact-json.js`), and it can neither read bare
 * NaN nor see index-like keys in document order. What it reads:
 *
 *   - an integer literal (no `.`, no exponent) beyond 2^53 becomes a bigint;
 *     every other number is a JS number, as `JSON.parse` makes it
 *   - `NaN`, `Infinity` and `-Infinity` are read as those numbers, as
 *     Python's `json.loads` reads them (a Python server writes them bare)
 *   - with `wholeFloats`, a float literal with a whole value (`2.0`, `1e3`)
 *     becomes a {@link WholeFloat}, wherever it sits (a row's cell, a list
 *     inside a cell), since a JS number forgets it was written as a float
 *     and Python's `json` types numbers by their text
 *   - everything else is RFC 8259 exactly as `JSON.parse` reads it
 */

import { finiteFloatText, nonFiniteName } from './float-text.js';
import { LiteralReader } from './literal-reader.js';
import { WholeFloat } from './whole-float.js';

/** Options of {@link parseJsonExact}. */
export interface ParseJsonExactOptions {
  /**
   * Give whole-valued float literals as {@link WholeFloat}s, not numbers.
   * Asking for this always takes the slower, literal-reading path.
   */
  wholeFloats?: boolean;
  /**
   * Receives, for each object holding a key that looks like an array index
   * (`"10"`), its keys in document order: a JS object lists such keys
   * first, whatever their place in the text. Reading literally too.
   */
  keyOrders?: Map<object, string[]>;
}

/**
 * Parses JSON text, keeping integers beyond 2^53 exact (as bigints).
 *
 * Without `wholeFloats`, `JSON.parse` reads the text first: if no number it
 * produced is beyond 2^53 in magnitude, no integer lost a digit and that is
 * the answer (the check walks the values, far cheaper than parsing).
 * Otherwise, or for text `JSON.parse` refuses (a bare NaN), the text is read
 * again by our own parser.
 *
 * @throws S2SPError `S2SP_ERR_JSON_SYNTAX` for text that is not JSON (bare NaN/Infinity aside)
 */
export function parseJsonExact(text: string, options: ParseJsonExactOptions = {}): unknown {
  if (options.wholeFloats !== true && options.keyOrders === undefined) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return new LiteralReader(text, false, undefined).document();
    }
    if (!holdsUnsafeNumber(value)) return value;
  }
  return new LiteralReader(text, options.wholeFloats === true, options.keyOrders).document();
}

/** True when any number in `value` is beyond +-2^53 (an integer literal there may have been rounded). */
export function holdsUnsafeNumber(value: unknown): boolean {
  if (typeof value === 'number') return value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsUnsafeNumber(value[i])) return true;
    return false;
  }
  for (const key in value) if (holdsUnsafeNumber((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * Serialises a JS value as `JSON.stringify` does, except where that text
 * would read back as something else:
 *
 *   - a bigint is written as its exact digits (`JSON.stringify` throws);
 *   - a whole number at or beyond 2^53 keeps a float's form
 *     (`100000000000000000000.0`), or an exact reader would take its digits
 *     for an integer and return a bigint;
 *   - -0 is written `-0.0`, not `0`;
 *   - a {@link WholeFloat} keeps its float form (`2.0`);
 *   - NaN and the infinities are the strings `"NaN"`, `"Infinity"` and
 *     `"-Infinity"`, as in a Float64 column (float-text.ts), not `null`.
 */
export function stringifyJsonExact(value: unknown): string {
  if (!needsCare(value)) return JSON.stringify(value);
  // Such values become marker strings no real text holds (a random nonce per
  // call), and each quoted marker is then replaced by the bare number text.
  const nonce = `\u0000s2sp-number-${Math.random().toString(36).slice(2)}-${Date.now().toString(36)}:`;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return nonce + v.toString();
    if (typeof v === 'number' && isDelicate(v)) return nonFiniteName(v) ?? nonce + finiteFloatText(v);
    if (v instanceof WholeFloat) return nonce + finiteFloatText(v.value);
    return v;
  });
  const marker = JSON.stringify(nonce).slice(0, -1);
  return text.replaceAll(new RegExp(`${escapeRegExp(marker)}([-+.0-9e]+)"`, 'g'), '$1');
}

/** -0, not finite (JSON.stringify writes null), or a whole number JSON would write without a fraction that an exact reader takes for an integer beyond 2^53. */
function isDelicate(v: number): boolean {
  return (v === 0 && Object.is(v, -0)) || v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER || v !== v;
}

function needsCare(value: unknown): boolean {
  switch (typeof value) {
    case 'bigint':
      return true;
    case 'number':
      return isDelicate(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (needsCare(value[i])) return true;
    return false;
  }
  if (value instanceof WholeFloat) return true;
  // toJSON (a Date, say) decides its own text; JSON.stringify will call it.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  for (const key in value) if (needsCare((value as Record<string, unknown>)[key])) return true;
  return false;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
