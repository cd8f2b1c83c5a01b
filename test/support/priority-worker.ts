/**
 * A worker module for `encoderPoolRunning` that answers each
 * task with its own thread's nice value (`os.getPriority(0)`: on Linux the
 * calling thread's, not the process's), as a 32-bit integer. Tests compare it
 * with the main thread's to see the pool's niceIncrement applied per worker.
 */
import { getPriority } from 'node:os';

export default function threadPriority(): Uint8Array {
  return new Uint8Array(Int32Array.of(getPriority(0)).buffer);
}
