/**
 * Asks V8 for a full garbage collection after many bytes of memory it does
 * not weigh were dropped. A SharedArrayBuffer's memory returns to the system
 * only in a full collection, and its size does not count toward starting one;
 * nor do the buffers a native addon (lz4-napi) hands back. Dropped body
 * buffers, or a worker's compressed chunks, can pile up to gigabytes while
 * the JS heap stays small. Each thread (isolate) collects its own garbage, so
 * each thread that drops such memory calls this.
 *
 * The collector is reached the documented-but-unusual way (`--expose-gc` set
 * at run time, `gc` taken from a fresh context), once, lazily; where that is
 * not possible this is a no-op. Collections are rate limited, and run off the
 * current call stack.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Dropped bytes that justify a collection. */
const THRESHOLD_BYTES = 64 * 1024 * 1024;
/** At most one collection per this many milliseconds. */
const MIN_INTERVAL_MS = 2000;

let collect: (() => void) | null | undefined;
let pendingBytes = 0;
let lastRun = 0;
let scheduled = false;

function collector(): (() => void) | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  } catch {
    collect = null;
  }
  return collect;
}

/** Notes that `bytes` of unweighed memory became garbage in this thread; may schedule a full collection. */
export function externalMemoryDropped(bytes: number): void {
  pendingBytes += bytes;
  if (scheduled || pendingBytes < THRESHOLD_BYTES) return;
  scheduled = true;
  const wait = Math.max(0, lastRun + MIN_INTERVAL_MS - Date.now());
  setTimeout(() => {
    scheduled = false;
    pendingBytes = 0;
    lastRun = Date.now();
    collector()?.();
  }, wait).unref();
}
