/**
 * bench/lib/bench-table.ts: with a run's cache directory, the first call
 * writes the generated table there and later calls read it back; either
 * way, the table is the one generateRows and tableFromRows make.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableToIPC } from 'apache-arrow';
import { TABLE_CACHE_ENV, benchTable } from '../../bench/lib/bench-table.js';
import { generateRows } from '../../bench/lib/dataset.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';

test('benchTable: built once per cache directory, read back identical', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-bench-table-test-'));
  const before = process.env[TABLE_CACHE_ENV];
  process.env[TABLE_CACHE_ENV] = dir;
  t.after(() => {
    if (before === undefined) delete process.env[TABLE_CACHE_ENV];
    else process.env[TABLE_CACHE_ENV] = before;
    rmSync(dir, { recursive: true, force: true });
  });
  const expected = tableToIPC(tableFromRows(generateRows(500)), 'stream');
  const built = benchTable(500);
  assert.deepEqual(readdirSync(dir), ['rows-500-seed-42.arrow']);
  const read = benchTable(500);
  assert.deepEqual(Buffer.from(tableToIPC(built, 'stream')), Buffer.from(expected));
  assert.deepEqual(Buffer.from(tableToIPC(read, 'stream')), Buffer.from(expected));
  // Another size or seed is another file, not the cached one.
  assert.equal(benchTable(20, 7).numRows, 20);
  assert.deepEqual(readdirSync(dir).sort(), ['rows-20-seed-7.arrow', 'rows-500-seed-42.arrow']);
});
