/**
 * Leases always end (SPEC 3.4): a pipelined request whose connection closes
 * before its response starts releases its lease, and a client that hangs up
 * has its chunk tasks still queued in the worker pool dropped.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane, type DataPlaneOptions } from '../../src/data/data-plane-plugin.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import type { EncoderPool } from '../../src/worker/encoder-pool.js';
import { createSpyPool } from '../support/data-plane-harness.js';
import { watchLeases } from '../support/lease-watch.js';
import { collectRaw, connectRaw } from '../support/raw-socket.js';
import { waitUntilIdle } from '../support/wait-until-idle.js';
import { encoderPoolRunning } from '../../src/testing.js';

const GATED_WORKER_FILE = fileURLToPath(new URL('../support/gated-worker.js', import.meta.url));
const ROWS = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `row-${i}` }));

async function startPlane(t: TestContext, options: Omit<DataPlaneOptions, 'store'>) {
  const store = watchLeases(new MemoryStore());
  const app = Fastify();
  await app.register(s2spDataPlane, { ...options, store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  const port = (app.server.address() as { port: number }).port;
  const mint = async () => (await store.put(tableFromRows(ROWS))).token;
  return { store, port, mint };
}

function fetchRequest(token: string, close = false): string {
  return (
    `POST /s2sp/data/${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `${close ? 'Connection: close\r\n' : ''}Content-Length: 2\r\n\r\n{}`
  );
}

test('a pipelined request whose connection closes before its response starts releases its lease', async (t) => {
  // Every chunk is a pool task that waits for the gate: both requests hold a lease, no response has started.
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  const pool = createSpyPool(1);
  const gatedPool: EncoderPool = { threads: 1, run: async (task, options) => (await gate, pool.run(task, options)), close: async () => {} };
  const { store, port, mint } = await startPlane(t, { workers: gatedPool, inlineCellLimit: 0 });
  const [first, second] = [await mint(), await mint()];
  const socket = await connectRaw(port);
  const answer = collectRaw(socket, 5000);
  socket.write(fetchRequest(first) + fetchRequest(second));
  await store.leased(2);
  socket.destroy();
  await answer;
  openGate();
  // Each cut transfer's lease is released (a stuck one never settles: the wait fails), not committed.
  assert.deepEqual(await store.settled(first), ['release']);
  assert.deepEqual(await store.settled(second), ['release']);
  await waitUntilIdle(store, first);
  await waitUntilIdle(store, second);
});

test('a client that hangs up has its chunk tasks still queued in the pool dropped; running ones finish', async (t) => {
  const slots = new Int32Array(new SharedArrayBuffer(8));
  const real = encoderPoolRunning({ file: GATED_WORKER_FILE, data: slots.buffer }, { threads: 1 });
  t.after(() => real.close());
  const settled: Array<Promise<string>> = [];
  let bothHandedOver!: () => void;
  const handedOver = new Promise<void>((resolve) => (bothHandedOver = resolve));
  const watched: EncoderPool = {
    threads: real.threads,
    run(task, options) {
      const run = real.run(task, options);
      settled.push(
        run.then(
          () => 'done',
          (error: Error) => error.name,
        ),
      );
      if (settled.length === 2) bothHandedOver();
      return run;
    },
    close: () => real.close(),
  };
  const { store, port, mint } = await startPlane(t, { workers: watched, inlineCellLimit: 0 });
  const [running, queued] = [await mint(), await mint()];

  // The first client's chunk runs in the only thread, held by the gate.
  const first = await connectRaw(port);
  const firstAnswer = collectRaw(first, 10_000);
  first.write(fetchRequest(running, true));
  await store.leased(1);
  // The second client's chunk waits in the queue behind it; then the client hangs up.
  const second = await connectRaw(port);
  second.write(fetchRequest(queued));
  await handedOver;
  second.destroy();
  assert.equal(await settled[1], 'AbortError', 'the queued task was dropped');

  Atomics.store(slots, 0, 1);
  Atomics.notify(slots, 0);
  const result = await firstAnswer;
  assert.equal(result.status, 200, result.text.slice(0, 200));
  assert.equal(await settled[0], 'done');
  assert.equal(Atomics.load(slots, 1), 1, "the worker started only the first client's task");
  await waitUntilIdle(store, queued);
});
