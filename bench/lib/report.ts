/** Small statistics and printing helpers shared by the benchmarks. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Min, median and max of a non-empty list. */
export function spread(values: readonly number[]): { min: number; median: number; max: number } {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

/** Prints a markdown table. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

/** bench/results/, next to the sources (dist/bench/lib -> bench/results). */
export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results');

/** Writes a scenario's figures as JSON to bench/results/<name>.json. */
export function writeResults(name: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}
