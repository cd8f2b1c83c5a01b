/**
 * A growable byte buffer for encoders that write JSON straight to UTF-8:
 * no intermediate JS strings for the values that do not need them.
 */
import { MINUS, QUOTE, ZERO } from './bytes.js';

/** Appends bytes to a buffer that doubles when full. */
export class ByteWriter {
  buf: Uint8Array;
  /** The same memory as `buf`, for writers that store four bytes at a time (json-rows.ts). */
  view: DataView;
  pos = 0;

  constructor(capacity = 64 * 1024) {
    this.buf = new Uint8Array(Math.max(capacity, 64));
    this.view = viewOf(this.buf);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = viewOf(next);
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
    this.ensure(MAX_INTEGER_BYTES);
    this.pos = putInteger(this.buf, this.pos, v);
  }

  /** The bytes written so far (a view), and a fresh buffer for what follows. */
  take(nextCapacity = this.buf.length): Uint8Array {
    const out = this.buf.subarray(0, this.pos);
    this.buf = new Uint8Array(Math.max(nextCapacity, 64));
    this.view = viewOf(this.buf);
    this.pos = 0;
    return out;
  }
}

function viewOf(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** The longest text {@link putInteger} writes: a sign and 16 digits (|v| < 2^53), with room to spare. */
export const MAX_INTEGER_BYTES = 24;

/**
 * Writes integer `v` (|v| < 2^53) as decimal digits at `buf[pos]`, which
 * must have {@link MAX_INTEGER_BYTES} of room; returns the position after
 * them. A function of the buffer and a position rather than a writer method,
 * so a loop over many cells keeps both in registers.
 */
export function putInteger(buf: Uint8Array, pos: number, v: number): number {
  if (v < 0) {
    buf[pos++] = MINUS;
    v = -v;
  }
  if (v > 0x7fffffff) {
    // Two halves: the high digits, then the low 8 digits zero-padded.
    const high = Math.floor(v / 1e8);
    return putDigits(buf, putInteger(buf, pos, high), (v - high * 1e8) | 0, 8);
  }
  const i = v | 0;
  return putDigits(buf, pos, i, digitCount(i));
}

/** Writes `i` (0 <= i < 2^31) as exactly `len` digits, zero-padded; returns the position after them. */
function putDigits(buf: Uint8Array, pos: number, i: number, len: number): number {
  let at = pos + len;
  for (let k = 0; k < len; k++) {
    const q = (i / 10) | 0;
    buf[--at] = ZERO + i - q * 10;
    i = q;
  }
  return pos + len;
}

function digitCount(i: number): number {
  if (i < 100_000) return i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : i < 10_000 ? 4 : 5;
  return i < 1_000_000 ? 6 : i < 10_000_000 ? 7 : i < 100_000_000 ? 8 : i < 1_000_000_000 ? 9 : 10;
}
