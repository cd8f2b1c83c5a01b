/**
 * Starts a bench server (dist/bench/servers/<name>.js) as a child process and
 * drives it over IPC (see bench/servers/probe.ts). Servers run apart from the
 * client so each server's RSS is its own, and so the load generator does not
 * share the server's event loop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestTiming, RssReading } from '../servers/probe.js';

const SERVERS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'servers');
/** Where `--cpu-prof` server profiles go. */
export const PROFILE_DIR = join(tmpdir(), 's2sp-bench-profiles');

const START_TIMEOUT_MS = 180_000;
const REQUEST_TIMEOUT_MS = 120_000;

/** Options of {@link ServerChild.start}. */
export interface StartOptions {
  /** Run the child under `node --cpu-prof` (every thread); the profiles are written when it stops. */
  cpuProfAll?: boolean;
  /** Names the profile file. */
  label?: string;
  /** Environment variables set for the child on top of this process's (e.g. a deployment's malloc setting). */
  env?: Readonly<Record<string, string>>;
}

/**
 * The environment native-notes.md tells a long-running deployment to run
 * with: glibc's mmap threshold fixed, so freed buffers go back to the system
 * instead of staying in a malloc heap whose threshold grew. A value already
 * set in this process's environment wins.
 */
export const DEPLOYMENT_ENV: Readonly<{ MALLOC_MMAP_THRESHOLD_: string }> = {
  MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
};

/**
 * Lets every server settle before a measured request: a full gc in each,
 * then `ms` of quiet, so one server's leftover garbage (a 188 MB string of
 * the naive port) is not collected on the CPU the next request needs.
 */
export async function quiesce(servers: readonly ServerChild[], ms = 100): Promise<void> {
  await Promise.all(servers.map((s) => s.gc()));
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** A running bench server. */
export class ServerChild {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    /** What the server reported when it came up (port, tokens, ...). */
    readonly info: Record<string, unknown> & { port: number },
  ) {
    child.on('message', (message: { id?: number; ok?: boolean; result?: unknown; error?: string }) => {
      if (message.id === undefined) return;
      const waiting = this.pending.get(message.id);
      if (waiting === undefined) return;
      this.pending.delete(message.id);
      clearTimeout(waiting.timer);
      if (message.ok) waiting.resolve(message.result);
      else waiting.reject(new Error(`server op failed: ${message.error}`));
    });
    child.on('exit', () => {
      this.exited = true;
      for (const waiting of this.pending.values()) {
        clearTimeout(waiting.timer);
        waiting.reject(new Error('server exited'));
      }
      this.pending.clear();
    });
  }

  /** Forks `dist/bench/servers/<name>.js` with `config` and waits until it listens. */
  static async start(name: string, config: unknown, options: StartOptions = {}): Promise<ServerChild> {
    const execArgv = ['--expose-gc'];
    if (options.cpuProfAll) {
      // One directory per server: every thread writes its own CPU.<date>.<pid>.<tid>.<seq>.cpuprofile there.
      const dir = join(PROFILE_DIR, `${options.label ?? name}-${Date.now()}`);
      mkdirSync(dir, { recursive: true });
      execArgv.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
    }
    const child = fork(join(SERVERS_DIR, `${name}.js`), [JSON.stringify(config)], {
      execArgv,
      ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const info = await new Promise<Record<string, unknown> & { port: number }>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill();
        reject(new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s`));
      }, START_TIMEOUT_MS);
      child.on('message', function onMessage(message: { ready?: boolean; info?: Record<string, unknown> & { port: number } }) {
        if (!message.ready || message.info === undefined) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message.info);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited with ${code} before it was ready`));
      });
    });
    return new ServerChild(child, info);
  }

  /** The child's pid. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string {
    return `http://127.0.0.1:${this.info.port}${path}`;
  }

  /** Sends an op and waits for its answer. */
  request<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.exited) return Promise.reject(new Error('server exited'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`server op ${op} timed out`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.child.send({ id, op, args });
    });
  }

  /** gc in the server (unless `gc` is false), then restarts its RSS peak; returns the RSS now (bytes). */
  resetRss(gc = true): Promise<number> {
    return this.request<number>('reset-rss', { gc });
  }

  /** A full gc in the server; returns its RSS after it. */
  gc(): Promise<number> {
    return this.request<number>('gc');
  }

  /** Peak RSS since the last reset, and current. */
  rss(): Promise<RssReading> {
    return this.request<RssReading>('rss');
  }

  /** CPU time of the server's main thread so far, µs (Linux /proc, 10 ms ticks); null elsewhere. */
  mainThreadCpu(): Promise<number | null> {
    return this.request<number | null>('main-thread-cpu');
  }

  /** Request times recorded since the last call. */
  timings(): Promise<RequestTiming[]> {
    return this.request<RequestTiming[]>('timings');
  }

  /**
   * Runs `fn` while the server's main thread is CPU-profiled (when `enabled`),
   * and writes the profile to PROFILE_DIR/<name>.cpuprofile.
   */
  async profiled<T>(enabled: boolean, name: string, fn: () => Promise<T>): Promise<T> {
    if (!enabled) return fn();
    mkdirSync(PROFILE_DIR, { recursive: true });
    await this.request('cpu-profile-start');
    try {
      return await fn();
    } finally {
      const file = await this.request<string>('cpu-profile-stop', { file: join(PROFILE_DIR, `${name}.cpuprofile`) });
      process.stderr.write(`  profile: ${file}\n`);
    }
  }

  /** Asks the server to exit (cleanly, so a CPU profile is written); kills it after 10 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.request('exit').catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
