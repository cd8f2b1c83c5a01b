/**
 * The worker pool that encodes response chunks (piscina over worker_threads).
 * Workers start lazily and idle out, so an idle server holds no threads.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import type { EncodeTask } from './encode-task.js';

/** Options of {@link createEncoderPool}. */
export interface EncoderPoolOptions {
  /** Worker threads (default: available cores, at most 4). */
  threads?: number;
  /** Milliseconds an idle worker lives (default 30 s). */
  idleTimeoutMs?: number;
  /**
   * The worker module (default: s2sp's encode-worker). For instrumentation
   * and fault-injection tests: a module whose default export wraps
   * encode-worker's. `workerData` is handed to it unchanged.
   */
  workerFile?: string | URL;
  workerData?: unknown;
}

/** Encodes chunks in worker threads. */
export interface EncoderPool {
  /** Number of worker threads. */
  readonly threads: number;
  /** Encodes one chunk in a worker; the bytes arrive transferred, not copied. */
  run(task: EncodeTask): Promise<Uint8Array>;
  /** Stops every worker. */
  close(): Promise<void>;
}

const WORKER_FILE = new URL('./encode-worker.js', import.meta.url).href;

function moduleHref(file: string | URL): string {
  if (file instanceof URL || file.startsWith('file:')) return new URL(file).href;
  return pathToFileURL(file).href;
}

/** Creates an encoder pool with `threads` workers. */
export function createEncoderPool(options: EncoderPoolOptions = {}): EncoderPool {
  const threads = options.threads ?? Math.min(4, availableParallelism());
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer, got ${threads}`);
  const piscina = new Piscina<EncodeTask, Uint8Array>({
    filename: options.workerFile === undefined ? WORKER_FILE : moduleHref(options.workerFile),
    workerData: options.workerData,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: options.idleTimeoutMs ?? 30_000,
    // piscina's default ('sync') parks an idle worker in Atomics.wait, so its event loop never
    // turns between tasks. Node frees a native addon's Buffer (lz4-napi and zstd frames) in a
    // callback queued on that loop, so those frees never ran and the process grew with every
    // compressed chunk (native-notes.md, "lz4-napi"). 'async' waits with Atomics.waitAsync and
    // lets the loop run.
    atomics: 'async',
  });
  let closed = false;
  return {
    threads,
    // piscina would quietly start a new worker after destroy(); a closed pool refuses instead.
    run: (task) => (closed ? Promise.reject(new Error('the encoder pool is closed')) : piscina.run(task)),
    close: async () => {
      if (closed) return;
      closed = true;
      await piscina.destroy();
    },
  };
}
