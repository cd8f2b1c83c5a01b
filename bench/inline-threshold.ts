/**
 * Where should a chunk be encoded: inline on the main thread, or in a worker?
 * Times both for chunks of growing size (rows x 3 columns, JSON and
 * Arrow+LZ4, scattered ids), side by side in one run, and prints the
 * crossover. The data plane's DEFAULT_INLINE_CELL_LIMIT comes from this.
 *
 *   node dist/bench/inline-threshold.js
 */
import { sharedIpcFromTable } from '../src/cache/ipc-body.js';
import { encodeChunk, type ChunkFormat } from '../src/table/chunk-encoding.js';
import { lz4Codec } from '../src/table/lz4-codec.js';
import { projectColumns } from '../src/table/select.js';
import { tableFromSharedIpc } from '../src/cache/ipc-body.js';
import { createEncoderPool } from '../src/worker/encoder-pool.js';
import { generateRows } from './lib/dataset.js';
import { median, printTable } from './lib/report.js';
import { tableFromRows } from '../src/table/table-from-rows.js';

const ROWS = 200_000;
const COLUMNS = ['i1', 'f1', 's1'];
const REPEAT = 15;

const ipc = sharedIpcFromTable(tableFromRows(generateRows(ROWS)));
const table = projectColumns(tableFromSharedIpc(ipc), COLUMNS);
const pool = createEncoderPool({ threads: 2 });
const formats: Array<[string, ChunkFormat]> = [
  ['json', { kind: 'json' }],
  ['arrow+lz4', { kind: 'arrow', codec: 'lz4' }],
];

function scattered(count: number): Int32Array {
  const step = Math.floor(ROWS / count);
  return Int32Array.from({ length: count }, (_, i) => i * step + (i % 7));
}

const rows: string[][] = [];
for (const count of [10, 50, 200, 1000, 5000, 20000]) {
  for (const [label, format] of formats) {
    const chunk = { ids: scattered(count) };
    const task = { ipc, bodyId: 'bench', columns: ['_row_id', ...COLUMNS], chunk, format };
    for (let i = 0; i < 3; i++) await pool.run(task); // warm the workers and their mapped table
    const inline: number[] = [];
    const worker: number[] = [];
    for (let i = 0; i < REPEAT; i++) {
      let t = performance.now();
      encodeChunk(table, chunk, format, format.kind === 'arrow' ? lz4Codec().compressFrame : undefined);
      inline.push(performance.now() - t);
      t = performance.now();
      await pool.run(task);
      worker.push(performance.now() - t);
    }
    const cells = count * (COLUMNS.length + 1);
    rows.push([String(count), String(cells), label, median(inline).toFixed(3), median(worker).toFixed(3), median(inline) <= median(worker) ? 'inline' : 'worker']);
  }
}
await pool.close();
printTable(['ids', 'cells', 'format', 'inline ms (median)', 'worker round trip ms (median)', 'faster'], rows);
