/**
 * The speed cost of exact JSON numbers (native-notes.md, "Exact JSON
 * numbers"): JSON.parse against parseJsonExact on the vega-datasets files,
 * and the JSON encoder on a timestamp column. Standalone, not part of run.ts:
 *
 *   node dist/bench/exact-json.js [--reps N]
 *
 * Prints medians in milliseconds and the ratio to JSON.parse.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TimestampNanosecond, Table, makeData, makeVector } from 'apache-arrow';
import { parseJsonExact } from '../src/table/exact-json.js';
import { jsonRowBytes } from '../src/table/json-encoding.js';

const at = process.argv.indexOf('--reps');
const REPS = at > 0 ? Math.max(3, Number(process.argv[at + 1])) : 15;

function vegaText(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../../node_modules/vega-datasets/data/${name}`, import.meta.url)), 'utf8');
}

/** Median wall time of `run`, in milliseconds, after two warm-up runs. */
function median(run: () => unknown, reps = REPS): number {
  for (let i = 0; i < 2; i++) run();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

const rows: string[] = ['| file | JSON.parse | parseJsonExact | ratio | with wholeFloats | ratio |', '|---|---|---|---|---|---|'];
for (const name of ['earthquakes.json', 'flights-200k.json']) {
  const text = vegaText(name);
  const reps = text.length > 5e6 ? Math.max(3, REPS >> 2) : REPS;
  const plain = median(() => JSON.parse(text), reps);
  const exact = median(() => parseJsonExact(text), reps);
  const literal = median(() => parseJsonExact(text, { wholeFloats: true }), reps);
  rows.push(`| ${name} | ${plain.toFixed(1)} | ${exact.toFixed(1)} | ${(exact / plain).toFixed(2)} | ${literal.toFixed(1)} | ${(literal / plain).toFixed(2)} |`);
}

const n = 200_000;
const ns = new BigInt64Array(n);
for (let i = 0; i < n; i++) ns[i] = 1_700_000_000_000_000_000n + BigInt(i) * 1_000_000_007n;
const timestamps = new Table({ t: makeVector(makeData({ type: new TimestampNanosecond(), length: n, nullCount: 0, data: ns })) });
const encode = median(() => {
  let bytes = 0;
  for (const chunk of jsonRowBytes(timestamps)) bytes += chunk.byteLength;
  return bytes;
});

console.log(rows.join('\n'));
console.log(`\nJSON body of ${n.toLocaleString('en-US')} Timestamp[ns] values: ${encode.toFixed(1)} ms`);
