/**
 * What every bench server child carries: its own RSS (sampled every 5 ms in a
 * worker thread, plus the kernel's high-water mark where Linux has one), the
 * server-side time of each request (fastify `reply.elapsedTime` in an
 * onResponse hook: onRequest to the last byte handed to the socket), and an
 * IPC request/reply channel the bench client drives it with.
 *
 * IPC: the parent sends `{ id, op, args }`, the child answers
 * `{ id, ok, result }` or `{ id, ok: false, error }`. Built-in ops:
 * `reset-rss` (gc, then restart the peak; returns the RSS now), `rss` (peak
 * since the reset and current), `timings` (the recorded request times since
 * the last call, then clears them), `cpu-profile-start` and
 * `cpu-profile-stop` (a main-thread CPU profile of one window),
 * `loop-delay-start` and `loop-delay-stop` (this process's event-loop delay
 * over one window, from `monitorEventLoopDelay`), `exit`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';

/** One request as the server saw it. */
export interface RequestTiming {
  /** The route pattern (`/s2sp/data/:token`), never the token. */
  route: string;
  accept: string;
  status: number;
  /** onRequest to response finish, ms. */
  ms: number;
}

/** RSS figures, bytes. */
export interface RssReading {
  current: number;
  /** max(sampled peak, kernel VmHWM) since the last reset. */
  peak: number;
  sampledPeak: number;
  /** Kernel high-water mark since the last reset (Linux), or null. */
  kernelPeak: number | null;
}

type Handler = (args: Record<string, unknown>) => unknown;

const MAX_TIMINGS = 200_000;
const cells = new SharedArrayBuffer(16);
const rssView = new Float64Array(cells);
const timings: RequestTiming[] = [];
const handlers = new Map<string, Handler>();
let kernelPeakWorks = true;

/** What to install. */
export interface ProbeOptions {
  /** Record every request's server time (an onResponse hook on every route). */
  timings?: boolean;
}

/**
 * Starts the RSS sampler, the timing hook on `app` if asked (install before
 * the routes: a root hook reaches every plugin registered after it) and the
 * IPC channel.
 */
export function installProbe(app: FastifyInstance | undefined, options: ProbeOptions = {}): void {
  const sampler = new Worker(new URL('./rss-sampler.js', import.meta.url), { workerData: { cells, intervalMs: 5 } });
  sampler.unref();
  if (options.timings && app !== undefined) {
    app.addHook('onResponse', async (request, reply) => {
      if (timings.length >= MAX_TIMINGS) return; // bounded; the bench fetches and clears them per series
      timings.push({
        route: request.routeOptions.url ?? '?',
        accept: String(request.headers.accept ?? ''),
        status: reply.statusCode,
        ms: reply.elapsedTime,
      });
    });
  }
  handle('reset-rss', ({ gc }) => resetRss(gc !== false));
  handle('rss', () => readRss());
  handle('gc', () => {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage.rss();
  });
  handle('timings', () => timings.splice(0, timings.length));
  handle('cpu-profile-start', () => startProfile());
  handle('cpu-profile-stop', ({ file }) => stopProfile(String(file)));
  handle('loop-delay-start', () => startLoopDelay());
  handle('loop-delay-stop', () => stopLoopDelay());
  handle('main-thread-cpu', () => mainThreadCpuMicros());
  handle('exit', () => {
    // A clean exit, so that --cpu-prof writes its profile.
    setTimeout(() => process.exit(0), 20);
    return true;
  });
  process.on('message', (message: { id: number; op: string; args?: Record<string, unknown> }) => {
    void answer(message);
  });
  process.on('disconnect', () => process.exit(0));
}

/** Adds an IPC op. */
export function handle(op: string, handler: Handler): void {
  handlers.set(op, handler);
}

/** Tells the parent the server is up. */
export function ready(info: Record<string, unknown>): void {
  process.send?.({ ready: true, info });
}

/** Full garbage collection where `--expose-gc` allows it. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

async function answer(message: { id: number; op: string; args?: Record<string, unknown> }): Promise<void> {
  const handler = handlers.get(message.op);
  try {
    if (handler === undefined) throw new Error(`unknown op ${message.op}`);
    const result = await handler(message.args ?? {});
    process.send?.({ id: message.id, ok: true, result });
  } catch (error) {
    process.send?.({ id: message.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
}

function resetRss(gc: boolean): number {
  if (gc) collectGarbage();
  const now = process.memoryUsage.rss();
  if (kernelPeakWorks) {
    try {
      // "5" resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0).
      writeFileSync('/proc/self/clear_refs', '5');
    } catch {
      kernelPeakWorks = false;
    }
  }
  rssView[0] = now;
  rssView[1] = now;
  return now;
}

function readRss(): RssReading {
  const current = process.memoryUsage.rss();
  const sampledPeak = Math.max(rssView[1], current);
  const kernelPeak = kernelPeakWorks ? kernelHighWaterMark() : null;
  return { current, peak: Math.max(sampledPeak, kernelPeak ?? 0), sampledPeak, kernelPeak };
}

/** Linux's clock tick for /proc CPU times (USER_HZ: 100 on every Linux architecture Node runs on). */
const USER_HZ = 100;

/**
 * CPU time (user + system) of this process's main thread so far, in µs at the
 * kernel's 10 ms tick, from /proc; null where there is none. The main thread
 * alone: the RSS sampler and the collector's helpers run beside it at a rate
 * that does not follow the requests.
 */
function mainThreadCpuMicros(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // After the command name (which may hold spaces or parentheses), utime and stime are fields 12 and 13.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / USER_HZ;
  } catch {
    return null;
  }
}

function kernelHighWaterMark(): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Event-loop delay over one window, ms. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  /** Samples taken (one per resolution tick the loop managed). */
  count: number;
}

let loopDelay: IntervalHistogram | undefined;

const LOOP_DELAY_RESOLUTION_MS = 10;

/** Starts measuring this process's event-loop delay. */
function startLoopDelay(): boolean {
  loopDelay?.disable();
  loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();
  return true;
}

/**
 * Stops the window. The histogram records each interval between its timer's
 * ticks (an idle loop reads the resolution, 10 ms), in ns; the answer is the
 * delay beyond the resolution, in ms.
 */
function stopLoopDelay(): LoopDelay {
  if (loopDelay === undefined) throw new Error('no loop-delay window running');
  loopDelay.disable();
  const ms = (ns: number) => Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS);
  const reading = { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max), count: loopDelay.count };
  loopDelay = undefined;
  return reading;
}

let session: Session | undefined;

/** Starts a CPU profile of this server's main thread (inspector), for one measured window. */
async function startProfile(): Promise<boolean> {
  session ??= new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return true;
}

/** Stops the profile and writes it (a .cpuprofile for Chrome DevTools or bench/profile-top). */
async function stopProfile(file: string): Promise<string> {
  if (session === undefined) throw new Error('no profile running');
  const { profile } = await session.post('Profiler.stop');
  await session.post('Profiler.disable');
  session.disconnect();
  writeFileSync(file, JSON.stringify(profile));
  return file;
}
