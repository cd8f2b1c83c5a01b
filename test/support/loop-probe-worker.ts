/**
 * A worker module for `encoderPoolRunning` that
 * tells whether its event loop turns once a task is done: each task
 * schedules an immediate that announces itself on the BroadcastChannel named
 * by `workerData`. Node frees a native addon's Buffer in such a callback, so
 * a worker whose loop never turns keeps every compressed frame it made
 * (native-notes.md, "lz4-napi").
 */
import { BroadcastChannel, workerData } from 'node:worker_threads';

const channel = new BroadcastChannel(String(workerData));
channel.unref();
let tasks = 0;

export default function probe(): Uint8Array {
  const task = ++tasks;
  setImmediate(() => channel.postMessage(task));
  return Uint8Array.of(1);
}
