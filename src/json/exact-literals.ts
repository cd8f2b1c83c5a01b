/**
 * Whether JSON text can be read by `JSON.parse` and still give what the
 * exact reader (exact-json.ts, with `wholeFloats`) gives. `JSON.parse` is
 * native and several times faster; it differs only on number literals that
 * are integers beyond 2^53 (it rounds them), that are floats with a whole
 * value (it forgets they were floats), or that it refuses (bare NaN,
 * Infinity: it throws, so those need no test here).
 *
 * A float literal I.F without an exponent has a whole value only when F is
 * all zeros, or when it rounds to a whole number: with d digits in I and m
 * zeros (or nines) leading F, the distance to the nearest integer is at
 * least 10^-(m+1) of a value below 10^d, which a double keeps apart when
 * d + m < 15. So every literal that may differ matches one of these; the
 * test looks at the raw text, strings included, so it may answer true for
 * text that needs nothing (a long digit string): that only costs speed.
 */
import { holdsUnsafeNumber, parseJsonExact } from './exact-json.js';

// One expression whose branches start on a rare byte (a dot, an exponent
// mark): a branch per digit count made the test cost more than the parse it
// saves. Past the dot: a zero fraction; 10 zeros or nines (d <= 4, and the
// 0.000...1 / 0.999...9 cases); 5 of them after 5 integer digits (d 5..9);
// any fraction after 10 integer digits. Any exponent: rare in practice
// (JavaScript writes them below 1e-6 only), so not worth a finer test.
const MAYBE_WHOLE_FLOAT = /\.(?:0+(?![0-9])|0{10}|9{10}|(?<=[0-9]{5}\.)(?:0{5}|9{5})|(?<=[0-9]{10}\.))|[eE](?<=[0-9][eE])/;

/**
 * Reads JSON text exactly, as `parseJsonExact(text, { wholeFloats: true })` does,
 * by `JSON.parse` when that is sure to give the same: no literal may be a
 * whole float (the text test above) and no number it read is beyond 2^53
 * (an integer literal there was rounded).
 *
 * @throws S2SPError `S2SP_ERR_JSON_SYNTAX` for text that is not JSON (bare NaN/Infinity aside)
 */
export function parseJsonExactFast(text: string): unknown {
  if (!MAYBE_WHOLE_FLOAT.test(text)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Not JSON for JSON.parse (a bare NaN, or an error the exact reader words): read it literally.
      return parseJsonExact(text, { wholeFloats: true });
    }
    if (!holdsUnsafeNumber(value)) return value;
  }
  return parseJsonExact(text, { wholeFloats: true });
}

/**
 * What the exact reader gives for `text`, given what `JSON.parse` gave for
 * it: that value when the two surely agree, else the exact reading.
 */
export function exactFromParsed(text: string, parsed: unknown): unknown {
  if (!MAYBE_WHOLE_FLOAT.test(text) && !holdsUnsafeNumber(parsed)) return parsed;
  return parseJsonExact(text, { wholeFloats: true });
}
