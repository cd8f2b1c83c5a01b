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

/**
 * A float literal whose value is whole (`2.0`, `-0.0`, `1e3`), as the exact
 * reader gives it with `wholeFloats`: {@link stringifyJsonExact} writes it
 * back as a float and schema inference counts it as one. It stays inside
 * s2sp (tables store the double; rows handed to users hold numbers).
 */
export class WholeFloat {
  /** @param value the number the literal stands for */
  constructor(readonly value: number) {}
}

/**
 * Shared WholeFloats for 0.0 ... 1023.0: whole floats in data are mostly
 * small (magnitudes, depths, counts written as floats), and a column of
 * them would otherwise cost an object per cell. Safe to share: read-only.
 */
const SMALL_WHOLE_FLOATS = Array.from({ length: 1024 }, (_, k) => new WholeFloat(k));

/** The WholeFloat of `v` (a whole number), shared for the small ones. */
function wholeFloat(v: number): WholeFloat {
  // 1 / -0 is -Infinity: -0.0 is its own value, never the shared 0.0.
  return v >= 0 && v < 1024 && (v !== 0 || 1 / v > 0) ? SMALL_WHOLE_FLOATS[v] : new WholeFloat(v);
}

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
 * @throws SyntaxError for text that is not JSON (bare NaN/Infinity aside)
 */
export function parseJsonExact(text: string, options: ParseJsonExactOptions = {}): unknown {
  if (options.wholeFloats !== true && options.keyOrders === undefined) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return parseLiterally(text, false, undefined);
    }
    if (!holdsUnsafeNumber(value)) return value;
  }
  return parseLiterally(text, options.wholeFloats === true, options.keyOrders);
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

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** 10^0 ... 10^22: the powers of ten a double holds exactly. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
/** Keys remembered per position in an object (rows of a table repeat theirs). */
const CACHED_KEYS = 64;

/** A key a JS object lists before the others: an array index (`0`, `10`, not `01` or `-1`). */
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

/**
 * Reads `text` literal by literal. A closure over one `pos` rather than a
 * class: V8 keeps the locals in registers, which made this the faster shape.
 */
function parseLiterally(text: string, wholeFloats: boolean, keyOrders: Map<object, string[]> | undefined): unknown {
  let pos = 0;
  // The k-th key of the last object that had one, when it holds no escapes:
  // found again with one startsWith, and the same string is reused.
  const keyCache: string[] = [];

  const fail = (): never => {
    if (pos >= text.length) throw new SyntaxError('Unexpected end of JSON input');
    throw new SyntaxError(`Unexpected token ${JSON.stringify(text[pos])} in JSON at position ${pos}`);
  };

  const skipSpace = (): number => {
    let c = text.charCodeAt(pos);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++pos);
    return c;
  };

  /** Reads a string at `pos` (on its opening quote); `plain` says it held no escapes. */
  let plain = true;
  const string = (): string => {
    const start = ++pos;
    let c = text.charCodeAt(pos);
    plain = true;
    while (c !== QUOTE) {
      if (c === BACKSLASH) {
        plain = false;
        c = text.charCodeAt((pos += 2));
        continue;
      }
      // c !== c: NaN, the end of the text.
      if (c < 0x20 || c !== c) fail();
      c = text.charCodeAt(++pos);
    }
    pos++;
    // Escapes are rare: JSON.parse decodes (and checks) them.
    return plain ? text.slice(start, pos - 1) : (JSON.parse(text.slice(start - 1, pos)) as string);
  };

  const number = (): number | bigint | WholeFloat => {
    const start = pos;
    let c = text.charCodeAt(pos);
    const negative = c === MINUS;
    if (negative) {
      if (text.startsWith('Infinity', pos + 1)) {
        pos += 9;
        return -Infinity;
      }
      c = text.charCodeAt(++pos);
    }
    // All digits, integer and fraction, summed as we go: exact while there
    // are at most 15 significant ones.
    let mantissa = 0;
    let significant = 0;
    if (c === ZERO) {
      c = text.charCodeAt(++pos);
    } else if (c >= ONE && c <= NINE) {
      do {
        mantissa = mantissa * 10 + (c - ZERO);
        significant++;
        c = text.charCodeAt(++pos);
      } while (c >= ZERO && c <= NINE);
    } else {
      fail();
    }
    const integerEnd = pos;
    let fractionDigits = 0;
    let exponent = 0;
    let isFloat = false;
    if (c === DOT) {
      isFloat = true;
      c = text.charCodeAt(++pos);
      if (!(c >= ZERO && c <= NINE)) fail();
      do {
        mantissa = mantissa * 10 + (c - ZERO);
        if (mantissa !== 0) significant++;
        fractionDigits++;
        c = text.charCodeAt(++pos);
      } while (c >= ZERO && c <= NINE);
    }
    if (c === LOWER_E || c === UPPER_E) {
      isFloat = true;
      c = text.charCodeAt(++pos);
      const negativeExponent = c === MINUS;
      if (c === PLUS || c === MINUS) c = text.charCodeAt(++pos);
      if (!(c >= ZERO && c <= NINE)) fail();
      do {
        if (exponent < 1e6) exponent = exponent * 10 + (c - ZERO);
        c = text.charCodeAt(++pos);
      } while (c >= ZERO && c <= NINE);
      if (negativeExponent) exponent = -exponent;
    }
    if (isFloat) {
      // Clinger's fast path: an exact mantissa times or over an exact power
      // of ten is one correctly rounded operation, the double Number() gives.
      const scale = exponent - fractionDigits;
      let v: number;
      if (significant <= 15 && scale >= -22 && scale <= 22) {
        v = scale >= 0 ? mantissa * POWERS_OF_TEN[scale] : mantissa / POWERS_OF_TEN[-scale];
        if (negative) v = -v;
      } else v = Number(text.slice(start, pos));
      return wholeFloats && Number.isInteger(v) ? wholeFloat(v) : v;
    }
    if (significant <= 15) return negative ? -mantissa : mantissa;
    const literal = text.slice(start, integerEnd);
    const n = Number(literal);
    return Number.isSafeInteger(n) ? n : BigInt(literal);
  };

  const object = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    pos++;
    let c = skipSpace();
    if (c === CLOSE_BRACE) {
      pos++;
      return out;
    }
    /** This object's keys in document order, once one of them is an array index. */
    let order: string[] | undefined;
    for (let k = 0; ; k++) {
      if (c !== QUOTE) fail();
      let key = k < CACHED_KEYS ? keyCache[k] : undefined;
      if (key !== undefined && text.charCodeAt(pos + 1 + key.length) === QUOTE && text.startsWith(key, pos + 1)) {
        pos += key.length + 2;
      } else {
        key = string();
        if (plain && k < CACHED_KEYS) keyCache[k] = key;
      }
      if (keyOrders !== undefined) {
        // Keys before the first index-like one are in insertion order already.
        if (order !== undefined) order.push(key);
        else if (key.charCodeAt(0) <= NINE && INDEX_KEY.test(key) && Number(key) < 4294967295) {
          order = Object.keys(out);
          order.push(key);
          keyOrders.set(out, order);
        }
      }
      if (skipSpace() !== COLON) fail();
      pos++;
      const v = value();
      // JSON.parse makes "__proto__" an own key; assignment would set the prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      c = skipSpace();
      pos++;
      if (c === COMMA) {
        c = skipSpace();
        continue;
      }
      if (c === CLOSE_BRACE) return out;
      pos--;
      fail();
    }
  };

  const array = (): unknown[] => {
    const out: unknown[] = [];
    pos++;
    if (skipSpace() === CLOSE_BRACKET) {
      pos++;
      return out;
    }
    for (;;) {
      out.push(value());
      const c = skipSpace();
      pos++;
      if (c === COMMA) continue;
      if (c === CLOSE_BRACKET) return out;
      pos--;
      fail();
    }
  };

  const literal = (word: string): boolean => {
    if (!text.startsWith(word, pos)) return false;
    pos += word.length;
    return true;
  };

  const value = (): unknown => {
    const c = skipSpace();
    if (c === QUOTE) return string();
    if (c === OPEN_BRACE) return object();
    if (c === OPEN_BRACKET) return array();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return number();
    if (literal('true')) return true;
    if (literal('false')) return false;
    if (literal('null')) return null;
    if (literal('NaN')) return NaN;
    if (literal('Infinity')) return Infinity;
    return fail();
  };

  let result: unknown;
  try {
    result = value();
  } catch (error) {
    // Deep nesting overflows this recursion before JSON.parse's own limit.
    if (error instanceof RangeError) throw new SyntaxError(`JSON nested too deeply at position ${pos}`, { cause: error });
    throw error;
  }
  skipSpace();
  if (pos < text.length) fail();
  return result;
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
