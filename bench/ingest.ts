/**
 * Ingest: rows to Arrow for the 1M-row table (`tableFromRows`), then, on its
 * own line, the IPC encode into shared memory that `MemoryStore.put` does
 * (`sharedIpcFromTable`), and apache-arrow's generic `tableFromJSON` once as
 * a reference (about 13 s here; skipped with --quick).
 *
 *   node dist/bench/ingest.js [--quick] [--reps N]
 */
import { tableFromJSON } from 'apache-arrow';
import { sharedIpcFromTable } from '../test/support/shared-ipc.js';
import { tableFromRows } from '../src/table/table-from-rows.js';
import { generateRows } from './lib/dataset.js';
import { goal, ratio, secs, spread, triple } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';

const ROWS = 1_000_000;

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
}

await runScenario('ingest', 'Ingest: 1M rows to Arrow', async (flags) => {
  const reps = flags.reps ?? (flags.quick ? 3 : 5);
  progress('generating rows');
  const rows = generateRows(ROWS);
  const fromRows: number[] = [];
  const toShared: number[] = [];
  let ipcBytes = 0;
  const more = bounded(reps, flags.quick ? 20_000 : 60_000);
  for (let i = 0; more(i); i++) {
    progress(`tableFromRows + sharedIpcFromTable ${i + 1}/${reps}`);
    collect();
    let t = performance.now();
    const table = tableFromRows(rows as unknown as Record<string, unknown>[]);
    fromRows.push((performance.now() - t) / 1000);
    t = performance.now();
    ipcBytes = sharedIpcFromTable(table).byteLength;
    toShared.push((performance.now() - t) / 1000);
  }
  let reference: number | undefined;
  if (!flags.quick) {
    progress('apache-arrow tableFromJSON (reference, once)');
    collect();
    const t = performance.now();
    tableFromJSON(rows as unknown as Record<string, unknown>[]);
    reference = (performance.now() - t) / 1000;
  }
  const a = spread(fromRows);
  const b = spread(toShared);
  const tableRows = [
    ['**tableFromRows** (rows -> Arrow Table, `_row_id` added)', triple(a, secs), `${(ROWS / a.median / 1e6).toFixed(2)} M rows/s`],
    ['sharedIpcFromTable (Table -> IPC in a SharedArrayBuffer, what MemoryStore.put does)', triple(b, secs), `${(ipcBytes / b.median / 1e9).toFixed(2)} GB/s`],
    [
      'apache-arrow `tableFromJSON` (reference, one run)',
      reference === undefined ? 'skipped (--quick)' : secs(reference),
      reference === undefined ? '-' : `${ratio(reference, a.median)} the time of tableFromRows`,
    ],
  ];
  return {
    tables: [{ header: ['step', 'seconds (min / median / max)', 'rate'], rows: tableRows, align: ['l', 'r', 'r'] }],
    goals: [goal('Ingest: tableFromRows of 1M rows x 10 columns', a.median, '<=', 1.5, 's')],
    notes: [
      `${a.n} runs in one process after generating the rows once (the rows are generated outside the timing); a full gc before each run when --expose-gc is on (${typeof (globalThis as { gc?: unknown }).gc === 'function' ? 'it was' : 'it was not'}).`,
      `IPC body: ${(ipcBytes / 1e6).toFixed(1)} MB.`,
    ],
    data: { rows: ROWS, reps, tableFromRows: fromRows, sharedIpcFromTable: toShared, ipcBytes, tableFromJSON: reference ?? null },
  };
});
