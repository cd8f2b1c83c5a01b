/**
 * A worker thread that samples its process's RSS every few milliseconds into
 * shared memory: [current, peak]. It runs off the main thread so that a
 * server whose event loop is blocked (JSON.stringify of a million rows) still
 * gets its peak recorded. RSS is per process, so any thread can read it.
 */
import { workerData } from 'node:worker_threads';

const { cells, intervalMs } = workerData as { cells: SharedArrayBuffer; intervalMs: number };
const view = new Float64Array(cells);

function sample(): void {
  const rss = process.memoryUsage.rss();
  view[0] = rss;
  if (rss > view[1]) view[1] = rss;
}

sample();
setInterval(sample, intervalMs);
