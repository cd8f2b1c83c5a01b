/**
 * The benchmark table: n rows x 10 columns (3 int, 3 float, 3 short text,
 * 1 timestamp), generated deterministically from a fixed seed, so every run
 * and every side of a comparison sees the same bytes.
 */

/** One generated row. */
export interface BenchRow {
  i1: number;
  i2: number;
  i3: number;
  f1: number;
  f2: number;
  f3: number;
  s1: string;
  s2: string;
  s3: string;
  ts: number;
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];

/** Rows `0..n-1`; the same `n` always gives the same rows. */
export function generateRows(n: number, seed = 42): BenchRow[] {
  let state = seed >>> 0;
  // A 31-bit linear congruential generator: deterministic and fast, not for cryptography.
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff) / 0x7fffffff;
  const rows = new Array<BenchRow>(n);
  for (let i = 0; i < n; i++) {
    rows[i] = {
      i1: i,
      i2: Math.floor(random() * 1_000_000),
      i3: Math.floor(random() * 100),
      f1: random(),
      f2: random() * 1000,
      f3: random() - 0.5,
      s1: WORDS[i & 7],
      s2: `id-${i}`,
      s3: `${WORDS[Math.floor(random() * 8)]}-${i % 100}`,
      ts: 1_517_966_773_840 + i * 1000,
    };
  }
  return rows;
}

/** The generated table's column names, in order. */
export const BENCH_COLUMNS = ['i1', 'i2', 'i3', 'f1', 'f2', 'f3', 's1', 's2', 's3', 'ts'] as const;

/** Media types the data plane negotiates. */
export const ACCEPT_ARROW = 'application/vnd.apache.arrow.stream';
export const ACCEPT_ARROW_LZ4 = 'application/vnd.apache.arrow.stream; codecs="lz4"';
export const ACCEPT_ARROW_ZSTD = 'application/vnd.apache.arrow.stream; codecs="zstd"';

/**
 * A seeded source of random row-id lists: `next(count)` gives `count`
 * distinct ids in `[0, totalRows)`, unsorted, and the same seed gives the
 * same sequence of lists, so every side of a comparison asks for the same rows.
 */
export function rowIdLists(totalRows: number, seed = 7): { next(count: number): number[] } {
  let state = seed >>> 0;
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff) / 0x7fffffff;
  return {
    next(count: number): number[] {
      const ids = new Set<number>();
      while (ids.size < count) ids.add(Math.floor(random() * totalRows) % totalRows);
      return [...ids];
    },
  };
}
