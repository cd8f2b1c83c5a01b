/**
 * Memory: per table, the bytes the cache holds (MemoryStore, store.stats())
 * against the table's Arrow size (the sum of its buffers, and its IPC stream
 * as arrow-js writes it), its JSON size (the data plane's JSON document) and
 * the V8 heap its rows take as JS objects (heapUsed after a full gc, before
 * and after building them). Needs `--expose-gc`: run alone, it restarts
 * itself with the flag.
 *
 *   node dist/bench/memory.js [--quick]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tableToIPC, type Data, type Table } from 'apache-arrow';
import { MemoryStore } from '../src/cache/memory-store.js';
import { defaultDatasetPath } from '../src/cli/default-dataset.js';
import { readTableFile } from '../src/cli/input/read-table-file.js';
import { rowsFromTable } from '../src/table/rows-from-table.js';
import { tableFromRows } from '../src/table/table-from-rows.js';
import { generateRows } from './lib/dataset.js';
import { goal, mb, ratio, type Goal } from './lib/report.js';
import { progress, runScenario } from './lib/scenario.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

interface TableMemory {
  name: string;
  rows: number;
  columns: number;
  cacheBytes: number;
  arrowBufferBytes: number;
  arrowIpcBytes: number;
  jsonBytes: number;
  rowsHeapBytes: number;
  /** The naive port's representation (each row with `_row_id`), when measured. */
  rowsWithIdHeapBytes?: number;
}

function heapAfterGc(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

/** Sum of every buffer of every column of every batch. */
function arrowBufferBytes(table: Table): number {
  let total = 0;
  const visit = (data: Data) => {
    for (const buffer of [data.values, data.valueOffsets, data.nullBitmap, data.typeIds] as Array<ArrayBufferView | undefined>) {
      total += buffer?.byteLength ?? 0;
    }
    for (const child of data.children) visit(child);
    if (data.dictionary) for (const d of data.dictionary.data) visit(d);
  };
  for (const batch of table.batches) visit(batch.data);
  return total;
}

function jsonDocumentBytes(rowsWithIds: readonly Record<string, unknown>[], columns: string[]): number {
  return Buffer.byteLength(JSON.stringify({ body: rowsWithIds, total_rows: rowsWithIds.length, columns_returned: columns }));
}

async function cacheBytes(table: Table): Promise<number> {
  const store = new MemoryStore();
  await store.put(table);
  const { bytes } = await store.stats();
  await store.close();
  return bytes;
}

await runScenario('memory', 'Memory: cache bytes vs Arrow, JSON and JS objects', async () => {
  const results: TableMemory[] = [];

  progress('1M generated rows');
  const h0 = heapAfterGc();
  let generated: Array<Record<string, unknown>> | undefined = generateRows(1_000_000) as unknown as Array<Record<string, unknown>>;
  const rowsHeapBytes = heapAfterGc() - h0;
  let withIds: Array<Record<string, unknown>> | undefined = generated.map((row, i) => ({ _row_id: i, ...row }));
  const rowsWithIdHeapBytes = heapAfterGc() - h0 - rowsHeapBytes;
  const big = tableFromRows(generated);
  const columns = big.schema.fields.map((f) => f.name);
  const jsonBytes = jsonDocumentBytes(withIds, columns);
  withIds = undefined;
  generated = undefined;
  results.push({
    name: 'generated, 1M rows',
    rows: big.numRows,
    columns: big.numCols - 1,
    cacheBytes: await cacheBytes(big),
    arrowBufferBytes: arrowBufferBytes(big),
    arrowIpcBytes: tableToIPC(big, 'stream').byteLength,
    jsonBytes,
    rowsHeapBytes,
    rowsWithIdHeapBytes,
  });

  progress('earthquakes');
  const { table: quakes } = await readTableFile(defaultDatasetPath());
  const q0 = heapAfterGc();
  let quakeRows: Array<Record<string, unknown>> | undefined = rowsFromTable(quakes);
  const quakeHeap = heapAfterGc() - q0;
  const quakeJson = jsonDocumentBytes(
    quakeRows,
    quakes.schema.fields.map((f) => f.name),
  );
  quakeRows = undefined;
  results.push({
    name: 'earthquakes (vega-datasets)',
    rows: quakes.numRows,
    columns: quakes.numCols - 1,
    cacheBytes: await cacheBytes(quakes),
    arrowBufferBytes: arrowBufferBytes(quakes),
    arrowIpcBytes: tableToIPC(quakes, 'stream').byteLength,
    jsonBytes: quakeJson,
    rowsHeapBytes: quakeHeap,
  });

  const goals: Goal[] = results.map((r) =>
    goal(
      `Cache bytes / Arrow size, ${r.name}`,
      r.cacheBytes / r.arrowBufferBytes,
      '<=',
      1.2,
      'x',
      `${mb(r.cacheBytes)} MB vs ${mb(r.arrowBufferBytes)} MB of buffers`,
    ),
  );
  const rows = results.map((r) => [
    r.name,
    `${r.rows.toLocaleString('en-US')} x ${r.columns}`,
    `**${mb(r.cacheBytes)}**`,
    mb(r.arrowBufferBytes),
    mb(r.arrowIpcBytes),
    mb(r.jsonBytes),
    r.rowsWithIdHeapBytes === undefined ? mb(r.rowsHeapBytes) : `${mb(r.rowsHeapBytes)} (+${mb(r.rowsWithIdHeapBytes)} with _row_id copies)`,
    ratio(r.cacheBytes, r.arrowBufferBytes),
    ratio(r.jsonBytes, r.cacheBytes),
    ratio(r.rowsHeapBytes, r.cacheBytes),
  ]);
  return {
    tables: [
      {
        header: [
          'table',
          'rows x columns',
          'cache MB',
          'Arrow buffers MB',
          'Arrow IPC (arrow-js) MB',
          'JSON document MB',
          'JS objects heap MB',
          'cache / Arrow',
          'JSON / cache',
          'JS heap / cache',
        ],
        rows,
        align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      },
    ],
    goals,
    notes: [
      'cache: `store.stats().bytes` of a MemoryStore after `put(table)` (the body as Arrow IPC in a SharedArrayBuffer). Arrow buffers: the sum of every column buffer (values, offsets, validity) of the table; the goal divides by this. Arrow IPC: `tableToIPC(table, "stream")`.',
      'JSON document: the bytes of `{"body": [rows with _row_id], "total_rows", "columns_returned"}`, what the JSON data plane sends for the whole table.',
      "JS objects heap: V8 heapUsed after a full gc (`--expose-gc`), with the rows alive minus before they were made. For the generated table: the rows as generateRows returns them, and (+) what mapping them to copies with `_row_id` added (the naive port keeps those) costs on top. For earthquakes: rowsFromTable of the file's table.",
    ],
    data: { tables: results },
  };
});
