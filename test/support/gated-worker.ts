/**
 * Test support: s2sp's encode worker behind a gate the test opens, counting
 * the tasks it started. `workerData` is a SharedArrayBuffer of two Int32
 * slots shared with the test: [0] the gate (0 closed, 1 open), [1] tasks
 * started. A closed gate holds each task (at most 10 s) before it encodes,
 * so the pool's queue fills behind it.
 */
import { workerData } from 'piscina';
import encode from '../../src/worker/encode-worker.js';
import type { EncodeTask } from '../../src/worker/encode-task.js';

const slots = new Int32Array(workerData as SharedArrayBuffer);

export default function gatedEncode(task: EncodeTask): Uint8Array {
  Atomics.add(slots, 1, 1);
  Atomics.notify(slots, 1); // the test waits on the count (untilSlot), not on a timer
  const deadline = Date.now() + 10_000;
  while (Atomics.load(slots, 0) === 0 && Date.now() < deadline) Atomics.wait(slots, 0, 0, 100);
  return encode(task);
}
