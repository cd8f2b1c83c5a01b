/** Small statistics, formatting and printing helpers shared by the benchmarks. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Min, median and max of a list (NaN for an empty one). */
export interface Spread {
  min: number;
  median: number;
  max: number;
  /** How many measurements. */
  n: number;
}

/** Min, median and max of a non-empty list. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { min: NaN, median: NaN, max: NaN, n: 0 };
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, median: median(values), max, n: values.length };
}

/** A markdown table as text. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const rule = header.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  const lines = [`| ${header.join(' | ')} |`, `|${rule.join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** Prints a markdown table. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  console.log(markdownTable(header, rows));
}

/** bench/results/, next to the sources (dist/bench/lib -> bench/results). */
export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results');
/** bench/, the sources (for the README). */
export const BENCH_DIR = join(RESULTS_DIR, '..');

/** Writes a scenario's figures as JSON to bench/results/<name>.json. */
export function writeResults(name: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

// ---- formatting -------------------------------------------------------------

/** `1234567` -> `1,234,567`. */
export function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-';
}

/** A number with `digits` decimals, or `-`. */
export function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** Bytes as MB (10^6), 1 decimal. */
export function mb(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1e6).toFixed(1) : '-';
}

/** Seconds with 3 significant-ish decimals. */
export function secs(s: number): string {
  if (!Number.isFinite(s)) return '-';
  return s >= 10 ? s.toFixed(2) : s.toFixed(3);
}

/** Milliseconds, 3 decimals under 10 ms, 1 above. */
export function ms(v: number): string {
  if (!Number.isFinite(v)) return '-';
  return v >= 10 ? v.toFixed(1) : v.toFixed(3);
}

/** `min / median / max` of a spread, formatted with `fmt`. */
export function triple(s: Spread, fmt: (n: number) => string): string {
  return `${fmt(s.min)} / **${fmt(s.median)}** / ${fmt(s.max)}`;
}

/** A ratio `a / b` as `1.23x`. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : '-';
}

// ---- results ----------------------------------------------------------------

/** The machine a run happened on. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  totalMemoryGiB: number;
  node: string;
  platform: string;
  /** 1-minute load average when the scenario started (a noise indicator). */
  loadAverage1m: number;
  date: string;
}

/** Describes this machine. */
export function machineInfo(): MachineInfo {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    totalMemoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
    date: new Date().toISOString(),
  };
}

/** One goal of the issue, with its measurement. */
export interface Goal {
  /** What is measured, e.g. "Arrow full fetch / prebuilt bytes (time)". */
  name: string;
  /** The measured median (or ratio of medians). */
  measured: number;
  /** How `measured` reads: `'x'` (ratio), `'s'`, `'ms'`, `'%'`, `'MB'`. */
  unit: 'x' | 's' | 'ms' | '%' | 'MB';
  /** `<=` or `>=` `target`. */
  op: '<=' | '>=';
  target: number;
  met: boolean;
  /** What the figure is made of (the medians behind a ratio). */
  detail?: string;
}

/** Builds a goal and decides met / not met. */
export function goal(name: string, measured: number, op: '<=' | '>=', target: number, unit: Goal['unit'], detail?: string): Goal {
  const met = Number.isFinite(measured) && (op === '<=' ? measured <= target : measured >= target);
  return { name, measured, unit, op, target, met, detail };
}

/** A goal's value with its unit. */
export function goalValue(value: number, unit: Goal['unit']): string {
  if (!Number.isFinite(value)) return '-';
  switch (unit) {
    case 'x':
      return `${value.toFixed(2)}x`;
    case 's':
      return `${value.toFixed(3)} s`;
    case 'ms':
      return `${value.toFixed(3)} ms`;
    case '%':
      return `${value.toFixed(1)}%`;
    case 'MB':
      return `${value.toFixed(1)} MB`;
  }
}

/** The goals as a markdown table. */
export function goalsTable(goals: readonly Goal[], withScenario?: string[]): string {
  const header = withScenario ? ['scenario', 'goal', 'measured (median)', 'target', 'result'] : ['goal', 'measured (median)', 'target', 'result'];
  const rows = goals.map((g, i) => {
    const row = [
      g.name + (g.detail ? ` (${g.detail})` : ''),
      goalValue(g.measured, g.unit),
      `${g.op} ${goalValue(g.target, g.unit)}`,
      g.met ? 'met' : '**not met**',
    ];
    return withScenario ? [withScenario[i], ...row] : row;
  });
  return markdownTable(header, rows, withScenario ? ['l', 'l', 'r', 'r', 'l'] : ['l', 'r', 'r', 'l']);
}

/** One printed table of a scenario. */
export interface ResultTable {
  title?: string;
  header: string[];
  rows: string[][];
  align?: ('l' | 'r')[];
}

/** What every scenario writes to bench/results/<scenario>.json. */
export interface ScenarioResult {
  scenario: string;
  title: string;
  quick: boolean;
  machine: MachineInfo;
  wallSeconds: number;
  /** Lines printed under the tables: method, caveats, settings used. */
  notes: string[];
  tables: ResultTable[];
  goals: Goal[];
  /** The raw figures (every measurement), for whoever wants to re-plot. */
  data: unknown;
}

/** A scenario's tables, goals and notes as markdown. */
export function scenarioMarkdown(result: ScenarioResult, headingLevel = 3): string {
  const h = '#'.repeat(headingLevel);
  const parts = [`${h} ${result.title}${result.quick ? ' (quick)' : ''}`];
  for (const table of result.tables) {
    if (table.title) parts.push(`${table.title}`);
    parts.push(markdownTable(table.header, table.rows, table.align));
  }
  if (result.goals.length > 0) parts.push(goalsTable(result.goals));
  if (result.notes.length > 0) parts.push(result.notes.map((n) => `- ${n}`).join('\n'));
  parts.push(`_${result.scenario}: ${result.wallSeconds.toFixed(1)} s wall, load average ${result.machine.loadAverage1m} at start._`);
  return parts.join('\n\n');
}
