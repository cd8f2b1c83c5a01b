/**
 * The speed cost of exact JSON numbers (native-notes.md, "Exact JSON
 * numbers"), and whether Node 22's own route could replace our reader.
 * Standalone, not part of run.ts:
 *
 *   node dist/bench/exact-json.js [--reps N] [--rows N]
 *
 * Part 1: JSON.parse against parseJsonExact on the vega-datasets files.
 * Part 2: parseJsonExact against the native candidate (JSON.parse with a
 * reviver reading `context.source`; JSON.rawJSON for writing) on the exact
 * reader's three uses, on earthquakes.json and on the bench dataset's rows
 * as a body, each pair interleaved rep by rep so load from other work hits
 * both sides alike.
 * Part 3: the JSON encoder on a timestamp column.
 *
 * Prints medians in milliseconds and ratios.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TimestampNanosecond, Table, makeData, makeVector } from 'apache-arrow';
import { parseJsonExact, stringifyJsonExact } from '../src/json/exact-json.js';
import { WholeFloat } from '../src/json/whole-float.js';
import { finiteFloatText, nonFiniteName } from '../src/json/float-text.js';
import { jsonRowBytes } from '../src/json/body-writer.js';
import { generateRows } from './lib/dataset.js';

const at = process.argv.indexOf('--reps');
const REPS = at > 0 ? Math.max(3, Number(process.argv[at + 1])) : 15;
const rowsAt = process.argv.indexOf('--rows');
const BODY_ROWS = rowsAt > 0 ? Number(process.argv[rowsAt + 1]) : 1_000_000;

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

/** Medians of each of `runs`, run in turn with the order rotating every rep, after one warm-up each. */
function interleaved(runs: Array<() => unknown>, reps: number): number[] {
  for (const run of runs) run();
  const times = runs.map((): number[] => []);
  for (let i = 0; i < reps; i++) {
    for (let j = 0; j < runs.length; j++) {
      const k = (i + j) % runs.length;
      const start = performance.now();
      runs[k]();
      times[k].push(performance.now() - start);
    }
  }
  return times.map((t) => t.sort((x, y) => x - y)[t.length >> 1]);
}

// The native candidate. Node 22's lib types know neither the reviver's
// third argument nor JSON.rawJSON, hence the local shapes.
type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;
const nativeJson = JSON as unknown as { parse(text: string, reviver: Reviver): unknown; rawJSON(text: string): unknown };

/**
 * JSON.parse with a reviver that reads a number's source only where the
 * double may not be the whole story (an integer value): digits beyond 2^53
 * become a bigint, a float literal with a whole value a WholeFloat. It
 * cannot give keyOrders (the reviver sees an object's keys in property
 * order, index-like keys first) nor read bare NaN/Infinity (JSON.parse
 * throws; a fallback would re-read such text), so it is measured on the
 * number work alone, a lower bound for a full native reader.
 */
function parseNative(text: string): unknown {
  return nativeJson.parse(text, (_key, value, context) => {
    if (typeof value !== 'number' || value % 1 !== 0) return value;
    const source = context.source as string;
    for (let k = 0; k < source.length; k++) {
      const c = source.charCodeAt(k);
      if (c === 0x2e || c === 0x65 || c === 0x45) return new WholeFloat(value); // '.', 'e', 'E'
    }
    return Number.isSafeInteger(value) ? value : BigInt(source);
  });
}

/** stringifyJsonExact's output, written with JSON.rawJSON instead of markers replaced afterwards. */
function stringifyNative(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return nativeJson.rawJSON(v.toString());
    if (v instanceof WholeFloat) return nativeJson.rawJSON(finiteFloatText(v.value));
    if (typeof v === 'number' && (v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER || v !== v || Object.is(v, -0))) {
      return nonFiniteName(v) ?? nativeJson.rawJSON(finiteFloatText(v));
    }
    return v;
  });
}

const rows: string[] = ['| file | JSON.parse | parseJsonExact | ratio | with wholeFloats | ratio |', '|---|---|---|---|---|---|'];
for (const name of ['earthquakes.json', 'flights-200k.json']) {
  const text = vegaText(name);
  const reps = text.length > 5e6 ? Math.max(3, REPS >> 2) : REPS;
  const plain = median(() => JSON.parse(text), reps);
  const exact = median(() => parseJsonExact(text), reps);
  const literal = median(() => parseJsonExact(text, { wholeFloats: true }), reps);
  rows.push(
    `| ${name} | ${plain.toFixed(1)} | ${exact.toFixed(1)} | ${(exact / plain).toFixed(2)} | ${literal.toFixed(1)} | ${(literal / plain).toFixed(2)} |`,
  );
}
console.log(rows.join('\n'));

// The last column is the floor of any reviver route: JSON.parse calling a
// reviver that returns each value as it is.
const native: string[] = ['| input | use | parseJsonExact | native | native / ours | no-op reviver / ours |', '|---|---|---|---|---|---|'];
const quakes = vegaText('earthquakes.json');
const body = JSON.stringify({ abstract: [], body: generateRows(BODY_ROWS), total_rows: BODY_ROWS });
for (const [input, text] of [
  ['earthquakes.json', quakes],
  [`${BODY_ROWS.toLocaleString('en-US')}-row body`, body],
] as const) {
  const reps = text.length > 5e6 ? 3 : REPS;
  // The answers must agree before their times mean anything.
  if (stringifyJsonExact(parseJsonExact(text, { wholeFloats: true })) !== stringifyNative(parseNative(text))) {
    throw new RangeError(`native and exact readings of ${input} differ`);
  }
  const uses: Array<[string, () => unknown, () => unknown]> = [
    ['table file (wholeFloats, keyOrders)', () => parseJsonExact(text, { wholeFloats: true, keyOrders: new Map() }), () => parseNative(text)],
    ['consumer body (wholeFloats)', () => parseJsonExact(text, { wholeFloats: true }), () => parseNative(text)],
    ['dispatcher round trip (read, write)', () => stringifyJsonExact(parseJsonExact(text, { wholeFloats: true })), () => stringifyNative(parseNative(text))],
  ];
  const parsed = parseJsonExact(text, { wholeFloats: true });
  const [ourWrite, nativeWrite] = interleaved([() => stringifyJsonExact(parsed), () => stringifyNative(parsed)], reps);
  for (const [use, ours, theirs] of uses) {
    const [a, b, floor] = interleaved([ours, theirs, () => nativeJson.parse(text, (_key, value) => value)], reps);
    native.push(`| ${input} | ${use} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} | ${(floor / a).toFixed(2)} |`);
  }
  native.push(
    `| ${input} | the write alone (stringifyJsonExact; JSON.rawJSON) | ${ourWrite.toFixed(1)} | ${nativeWrite.toFixed(1)} | ${(nativeWrite / ourWrite).toFixed(2)} | |`,
  );
}
console.log(`\n${native.join('\n')}`);

const n = 200_000;
const ns = new BigInt64Array(n);
for (let i = 0; i < n; i++) ns[i] = 1_700_000_000_000_000_000n + BigInt(i) * 1_000_000_007n;
const timestamps = new Table({ t: makeVector(makeData({ type: new TimestampNanosecond(), length: n, nullCount: 0, data: ns })) });
const encode = median(() => {
  let bytes = 0;
  for (const chunk of jsonRowBytes(timestamps)) bytes += chunk.byteLength;
  return bytes;
});
console.log(`\nJSON body of ${n.toLocaleString('en-US')} Timestamp[ns] values: ${encode.toFixed(1)} ms`);
