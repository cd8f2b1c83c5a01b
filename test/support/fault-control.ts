/** Test support: arming the faults of faulty-worker.ts from the test's thread. */
import { fileURLToPath } from 'node:url';
import { untilSlot } from './slot-wait.js';

/** The faulty worker module, for `encoderPoolRunning`. */
export const FAULTY_WORKER_FILE = fileURLToPath(new URL('./faulty-worker.js', import.meta.url));

/** The control block handed to the workers as `workerData`. */
export function createFaultControl(): SharedArrayBuffer {
  return new SharedArrayBuffer(12);
}

/** Fault kinds for slot 0. */
export const Fault = { None: 0, Throw: 1, Exit: 2 } as const;

/** Arms `fault` for `count` consecutive tasks starting with the `nth` from now (1 = the next one). */
export function armFault(shared: SharedArrayBuffer, fault: number, nth: number, count = 1): void {
  const slots = new Int32Array(shared);
  Atomics.store(slots, 0, fault);
  Atomics.store(slots, 2, count);
  Atomics.store(slots, 1, nth);
}

/**
 * Resolves once every armed faulty task has run. A request that failed on one
 * chunk may leave a sibling chunk still queued; without this wait, that
 * sibling's fault could land on the next request instead. The worker wakes
 * the countdown slot at each task, so this waits on that, not on a timer.
 */
export async function faultsSpent(shared: SharedArrayBuffer, timeoutMs = 5000): Promise<void> {
  const slots = new Int32Array(shared);
  const count = Atomics.load(slots, 2);
  await untilSlot(slots, 1, (countdown) => countdown <= 1 - count, 'armed faults were never reached', timeoutMs);
}
