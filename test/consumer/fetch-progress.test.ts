/**
 * fetchBody's observe option (progress events): the bytes received so far, of the Content-Length
 * when the server declared one; a streamed body's total is known only at the
 * end, reported once more with total = received.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { startPlane } from '../support/data-plane-harness.js';

const rowsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i, text: `row ${i} ${'y'.repeat(i % 30)}` }));

type Call = [received: number, total: number | undefined];

function assertGrowing(calls: readonly Call[], bytesReceived: number): void {
  assert.ok(calls.length > 0);
  for (let i = 1; i < calls.length; i++) assert.ok(calls[i][0] >= calls[i - 1][0], `call ${i} did not shrink`);
  assert.deepEqual(calls[calls.length - 1], [bytesReceived, bytesReceived]);
}

test('fetch progress: a body sent in one piece reports its Content-Length as the total throughout', async (t) => {
  const plane = await startPlane(t, { workers: 0 });
  const calls: Call[] = [];
  const fetched = await fetchBody(`${plane.base}/s2sp/data/${await plane.mint(rowsOf(20))}`, {
    format: 'json',
    observe: ({ bytes, totalBytes }) => calls.push([bytes, totalBytes]),
  });
  assertGrowing(calls, fetched.bytesReceived);
  for (const [, total] of calls) assert.equal(total, fetched.bytesReceived);
});

test('fetch progress: a streamed body reports no total until its end', async (t) => {
  const plane = await startPlane(t, { workers: 0, chunkRows: 1000 });
  const calls: Call[] = [];
  const fetched = await fetchBody(`${plane.base}/s2sp/data/${await plane.mint(rowsOf(50_000))}`, {
    format: 'json',
    observe: ({ bytes, totalBytes }) => calls.push([bytes, totalBytes]),
  });
  assertGrowing(calls, fetched.bytesReceived);
  assert.ok(calls.length > 2, `${calls.length} calls`);
  assert.ok(calls.slice(0, -1).every(([, total]) => total === undefined));
});

test('fetch progress: a failed fetch never reports reaching a total', async (t) => {
  const plane = await startPlane(t, { workers: 0 });
  const calls: Call[] = [];
  await assert.rejects(fetchBody(`${plane.base}/s2sp/data/${'A'.repeat(43)}`, { observe: ({ bytes, totalBytes }) => calls.push([bytes, totalBytes]) }), {
    code: 'S2SP_ERR_CONSUMER_FETCH_FAILED',
  });
  assert.deepEqual(calls, []);
});
