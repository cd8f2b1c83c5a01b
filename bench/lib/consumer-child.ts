/**
 * One consumer read in a process of its own: fetchBody of a resource_url in
 * the format given, then its time and the process's peak RSS sent to the
 * parent. A fresh process per read, so the kernel's high-water mark (VmHWM)
 * is that read's peak and nothing an earlier read left behind.
 *
 *   fork(consumer-child.js, [url, 'json' | 'arrow' | 'json-whole'])
 *
 * `json-whole` is the consumer before it decoded JSON as it arrived: the
 * whole body buffered, then bodyFromJson (still the reference decoder), so
 * one run can show both.
 *
 * With `--cpu-prof` in its execArgv the child writes a profile of the read.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { bodyFromJson } from '../../src/json/body-reader.js';

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

/** The whole JSON body, buffered as fetchBody used to (node:http, chunks joined at the end). */
function wholeJson(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end('{}');
  });
}

async function read(url: string, format: string): Promise<{ rows: number; bytes: number }> {
  if (format === 'json-whole') {
    const bytes = await wholeJson(url);
    return { rows: bodyFromJson(bytes).table.numRows, bytes: bytes.byteLength };
  }
  const fetched = await fetchBody(url, { format: format as 'json' | 'arrow', maxBytes: 2 ** 31 - 1, timeoutMs: 300_000 });
  return { rows: fetched.table.numRows, bytes: fetched.bytesReceived };
}

const [url, format] = process.argv.slice(2);
const rssBefore = peakRss();
const started = performance.now();
const { rows, bytes } = await read(url, format);
const seconds = (performance.now() - started) / 1000;
const reading: ConsumerReading = { seconds, rows, bytes, rssBefore, rssPeak: peakRss() };
process.send?.(reading, () => process.exit(0));
