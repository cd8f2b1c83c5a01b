/**
 * Little-endian two's complement integers from one width to another: the
 * low bytes kept, the rest filled with the sign. Decimals cross so between
 * DuckDB (2, 4, 8 or 16 bytes by precision) and Arrow (Decimal32, 64, 128),
 * in both directions; a value always fits the narrower side, since both
 * sides hold the same precision.
 */

/**
 * `count` integers of `from` bytes each, as integers of `to` bytes each.
 * @param source at least `count * from` bytes
 */
export function resizeIntegers(source: Uint8Array, count: number, from: number, to: number): Uint8Array {
  const out = new Uint8Array(count * to);
  const kept = Math.min(from, to);
  for (let i = 0; i < count; i++) {
    const at = i * from;
    out.set(source.subarray(at, at + kept), i * to);
    if (to > from && (source[at + from - 1] & 0x80) !== 0) out.fill(0xff, i * to + from, (i + 1) * to);
  }
  return out;
}
