/**
 * Where should a chunk be encoded: inline on the main thread, or in a worker?
 * Times both for chunks of growing size (rows x 3 columns, JSON and
 * Arrow+LZ4, scattered ids), side by side in one run, and prints the
 * crossover. The data plane's DEFAULT_INLINE_CELL_LIMIT comes from this.
 *
 *   node dist/bench/inline-threshold.js [--quick] [--reps N]
 */
import { tableFromSharedIpc } from '../src/ipc/shared-body.js';
import { sharedIpcFromTable } from '../test/support/shared-ipc.js';
import { DEFAULT_INLINE_CELL_LIMIT } from '../src/data/encoder-core.js';
import { encodeChunk, type ChunkFormat } from '../src/table/chunk-encoding.js';
import { ipcCodec } from '../src/ipc/compression/codec-registry.js';
import { projectColumns } from '../src/table/select.js';
import { tableFromRows } from '../src/table/table-from-rows.js';
import { createEncoderPool } from '../src/worker/encoder-pool.js';
import { generateRows } from './lib/dataset.js';
import { int, ms, spread } from './lib/report.js';
import { progress, runScenario } from './lib/scenario.js';

const ROWS = 200_000;
const COLUMNS = ['i1', 'f1', 's1'];

await runScenario('inline-threshold', 'Inline threshold: encode a chunk on the main thread or in a worker', async (flags) => {
  const repeat = flags.reps ?? (flags.quick ? 9 : 15);
  const counts = flags.quick ? [50, 1000, 5000] : [10, 50, 200, 1000, 5000, 20000];
  const ipc = sharedIpcFromTable(tableFromRows(generateRows(ROWS) as unknown as Record<string, unknown>[]));
  const table = projectColumns(tableFromSharedIpc(ipc), COLUMNS);
  const pool = createEncoderPool({ threads: 2 });
  const formats: Array<[string, ChunkFormat]> = [
    ['json', { kind: 'json' }],
    ['arrow+lz4', { kind: 'arrow', codec: 'lz4' }],
  ];
  const scattered = (count: number): Int32Array => {
    const step = Math.floor(ROWS / count);
    return Int32Array.from({ length: count }, (_, i) => i * step + (i % 7));
  };
  const measured: Array<{ ids: number; cells: number; format: string; inlineMs: ReturnType<typeof spread>; workerMs: ReturnType<typeof spread> }> = [];
  try {
    for (const count of counts) {
      progress(`${count} ids`);
      for (const [label, format] of formats) {
        const chunk = { ids: scattered(count) };
        const task = { ipc, bodyId: 'bench', columns: ['_row_id', ...COLUMNS], chunk, format };
        for (let i = 0; i < 6; i++) await pool.run(task); // warm both workers and their mapped table
        const inline: number[] = [];
        const worker: number[] = [];
        for (let i = 0; i < repeat; i++) {
          let t = performance.now();
          encodeChunk(table, chunk, format, format.kind === 'arrow' ? { codec: 'lz4', compress: ipcCodec('lz4').compress } : undefined);
          inline.push(performance.now() - t);
          t = performance.now();
          await pool.run(task);
          worker.push(performance.now() - t);
        }
        measured.push({ ids: count, cells: count * (COLUMNS.length + 1), format: label, inlineMs: spread(inline), workerMs: spread(worker) });
      }
    }
  } finally {
    await pool.close();
  }
  const rows = measured.map((m) => [
    String(m.ids),
    int(m.cells),
    m.format,
    ms(m.inlineMs.median),
    ms(m.workerMs.median),
    ms(m.workerMs.median - m.inlineMs.median),
    m.inlineMs.median <= m.workerMs.median ? 'inline' : 'worker',
  ]);
  return {
    tables: [
      {
        header: ['ids', 'cells', 'format', 'inline ms (median)', 'worker round trip ms (median)', 'worker - inline ms', 'faster'],
        rows,
        align: ['r', 'r', 'l', 'r', 'r', 'r', 'l'],
      },
    ],
    goals: [],
    notes: [
      `${ROWS.toLocaleString('en-US')}-row table, ${COLUMNS.length} columns plus _row_id, scattered ids, a pool of 2 workers, medians of ${repeat}.`,
      `No goal: this picks the data plane's inline limit (now ${int(DEFAULT_INLINE_CELL_LIMIT)} cells). Inline wins on latency for one chunk; a worker keeps the event loop free for other requests.`,
    ],
    data: { rows: ROWS, columns: COLUMNS, repeat, measured },
  };
});
