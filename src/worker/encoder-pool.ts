/**
 * The worker pool that encodes response chunks (piscina over worker_threads).
 * Workers start lazily and idle out, so an idle server holds no threads.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { S2SPError } from '../errors.js';
import { optionsObject, integerOption } from '../option-checks.js';
import type { EncodeTask } from './encode-task.js';

/** Options of {@link createEncoderPool}. */
export interface EncoderPoolOptions {
  /** Worker threads (default: available cores, at most 4). */
  threads?: number;
  /** Milliseconds an idle worker lives (default 30 s). */
  idleTimeoutMs?: number;
  /**
   * How much lower the workers' CPU priority is than the process's, as a
   * Unix nice increment (0 to 19; default 10). Encoding a big transfer then
   * yields the CPU to the event loop, so small requests served meanwhile keep
   * their latency; alone, a worker still gets a whole core
   * (native-notes.md, "Worker priority"). 0 leaves the workers as they are.
   */
  niceIncrement?: number;
}

/**
 * A worker module in place of s2sp's encode-worker, for instrumentation and
 * fault-injection tests (`s2sp/testing`): its default export wraps
 * encode-worker's, and `data` is handed to it as its workerData.
 */
export interface WorkerModule {
  file: string | URL;
  data?: unknown;
}

/** Options of one {@link EncoderPool.run}. */
export interface RunOptions {
  /**
   * Cancels the task while it still waits in the queue (the client it was for
   * went away): it is dropped and the promise rejects with an AbortError. A
   * task already running finishes, its result unused: stopping its thread
   * mid-chunk would cost a new thread more than the rest of the chunk.
   */
  signal?: AbortSignal;
  /**
   * Work for idle threads (bodies prepared in think time): the task waits in
   * the pool, not in piscina's queue, until fewer tasks run than there are
   * threads, so it never queues ahead of a fetch's tasks; a fetch waits at
   * most for the background tasks already running (one per thread). Aborting
   * it while it waits drops it at once.
   */
  background?: boolean;
}

/** Encodes chunks in worker threads. */
export interface EncoderPool {
  /** Number of worker threads. */
  readonly threads: number;
  /** Encodes one chunk in a worker; the bytes arrive transferred, not copied. */
  run(task: EncodeTask, options?: RunOptions): Promise<Uint8Array>;
  /** Stops every worker. */
  close(): Promise<void>;
}

const WORKER_FILE = new URL('./encode-worker.js', import.meta.url).href;
/** The default nice increment of the workers: background work, below the event loop. */
export const DEFAULT_NICE_INCREMENT = 10;
/** 19 is the lowest priority a Unix thread can have. */
const MAX_NICE_INCREMENT = 19;

function moduleHref(file: string | URL): string {
  if (file instanceof URL || file.startsWith('file:')) return new URL(file).href;
  return pathToFileURL(file).href;
}

/**
 * Creates an encoder pool with `threads` workers.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for a thread count or idle timeout that is not a positive integer, or a nice increment outside 0 to 19
 */
export function createEncoderPool(options: EncoderPoolOptions = {}): EncoderPool {
  return encoderPoolRunning({ file: WORKER_FILE }, options);
}

/** An encoder pool whose threads run `worker` (s2sp/testing); {@link createEncoderPool} runs encode-worker. */
export function encoderPoolRunning(worker: WorkerModule, options: EncoderPoolOptions = {}): EncoderPool {
  options = optionsObject(options);
  const threads = integerOption(options.threads, 'threads', 1) ?? Math.min(4, availableParallelism());
  const niceIncrement = integerOption(options.niceIncrement, 'niceIncrement', 0, MAX_NICE_INCREMENT) ?? DEFAULT_NICE_INCREMENT;
  const piscina = new Piscina<EncodeTask, Uint8Array>({
    filename: moduleHref(worker.file),
    workerData: worker.data,
    minThreads: 0,
    maxThreads: threads,
    idleTimeout: integerOption(options.idleTimeoutMs, 'idleTimeoutMs', 1) ?? 30_000,
    // piscina's default ('sync') parks an idle worker in Atomics.wait, so its event loop never
    // turns between tasks. Node frees a native addon's Buffer (lz4-napi and zstd frames) in a
    // callback queued on that loop, so those frees never ran and the process grew with every
    // compressed chunk (native-notes.md, "lz4-napi"). 'async' waits with Atomics.waitAsync and
    // lets the loop run.
    atomics: 'async',
    // Applied by each worker to its own thread when it starts (through piscina's optional
    // @napi-rs/nice; where that addon is missing, piscina goes on at normal priority).
    niceIncrement,
  });
  // Tasks handed to piscina and not settled yet, in the order they were handed
  // over. piscina starts tasks in that order, one per thread, so a task with at
  // least `threads` unsettled tasks ahead of it cannot have started: aborting
  // it only takes it off the queue. (piscina's abort of a running task would
  // stop its thread instead.)
  const unsettled = new Set<AbortController>();
  const queued = (controller: AbortController): boolean => {
    let ahead = 0;
    for (const other of unsettled) {
      if (other === controller) return ahead >= threads;
      ahead++;
    }
    return false;
  };
  const run = async (task: EncodeTask, runOptions: { signal?: AbortSignal } = {}): Promise<Uint8Array> => {
    const { signal } = runOptions;
    signal?.throwIfAborted();
    const controller = new AbortController();
    const onAbort = () => {
      if (queued(controller)) controller.abort(signal?.reason);
    };
    unsettled.add(controller);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await piscina.run(task, { signal: controller.signal });
    } finally {
      unsettled.delete(controller);
      signal?.removeEventListener('abort', onAbort);
      startIdleWork();
    }
  };
  // Background tasks waiting for a thread with nothing else to do, oldest first.
  const idleWork: Array<{ start: () => void; drop: (reason: unknown) => void }> = [];
  const startIdleWork = () => {
    while (idleWork.length > 0 && unsettled.size < threads) idleWork.shift()!.start();
  };
  const runInBackground = (task: EncodeTask, signal: AbortSignal | undefined): Promise<Uint8Array> =>
    new Promise((resolve, reject) => {
      signal?.throwIfAborted();
      const waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          run(task, { signal }).then(resolve, reject);
        },
        drop: (reason: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      const onAbort = () => {
        idleWork.splice(idleWork.indexOf(waiting), 1);
        waiting.drop(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      idleWork.push(waiting);
      startIdleWork();
    });
  let closed = false;
  return {
    threads,
    // piscina would quietly start a new worker after destroy(); a closed pool refuses instead.
    run: (task, runOptions) => {
      if (closed) return Promise.reject(new S2SPError('S2SP_ERR_ENCODER_POOL_CLOSED'));
      if (runOptions?.background === true) return runInBackground(task, runOptions.signal);
      return run(task, runOptions);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      for (const waiting of idleWork.splice(0)) waiting.drop(new S2SPError('S2SP_ERR_ENCODER_POOL_CLOSED'));
      await piscina.destroy();
    },
  };
}
