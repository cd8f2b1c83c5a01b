/**
 * One consumer read in a process of its own: fetchBody of a resource_url in
 * the format given, then its time and the process's peak RSS sent to the
 * parent. A fresh process per read, so the kernel's high-water mark (VmHWM)
 * is that read's peak and nothing an earlier read left behind.
 *
 *   fork(consumer-child.js, [url, 'json' | 'arrow'])
 *
 * With `--cpu-prof` in its execArgv the child writes a profile of the read.
 */
import { readFileSync } from 'node:fs';
import { fetchBody } from '../../src/consumer/fetch-body.js';

/** What the child sends its parent. */
export interface ConsumerReading {
  seconds: number;
  rows: number;
  bytes: number;
  /** VmHWM before the fetch, in bytes. */
  rssBefore: number;
  /** VmHWM after the fetch, in bytes. */
  rssPeak: number;
}

/** The kernel's high-water mark of this process, or NaN where /proc has none. */
function peakRss(): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

const [url, format] = process.argv.slice(2);
const rssBefore = peakRss();
const started = performance.now();
const fetched = await fetchBody(url, { format: format as 'json' | 'arrow', maxBytes: 2 ** 31 - 1, timeoutMs: 300_000 });
const seconds = (performance.now() - started) / 1000;
const reading: ConsumerReading = { seconds, rows: fetched.table.numRows, bytes: fetched.bytesReceived, rssBefore, rssPeak: peakRss() };
process.send?.(reading, () => process.exit(0));
