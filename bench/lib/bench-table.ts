/**
 * The generated benchmark table as Arrow, built once per `npm run bench`.
 *
 * Generating 1M rows and building their Table takes a process about 2.3 s,
 * and eight server children of one run each need the same table: about a
 * fifth of a quick run. bench/run.ts names a directory in
 * `S2SP_BENCH_TABLE_CACHE` for its children; the first to need a table
 * writes it there as an Arrow IPC stream and the others read it (about
 * 0.2 s). The directory lives for one run of one build, so a cached table
 * can never be stale; without it (a scenario run on its own), every call
 * builds the table as before.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC, tableToIPC, type Table } from 'apache-arrow';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { generateRows } from './dataset.js';

/** The environment variable bench/run.ts sets for its children. */
export const TABLE_CACHE_ENV = 'S2SP_BENCH_TABLE_CACHE';

/** The Table of `generateRows(rows, seed)`, from this run's cache when there is one. */
export function benchTable(rows: number, seed = 42): Table {
  const dir = process.env[TABLE_CACHE_ENV];
  if (dir === undefined || dir === '') return tableFromRows(generateRows(rows, seed));
  const file = join(dir, `rows-${rows}-seed-${seed}.arrow`);
  if (existsSync(file)) return tableFromIPC(readFileSync(file));
  const table = tableFromRows(generateRows(rows, seed));
  // Written under a name of its own and renamed: a child starting at the same moment reads
  // either no file or a whole one.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, tableToIPC(table, 'stream'));
  renameSync(partial, file);
  return table;
}
