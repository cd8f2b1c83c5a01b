/**
 * Test support: waiting, without polling, for an Int32 slot of a
 * SharedArrayBuffer that a worker thread changes and then wakes
 * (`Atomics.notify`). Atomics.waitAsync is in every Node this project runs
 * on; its types are in TypeScript's ES2024 lib, which the project does not
 * load, hence the declaration here.
 */
type WaitAsyncResult = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync(slots: Int32Array, index: number, value: number, timeoutMs: number): WaitAsyncResult }).waitAsync;

/**
 * Resolves once `holds` is true of slot `index`, checking again each time the
 * slot is woken. Rejects with `what` after `timeoutMs` (a bound for a fault
 * that never comes, not a wait: a passing test never reaches it).
 */
export async function untilSlot(slots: Int32Array, index: number, holds: (value: number) => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // A pending waitAsync does not keep the event loop alive by itself.
  const alive = setInterval(() => {}, 60_000);
  try {
    for (;;) {
      const value = Atomics.load(slots, index);
      if (holds(value)) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what} (waited ${timeoutMs} ms)`);
      const result = waitAsync(slots, index, value, left);
      if (result.async) await result.value; // woken or timed out: checked again above
    }
  } finally {
    clearInterval(alive);
  }
}
