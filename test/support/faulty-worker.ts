/**
 * Test support: s2sp's encode worker with injectable faults. `workerData` is
 * a SharedArrayBuffer of three Int32 slots shared with the test:
 *   [0] the fault: 0 none, 1 throw, 2 the worker thread exits
 *   [1] countdown: tasks from now until the first faulty one (1 = the next)
 *   [2] how many consecutive tasks fail from there
 * so a test can fail exactly the Nth task the pool runs, mid-request.
 */
import { workerData } from 'piscina';
import encode from '../../src/worker/encode-worker.js';
import type { EncodeTask } from '../../src/worker/encode-task.js';

const control = new Int32Array(workerData as SharedArrayBuffer);

export default function faultyEncode(task: EncodeTask): Uint8Array {
  const position = Atomics.sub(control, 1, 1); // 1 for the first faulty task, 0 for the next...
  Atomics.notify(control, 1); // the test waits on the countdown (faultsSpent)
  if (position <= 1 && position > 1 - control[2]) {
    const fault = Atomics.load(control, 0);
    if (fault === 1) throw new Error('injected encoder failure');
    if (fault === 2) process.exit(3); // in a worker thread this ends the thread, not the process
  }
  return encode(task);
}
