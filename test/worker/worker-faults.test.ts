/**
 * Worker faults (hardening): a worker that throws, and one whose thread dies,
 * during a request. The request fails cleanly (500 before the first byte,
 * a cut transfer after it), the token is kept, the pool recovers, and the
 * next 100 requests succeed.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import Fastify from 'fastify';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { armFault, createFaultControl, Fault, FAULTY_WORKER_FILE, faultsSpent } from '../support/fault-control.js';
import { watchLeases } from '../support/lease-watch.js';
import { encoderPoolRunning } from '../../src/testing.js';

const ROWS = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row-${i}`, value: i / 7 }));
// JSON: LZ4 is compressed on the main thread (native-notes.md), JSON chunks go to the workers.
const JSON_ACCEPT: string | undefined = undefined;

async function setup(t: TestContext) {
  const control = createFaultControl();
  const pool = encoderPoolRunning({ file: FAULTY_WORKER_FILE, data: control }, { threads: 2 });
  const store = watchLeases(new MemoryStore());
  const app = Fastify();
  // Small chunks, none inline: every chunk of a request is a worker task. Nothing prepared in think
  // time: the armed faults must hit the fetch's own tasks.
  await app.register(s2spDataPlane, { store, workers: pool, chunkRows: 2000, inlineCellLimit: 0, prepare: 'off' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    await pool.close();
    await store.close();
  });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const table = tableFromRows(ROWS);
  const mint = async () => `${base}/s2sp/data/${(await store.put(table)).token}`;
  return { control, store, mint };
}

interface Outcome {
  status: number;
  body: Buffer;
  complete: boolean;
}

/** POSTs and reads the whole answer; `complete` is false when the connection was cut. */
function post(url: string, accept?: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: accept ? { accept } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: res.complete }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: false }));
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: false }));
    });
    req.on('error', reject);
    req.end();
  });
}

function tokenOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

for (const [label, fault] of [
  ['throws', Fault.Throw],
  ['dies', Fault.Exit],
] as const) {
  test(`a worker that ${label} on a request's first chunk: 500, token kept, retry succeeds`, async (t) => {
    const { control, store, mint } = await setup(t);
    const url = await mint();
    // Both workers start a chunk at once, so fail both in-flight tasks: the first chunk is one of them.
    armFault(control, fault, 1, 2);
    const failed = await post(url);
    assert.equal(failed.status, 500);
    assert.equal(JSON.parse(failed.body.toString()).error.code, 'S2SP_ERR_INTERNAL');
    assert.ok(!failed.body.toString().includes('injected'), 'the message names no internals');
    assert.equal(await store.has(tokenOf(url)), true);
    await faultsSpent(control);
    const retry = await post(url);
    assert.equal(retry.status, 200);
    assert.equal(JSON.parse(retry.body.toString()).body.length, ROWS.length);
  });

  test(`a worker that ${label} mid-stream: the transfer is cut, the token kept, a retry is whole`, { timeout: 30_000 }, async (t) => {
    const { control, store, mint } = await setup(t);
    const reference = await post(await mint(), JSON_ACCEPT);
    assert.equal(reference.status, 200);
    const url = await mint();
    armFault(control, fault, 4); // the fourth of ten chunks
    const cut = await post(url, JSON_ACCEPT);
    assert.equal(cut.status, 200, 'the status line went out before the fault');
    assert.equal(cut.complete, false, 'the client sees a failed transfer');
    assert.ok(cut.body.length < reference.body.length);
    await faultsSpent(control);
    // The lease is released when the connection closes, which the client may see first: wait for that.
    assert.deepEqual(await store.settled(tokenOf(url)), ['release']);
    assert.equal(await store.has(tokenOf(url)), true);
    const retry = await post(url, JSON_ACCEPT);
    assert.equal(retry.status, 200);
    assert.ok(retry.complete);
    assert.deepEqual(retry.body, reference.body, 'byte-identical to an undisturbed transfer');
  });
}

test('after a worker died, the pool recovers: the next 100 requests succeed', async (t) => {
  const { control, mint } = await setup(t);
  armFault(control, Fault.Exit, 1, 2);
  assert.equal((await post(await mint(), JSON_ACCEPT)).status, 500);
  await faultsSpent(control);
  const urls = await Promise.all(Array.from({ length: 100 }, () => mint()));
  const outcomes: Outcome[] = [];
  // Ten at a time: enough to keep both workers busy without 100 sockets at once.
  for (let i = 0; i < urls.length; i += 10) outcomes.push(...(await Promise.all(urls.slice(i, i + 10).map((u) => post(u, JSON_ACCEPT)))));
  assert.deepEqual(
    outcomes.map((o) => o.status),
    urls.map(() => 200),
  );
  assert.ok(outcomes.every((o) => o.complete));
});
