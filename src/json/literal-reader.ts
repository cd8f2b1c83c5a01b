/**
 * The exact reader's own parser (exact-json.ts says when it runs): JSON
 * text read literal by literal, so an integer beyond 2^53 becomes a bigint,
 * bare NaN and Infinity are read as Python's `json.loads` reads them, whole
 * float literals can become WholeFloats and objects can report their keys in
 * document order. One reader per text; its methods are the grammar's parts.
 */
import { S2SPError } from '../errors.js';
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  CR,
  DOT,
  LF,
  LOWER_E,
  MINUS,
  NINE,
  ONE,
  OPEN_BRACE,
  OPEN_BRACKET,
  PLUS,
  QUOTE,
  BACKSLASH,
  SPACE,
  TAB,
  UPPER_E,
  ZERO,
} from './bytes.js';
import { wholeFloat, type WholeFloat } from './whole-float.js';

/** 10^0 ... 10^22: the powers of ten a double holds exactly. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
/** Keys remembered per position in an object (rows of a table repeat theirs). */
const CACHED_KEYS = 64;
/** A key a JS object lists before the others: an array index (`0`, `10`, not `01` or `-1`). */
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,9})$/;

/** Reads one JSON text; {@link document} gives its value. */
export class LiteralReader {
  private pos = 0;
  /** The last string read held no escapes. */
  private plain = true;
  /**
   * The k-th key of the last object that had one, when it holds no escapes:
   * found again with one startsWith, and the same string is reused.
   */
  private readonly keyCache: string[] = [];
  // The number being read: all its digits summed, exact while at most 15 are significant.
  private mantissa = 0;
  private significant = 0;

  /**
   * @param wholeFloats give whole-valued float literals as WholeFloats
   * @param keyOrders receives the document order of keys of objects holding an index-like key
   */
  constructor(
    private readonly text: string,
    private readonly wholeFloats: boolean,
    private readonly keyOrders: Map<object, string[]> | undefined,
  ) {}

  /** The value of the whole text. @throws S2SPError `S2SP_ERR_JSON_SYNTAX` for text that is not JSON (bare NaN/Infinity aside) */
  document(): unknown {
    let result: unknown;
    try {
      result = this.value();
    } catch (error) {
      // Deep nesting overflows this recursion before JSON.parse's own limit.
      if (error instanceof RangeError) throw new S2SPError('S2SP_ERR_JSON_SYNTAX', { problem: 'tooDeep', position: this.pos }, { cause: error });
      throw error;
    }
    this.skipSpace();
    if (this.pos < this.text.length) this.fail();
    return result;
  }

  private value(): unknown {
    const c = this.skipSpace();
    if (c === QUOTE) return this.string();
    if (c === OPEN_BRACE) return this.object();
    if (c === OPEN_BRACKET) return this.array();
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.number();
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('null')) return null;
    if (this.literal('NaN')) return NaN;
    if (this.literal('Infinity')) return Infinity;
    return this.fail();
  }

  /** Reads a string at `pos` (on its opening quote); sets `plain`. */
  private string(): string {
    const text = this.text;
    let pos = this.pos + 1;
    const start = pos;
    let c = text.charCodeAt(pos);
    let plain = true;
    while (c !== QUOTE) {
      if (c === BACKSLASH) {
        plain = false;
        c = text.charCodeAt((pos += 2));
        continue;
      }
      // c !== c: NaN, the end of the text.
      if (c < 0x20 || c !== c) {
        this.pos = pos;
        this.fail();
      }
      c = text.charCodeAt(++pos);
    }
    this.pos = ++pos;
    this.plain = plain;
    if (plain) return text.slice(start, pos - 1);
    // Escapes are rare: JSON.parse decodes (and checks) them.
    try {
      return JSON.parse(text.slice(start - 1, pos)) as string;
    } catch (error) {
      throw new S2SPError('S2SP_ERR_JSON_SYNTAX', { problem: 'badEscape', position: start - 1 }, { cause: error });
    }
  }

  private number(): number | bigint | WholeFloat {
    const text = this.text;
    const start = this.pos;
    const negative = text.charCodeAt(start) === MINUS;
    if (negative) {
      if (text.startsWith('Infinity', start + 1)) {
        this.pos += 9;
        return -Infinity;
      }
      this.pos++;
    }
    this.mantissa = 0;
    this.significant = 0;
    this.integerDigits();
    const integerEnd = this.pos;
    const fractionDigits = text.charCodeAt(this.pos) === DOT ? this.fractionDigits() : -1;
    const c = text.charCodeAt(this.pos);
    const exponent = c === LOWER_E || c === UPPER_E ? this.exponent() : undefined;
    if (fractionDigits >= 0 || exponent !== undefined) return this.float(start, negative, Math.max(fractionDigits, 0), exponent ?? 0);
    if (this.significant <= 15) return negative ? -this.mantissa : this.mantissa;
    const literal = text.slice(start, integerEnd);
    const n = Number(literal);
    return Number.isSafeInteger(n) ? n : BigInt(literal);
  }

  /** The integer part: `0`, or a non-zero digit and more digits. */
  private integerDigits(): void {
    const text = this.text;
    let c = text.charCodeAt(this.pos);
    if (c === ZERO) {
      this.pos++;
      return;
    }
    if (!(c >= ONE && c <= NINE)) this.fail();
    let mantissa = 0;
    let significant = 0;
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      significant++;
      c = text.charCodeAt(++this.pos);
    } while (c >= ZERO && c <= NINE);
    this.mantissa = mantissa;
    this.significant = significant;
  }

  /** The fraction after `.` (at `pos`), added to the mantissa; returns its digit count. */
  private fractionDigits(): number {
    const text = this.text;
    let c = text.charCodeAt(++this.pos);
    if (!(c >= ZERO && c <= NINE)) this.fail();
    let mantissa = this.mantissa;
    let significant = this.significant;
    let digits = 0;
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      if (mantissa !== 0) significant++;
      digits++;
      c = text.charCodeAt(++this.pos);
    } while (c >= ZERO && c <= NINE);
    this.mantissa = mantissa;
    this.significant = significant;
    return digits;
  }

  /** The exponent after `e` or `E` (at `pos`), capped far beyond any double's range. */
  private exponent(): number {
    const text = this.text;
    let c = text.charCodeAt(++this.pos);
    const negative = c === MINUS;
    if (c === PLUS || c === MINUS) c = text.charCodeAt(++this.pos);
    if (!(c >= ZERO && c <= NINE)) this.fail();
    let exponent = 0;
    do {
      if (exponent < 1e6) exponent = exponent * 10 + (c - ZERO);
      c = text.charCodeAt(++this.pos);
    } while (c >= ZERO && c <= NINE);
    return negative ? -exponent : exponent;
  }

  /**
   * A float literal's value. Clinger's fast path: an exact mantissa times or
   * over an exact power of ten is one correctly rounded operation, the
   * double Number() gives.
   */
  private float(start: number, negative: boolean, fractionDigits: number, exponent: number): number | WholeFloat {
    const scale = exponent - fractionDigits;
    let v: number;
    if (this.significant <= 15 && scale >= -22 && scale <= 22) {
      v = scale >= 0 ? this.mantissa * POWERS_OF_TEN[scale] : this.mantissa / POWERS_OF_TEN[-scale];
      if (negative) v = -v;
    } else v = Number(this.text.slice(start, this.pos));
    return this.wholeFloats && Number.isInteger(v) ? wholeFloat(v) : v;
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++;
    let c = this.skipSpace();
    if (c === CLOSE_BRACE) {
      this.pos++;
      return out;
    }
    /** This object's keys in document order, once one of them is an array index. */
    let order: string[] | undefined;
    for (let k = 0; ; k++) {
      if (c !== QUOTE) this.fail();
      const key = this.key(k);
      if (this.keyOrders !== undefined) order = this.keyOrder(out, key, order);
      if (this.skipSpace() !== COLON) this.fail();
      this.pos++;
      const v = this.value();
      // JSON.parse makes "__proto__" an own key; assignment would set the prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      c = this.skipSpace();
      this.pos++;
      if (c === COMMA) {
        c = this.skipSpace();
        continue;
      }
      if (c === CLOSE_BRACE) return out;
      this.pos--;
      this.fail();
    }
  }

  /** The `k`-th key of an object (at its opening quote), from the key cache when it is the same again. */
  private key(k: number): string {
    const text = this.text;
    const cached = k < CACHED_KEYS ? this.keyCache[k] : undefined;
    if (cached !== undefined && text.charCodeAt(this.pos + 1 + cached.length) === QUOTE && text.startsWith(cached, this.pos + 1)) {
      this.pos += cached.length + 2;
      return cached;
    }
    const key = this.string();
    if (this.plain && k < CACHED_KEYS) this.keyCache[k] = key;
    return key;
  }

  /** Records `key` in `out`'s document order once an index-like key made one necessary; returns the order. */
  private keyOrder(out: Record<string, unknown>, key: string, order: string[] | undefined): string[] | undefined {
    // Keys before the first index-like one are in insertion order already.
    if (order !== undefined) order.push(key);
    else if (key.charCodeAt(0) <= NINE && INDEX_KEY.test(key) && Number(key) < 4294967295) {
      order = Object.keys(out);
      order.push(key);
      this.keyOrders!.set(out, order);
    }
    return order;
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    if (this.skipSpace() === CLOSE_BRACKET) {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      const c = this.skipSpace();
      this.pos++;
      if (c === COMMA) continue;
      if (c === CLOSE_BRACKET) return out;
      this.pos--;
      this.fail();
    }
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  private skipSpace(): number {
    const text = this.text;
    let pos = this.pos;
    let c = text.charCodeAt(pos);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++pos);
    this.pos = pos;
    return c;
  }

  private fail(): never {
    const { text, pos } = this;
    if (pos >= text.length) throw new S2SPError('S2SP_ERR_JSON_SYNTAX', { problem: 'end' });
    throw new S2SPError('S2SP_ERR_JSON_SYNTAX', { problem: 'token', token: text[pos], position: pos });
  }
}
