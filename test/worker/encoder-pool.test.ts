import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism, getPriority } from 'node:os';
import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import { BroadcastChannel } from 'node:worker_threads';
import { tableFromIPC } from 'apache-arrow';
import { tableFromSharedIpc } from '../../src/ipc/shared-body.js';
import { sharedIpcFromTable } from '../support/shared-ipc.js';
import { encodeChunk, type ChunkFormat } from '../../src/table/chunk-encoding.js';
import { concatParts, schemaMessage } from '../../src/ipc/encode/message.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';
import { NEEDS_LZ4, NEEDS_ZSTD, compressionFor, registerArrowDecoder } from '../support/arrow-streams.js';
import type { RowChunk } from '../../src/table/row-chunks.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { projectColumns } from '../../src/table/select.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import type { EncodeTask } from '../../src/worker/encode-task.js';
import { DEFAULT_NICE_INCREMENT, createEncoderPool } from '../../src/worker/encoder-pool.js';
import { untilSlot } from '../support/slot-wait.js';
import { encoderPoolRunning } from '../../src/testing.js';
import { isS2SPError } from '../../src/errors.js';

function rows(n: number, salt = 0): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    n: i + salt,
    time: 1517966773840 + i * 1000 + salt,
    place: i % 4 ? `${i} km W of Ōkuma ${salt}` : null,
    ok: i % 3 === 0,
    nested: i % 2 ? [i, { salt }] : { i },
  }));
}

/** A cached body as the store holds it: shared IPC bytes and the table mapped over them. */
function body(n: number, salt = 0) {
  const ipc = sharedIpcFromTable(tableFromRows(rows(n, salt)));
  return { ipc, id: randomUUID(), table: tableFromSharedIpc(ipc) };
}

/** What the main thread encodes for the same task. */
function mainThread(task: EncodeTask): Uint8Array {
  const table = projectColumns(tableFromSharedIpc(task.ipc), task.columns ?? undefined);
  return concatParts(encodeChunk(table, task.chunk, task.format, compressionFor(task.format)));
}

const FORMATS: Array<[string, ChunkFormat]> = [
  ['JSON', { kind: 'json' }],
  ['Arrow', { kind: 'arrow' }],
  ['Arrow+LZ4', { kind: 'arrow', codec: 'lz4' }],
  ['Arrow+ZSTD', { kind: 'arrow', codec: 'zstd' }],
];

const CHUNKS: Array<[string, RowChunk]> = [
  ['range', { start: 100, end: 900 }],
  ['scattered ids', { ids: Int32Array.of(0, 3, 4, 5, 77, 500, 999) }],
  ['long runs', { ids: Int32Array.from({ length: 400 }, (_, i) => (i < 200 ? i : 600 + i)) }],
];

test(
  'a worker encodes a chunk to the same bytes as the main thread (JSON, Arrow, Arrow+LZ4, Arrow+ZSTD)',
  { skip: NEEDS_LZ4.skip || NEEDS_ZSTD.skip },
  async (t) => {
    const pool = createEncoderPool({ threads: 2 });
    t.after(() => pool.close());
    assert.equal(pool.threads, 2);
    const b = body(1000);
    for (const [formatLabel, format] of FORMATS) {
      for (const [chunkLabel, chunk] of CHUNKS) {
        for (const columns of [null, ['_row_id', 'nested', 'time']]) {
          const task: EncodeTask = { ipc: b.ipc, bodyId: b.id, columns, chunk, format };
          const bytes = await pool.run(task);
          const label = `${formatLabel}, ${chunkLabel}, columns ${columns}`;
          assert.ok(bytes instanceof Uint8Array, `${label}: a Uint8Array`);
          assert.ok(bytes.byteLength > 0, label);
          assert.deepEqual(bytes, mainThread(task), label);
        }
      }
    }
  },
);

test('worker output decodes to the selected rows (JSON fragment and Arrow+LZ4 batch)', NEEDS_LZ4, async (t) => {
  registerArrowDecoder('lz4');
  const pool = createEncoderPool({ threads: 1 });
  t.after(() => pool.close());
  const b = body(50);
  const ids = [1, 2, 30, 49];
  const expected = ids.map((id) => ({ _row_id: id, ...rows(50)[id] }));
  const chunk = { ids: Int32Array.from(ids) };

  const json = await pool.run({ ipc: b.ipc, bodyId: b.id, columns: null, chunk, format: { kind: 'json' } });
  assert.deepEqual(JSON.parse(`[${Buffer.from(json).toString('utf8')}]`), expected);

  const arrow = await pool.run({ ipc: b.ipc, bodyId: b.id, columns: null, chunk, format: { kind: 'arrow', codec: 'lz4' } });
  const stream = concatParts([schemaMessage(b.table.schema), arrow, END_OF_STREAM]);
  assert.deepEqual(rowsFromTable(tableFromIPC(stream)), expected);
});

test('many tasks over several bodies at once (more bodies than a worker keeps mapped)', async (t) => {
  const pool = createEncoderPool({ threads: 2 });
  t.after(() => pool.close());
  const bodies = Array.from({ length: 7 }, (_, k) => body(300, k * 1000));
  const tasks: EncodeTask[] = [];
  for (let round = 0; round < 3; round++) {
    for (const b of bodies) {
      tasks.push({
        ipc: b.ipc,
        bodyId: b.id,
        columns: ['_row_id', 'n', 'place'],
        chunk: { start: round * 100, end: round * 100 + 100 },
        format: { kind: 'json' },
      });
    }
  }
  const results = await Promise.all(tasks.map((task) => pool.run(task)));
  results.forEach((bytes, i) => assert.deepEqual(bytes, mainThread(tasks[i]), `task ${i}`));
});

test('a task that fails in the worker rejects run(), and the pool keeps working', async (t) => {
  const pool = createEncoderPool({ threads: 1 });
  t.after(() => pool.close());
  const garbage = new Uint8Array(new SharedArrayBuffer(64)).fill(7);
  await assert.rejects(pool.run({ ipc: garbage, bodyId: randomUUID(), columns: null, chunk: { start: 0, end: 1 }, format: { kind: 'json' } }));
  const b = body(10);
  const task: EncodeTask = { ipc: b.ipc, bodyId: b.id, columns: null, chunk: { start: 0, end: 10 }, format: { kind: 'json' } };
  assert.deepEqual(await pool.run(task), mainThread(task));
});

test('invalid thread counts, idle timeouts and nice increments are S2SP_ERR_OPTION_INVALID', () => {
  for (const threads of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => createEncoderPool({ threads }), { code: 'S2SP_ERR_OPTION_INVALID' }, `threads ${threads}`);
  }
  for (const idleTimeoutMs of [0, -5, 0.5]) {
    assert.throws(() => createEncoderPool({ idleTimeoutMs }), { code: 'S2SP_ERR_OPTION_INVALID' }, `idleTimeoutMs ${idleTimeoutMs}`);
  }
  for (const niceIncrement of [-1, 20, 2.5]) {
    assert.throws(() => createEncoderPool({ niceIncrement }), { code: 'S2SP_ERR_OPTION_INVALID' }, `niceIncrement ${niceIncrement}`);
  }
});

// os.getPriority(0) reads the calling thread's nice value on Linux only (elsewhere the process's).
const PRIORITY_WORKER_FILE = new URL('../support/priority-worker.js', import.meta.url);
const LINUX_ONLY = { skip: process.platform === 'linux' ? false : 'thread priorities are per thread on Linux only' };

test('workers run below the main thread by their nice increment (default 10), only their own threads', LINUX_ONLY, async (t) => {
  const main = getPriority(0);
  const b = body(1);
  const task: EncodeTask = { ipc: b.ipc, bodyId: b.id, columns: null, chunk: { start: 0, end: 1 }, format: { kind: 'json' } };
  const workerNice = async (options: { niceIncrement?: number }) => {
    const pool = encoderPoolRunning({ file: PRIORITY_WORKER_FILE }, { threads: 1, ...options });
    t.after(() => pool.close());
    const answer = await pool.run(task);
    return new Int32Array(answer.buffer, answer.byteOffset, 1)[0];
  };
  assert.equal(await workerNice({}), Math.min(19, main + DEFAULT_NICE_INCREMENT), 'the default');
  assert.equal(await workerNice({ niceIncrement: 3 }), Math.min(19, main + 3));
  assert.equal(await workerNice({ niceIncrement: 0 }), main, '0 leaves the worker as it is');
  assert.equal(getPriority(0), main, 'the main thread keeps its priority');
});

test('the default thread count is the core count, at most 4', async () => {
  const pool = createEncoderPool();
  try {
    assert.equal(pool.threads, Math.min(4, availableParallelism()));
  } finally {
    await pool.close();
  }
});

test('close() stops the workers: a task in flight rejects, and close() resolves', async () => {
  const pool = createEncoderPool({ threads: 1 });
  const small = body(10);
  const warm: EncodeTask = { ipc: small.ipc, bodyId: small.id, columns: null, chunk: { start: 0, end: 10 }, format: { kind: 'json' } };
  assert.deepEqual(await pool.run(warm), mainThread(warm));
  // A task long enough to still run when close() is called, and one queued behind it.
  const big = body(300_000);
  const long: EncodeTask = { ipc: big.ipc, bodyId: big.id, columns: null, chunk: { start: 0, end: 300_000 }, format: { kind: 'json' } };
  const running = assert.rejects(pool.run(long), /Terminating worker thread/);
  const queued = assert.rejects(pool.run(warm), /Terminating worker thread/);
  const started = Date.now();
  await pool.close();
  await running;
  await queued;
  assert.ok(Date.now() - started < 5000, 'close() did not wait for the long task');
  await assert.rejects(pool.run(warm), { code: 'S2SP_ERR_ENCODER_POOL_CLOSED' }, 'a closed pool runs nothing');
  await pool.close(); // idempotent
});

test('close() of a pool that never ran a task resolves', async () => {
  await createEncoderPool({ threads: 2 }).close();
});

/**
 * A one-thread pool whose worker holds each task until `open()`, counting the
 * tasks it started in `slots[1]`, and a small task for it.
 */
function gatedPool() {
  const slots = new Int32Array(new SharedArrayBuffer(8));
  const pool = encoderPoolRunning({ file: new URL('../support/gated-worker.js', import.meta.url), data: slots.buffer }, { threads: 1 });
  const b = body(10);
  const task: EncodeTask = { ipc: b.ipc, bodyId: b.id, columns: null, chunk: { start: 0, end: 10 }, format: { kind: 'json' } };
  const open = () => {
    Atomics.store(slots, 0, 1);
    Atomics.notify(slots, 0);
  };
  return { pool, slots, task, open };
}

test('an aborted signal drops queued tasks and lets a running one finish (its thread is not stopped)', async (t) => {
  const { pool, slots, task, open } = gatedPool();
  t.after(() => pool.close());
  const hangUp = new AbortController();
  const running = pool.run(task, { signal: hangUp.signal });
  const queued = [pool.run(task, { signal: hangUp.signal }), pool.run(task, { signal: hangUp.signal })];
  const other = pool.run(task); // another client's task, behind them in the queue
  await untilSlot(slots, 1, (started) => started > 0, 'the first task never started');
  assert.equal(Atomics.load(slots, 1), 1, 'the first task started');
  hangUp.abort();
  for (const dropped of queued) await assert.rejects(dropped, { name: 'AbortError' });
  await assert.rejects(pool.run(task, { signal: hangUp.signal }), { name: 'AbortError' }, 'a task for a gone client is not queued');
  open();
  assert.deepEqual(await running, mainThread(task), 'the running task finished on its thread');
  assert.deepEqual(await other, mainThread(task));
  assert.equal(Atomics.load(slots, 1), 2, 'the dropped tasks never reached the worker');
});

test("regression: a worker's event loop turns once its tasks are done, so native Buffers it dropped are freed (LZ4 in workers grew the process)", async (t) => {
  // piscina's default parks an idle worker in Atomics.wait: callbacks queued by a task (where Node
  // frees an addon's Buffer) never ran, not even while the worker sat idle.
  const name = `s2sp-loop-probe-${randomUUID()}`;
  const channel = new BroadcastChannel(name);
  t.after(() => channel.close());
  const pool = encoderPoolRunning({ file: new URL('../support/loop-probe-worker.js', import.meta.url), data: name }, { threads: 1 });
  t.after(() => pool.close());
  const task: EncodeTask = { ipc: new Uint8Array(0), bodyId: 'probe', columns: null, chunk: { start: 0, end: 0 }, format: { kind: 'json' } };
  for (let i = 1; i <= 3; i++) {
    const ran = new Promise<unknown>((resolve) => channel.addEventListener('message', (event) => resolve((event as MessageEvent).data), { once: true }));
    await pool.run(task);
    const outcome = await Promise.race([ran, setTimeout(5000, 'timed out', { ref: false })]);
    assert.equal(outcome, i, `task ${i}: the idle worker ran the callback its task queued`);
  }
});

test('a background task waits for an idle thread: a task handed over after it still runs first, and an abort drops it while it waits', async (t) => {
  const { pool, slots, task, open } = gatedPool();
  t.after(() => pool.close());
  const running = pool.run(task);
  await untilSlot(slots, 1, (started) => started > 0, 'the first task never started');
  const stopped = new AbortController();
  const dropped = pool.run(task, { background: true, signal: stopped.signal });
  const order: string[] = [];
  const background = pool.run(task, { background: true }).then(() => order.push('background'));
  const fetch = pool.run(task).then(() => order.push('fetch'));
  stopped.abort();
  await assert.rejects(dropped, { name: 'AbortError' });
  open();
  await Promise.all([running, background, fetch]);
  assert.deepEqual(order, ['fetch', 'background'], 'the idle-time task waited for the fetch handed over after it');
  assert.equal(Atomics.load(slots, 1), 3, 'the dropped task never reached the worker');
});

test('close() rejects background tasks still waiting for a thread', async () => {
  const { pool, slots, task, open } = gatedPool();
  const running = pool.run(task);
  running.catch(() => {});
  await untilSlot(slots, 1, (started) => started > 0, 'the first task never started');
  const waiting = pool.run(task, { background: true });
  const closing = pool.close();
  await assert.rejects(waiting, (error) => isS2SPError(error, 'S2SP_ERR_ENCODER_POOL_CLOSED'));
  open();
  await closing;
});
