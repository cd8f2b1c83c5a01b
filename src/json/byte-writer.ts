/**
 * A growable byte buffer for encoders that write JSON straight to UTF-8:
 * no intermediate JS strings for the values that do not need them.
 */
import { MINUS, QUOTE, ZERO } from './bytes.js';

/** Appends bytes to a buffer that doubles when full. */
export class ByteWriter {
  buf: Uint8Array;
  pos = 0;

  constructor(capacity = 64 * 1024) {
    this.buf = new Uint8Array(Math.max(capacity, 64));
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** Appends bytes (short runs by loop: cheaper than `set` for a handful of bytes). */
  bytes(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    this.ensure(n);
    const buf = this.buf;
    let pos = this.pos;
    if (n > 32) {
      buf.set(src.subarray(start, end), pos);
      pos += n;
    } else {
      for (let i = start; i < end; i++) buf[pos++] = src[i];
    }
    this.pos = pos;
  }

  /** Appends a string known to be ASCII (numbers, keywords). */
  ascii(text: string): void {
    const n = text.length;
    this.ensure(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) buf[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  /** Appends an ASCII string that needs no escaping, quoted (dates, decimals, base64). */
  quotedAscii(text: string): void {
    this.ensure(text.length + 2);
    this.buf[this.pos++] = QUOTE;
    this.ascii(text);
    this.buf[this.pos++] = QUOTE;
  }

  /** Appends any string as UTF-8. */
  utf8(text: string): void {
    this.ensure(text.length * 3);
    this.pos += Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength).write(text, this.pos, 'utf8');
  }

  /** Appends an integer with |v| < 2^53, without making a string. */
  integer(v: number): void {
    this.ensure(24);
    if (v < 0) {
      this.buf[this.pos++] = MINUS;
      v = -v;
    }
    if (v > 0x7fffffff) {
      // Two halves: the high digits, then the low 8 digits zero-padded.
      const high = Math.floor(v / 1e8);
      this.integer(high);
      this.digits((v - high * 1e8) | 0, 8);
      return;
    }
    const i = v | 0;
    this.digits(i, digitCount(i));
  }

  /** Writes `i` (0 <= i < 2^31) as exactly `len` digits, zero-padded. */
  private digits(i: number, len: number): void {
    const buf = this.buf;
    let at = this.pos + len;
    this.pos = at;
    for (let k = 0; k < len; k++) {
      const q = (i / 10) | 0;
      buf[--at] = ZERO + i - q * 10;
      i = q;
    }
  }

  /** The bytes written so far (a view), and a fresh buffer for what follows. */
  take(nextCapacity = this.buf.length): Uint8Array {
    const out = this.buf.subarray(0, this.pos);
    this.buf = new Uint8Array(Math.max(nextCapacity, 64));
    this.pos = 0;
    return out;
  }
}

function digitCount(i: number): number {
  if (i < 100_000) return i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : i < 10_000 ? 4 : 5;
  return i < 1_000_000 ? 6 : i < 10_000_000 ? 7 : i < 100_000_000 ? 8 : i < 1_000_000_000 ? 9 : 10;
}
