/**
 * Whole-valued float literals (`2.0`, `1e3`) as the exact reader gives them
 * with `wholeFloats` (exact-json.ts): a JS number forgets it was written as
 * a float, and Python's `json` types numbers by their text.
 */

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
export function wholeFloat(v: number): WholeFloat {
  // 1 / -0 is -Infinity: -0.0 is its own value, never the shared 0.0.
  return v >= 0 && v < 1024 && (v !== 0 || 1 / v > 0) ? SMALL_WHOLE_FLOATS[v] : new WholeFloat(v);
}
