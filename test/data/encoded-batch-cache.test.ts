import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EncodedBatchCache } from '../../src/data/encoded-batch-cache.js';
import type { CompressedColumn } from '../../src/ipc/compression/compressed-columns.js';

/** A fake compressed column of `bytes` bytes, tagged so a test can tell which call made it. */
function column(bytes: number, tag: number): CompressedColumn {
  return { nodes: [], buffers: [new Uint8Array(bytes).fill(tag)], variadicBufferCounts: [] };
}

/** A compressor that counts calls and the fields it was asked for. */
function counting(bytes = 100) {
  const calls: number[][] = [];
  const compress = async (fields: readonly number[]) => {
    calls.push([...fields]);
    return fields.map((f) => column(bytes, calls.length * 10 + f));
  };
  return { calls, compress };
}

test('each column of a batch is compressed once; later calls reuse it, and only the missing columns are compressed', async () => {
  const cache = new EncodedBatchCache();
  const body = { id: 'b1' };
  const { calls, compress } = counting();
  const first = await cache.columns(body, 'lz4', 0, [0, 2], compress);
  const second = await cache.columns(body, 'lz4', 0, [0, 1, 2], compress);
  assert.deepEqual(calls, [[0, 2], [1]]);
  assert.equal(second[0], first[0]);
  assert.equal(second[2], first[1]);
  await cache.columns(body, 'zstd', 0, [0], compress); // another codec is another entry
  await cache.columns(body, 'lz4', 1, [0], compress); // another batch too
  assert.deepEqual(calls.slice(2), [[0], [0]]);
  assert.deepEqual(cache.stats(), { bodies: 1, bytes: 500, maxBytes: cache.maxBytes, compressedColumns: 5, jsonBatches: 0 });
});

test('two responses asking at once share one compression', async () => {
  const cache = new EncodedBatchCache();
  const body = { id: 'b1' };
  const { calls, compress } = counting();
  const [a, b] = await Promise.all([cache.columns(body, 'lz4', 0, [0, 1], compress), cache.columns(body, 'lz4', 0, [1, 0], compress)]);
  assert.deepEqual(calls, [[0, 1]]);
  assert.equal(a[0], b[1]);
  assert.equal(a[1], b[0]);
});

test('a failed compression is not cached: the next call compresses again', async () => {
  const cache = new EncodedBatchCache();
  const body = { id: 'b1' };
  await assert.rejects(
    cache.columns(body, 'lz4', 0, [0], async () => Promise.reject(new Error('simulated'))),
    /simulated/,
  );
  const { calls, compress } = counting();
  await cache.columns(body, 'lz4', 0, [0], compress);
  assert.deepEqual(calls, [[0]]);
  assert.equal(cache.stats().bytes, 100);
});

test('bounded in bytes: the least recently used body goes first; a body alone over the budget is served but not kept', async () => {
  const cache = new EncodedBatchCache({ maxBytes: 250 });
  const [b1, b2, b3] = [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }];
  const { calls, compress } = counting();
  await cache.columns(b1, 'lz4', 0, [0], compress);
  await cache.columns(b2, 'lz4', 0, [0], compress);
  await cache.columns(b1, 'lz4', 0, [0], compress); // b1 used last: b2 is the older one now
  await cache.columns(b3, 'lz4', 0, [0], compress); // 300 > 250: b2 goes
  assert.equal(calls.length, 3);
  assert.deepEqual(cache.stats().bodies, 2);
  await cache.columns(b1, 'lz4', 0, [0], compress);
  assert.equal(calls.length, 3, 'b1 was kept');
  await cache.columns(b2, 'lz4', 0, [0], compress);
  assert.equal(calls.length, 4, 'b2 was dropped');
  assert.ok(cache.stats().bytes <= 250);

  const big = counting(1000);
  const served = await cache.columns({ id: 'huge' }, 'lz4', 0, [0], big.compress);
  assert.equal(served[0].buffers[0].byteLength, 1000, 'served');
  assert.ok(cache.stats().bytes <= 250, 'not kept');
});

test('delete and clear drop the buffers', async () => {
  const cache = new EncodedBatchCache();
  const { compress } = counting();
  await cache.columns({ id: 'b1' }, 'lz4', 0, [0], compress);
  await cache.columns({ id: 'b2' }, 'lz4', 0, [0], compress);
  cache.delete('b1');
  assert.deepEqual([cache.stats().bodies, cache.stats().bytes], [1, 100]);
  cache.clear();
  assert.deepEqual([cache.stats().bodies, cache.stats().bytes], [0, 0]);
});

test('after a transfer, a body its store no longer holds loses its buffers; one still held keeps them', async () => {
  const cache = new EncodedBatchCache();
  const { compress } = counting();
  for (const id of ['gone', 'held', 'asked']) await cache.columns({ id }, 'lz4', 0, [0], compress);
  const store = { holdsBody: (id: string) => id === 'held', has: async () => assert.fail('a store that can tell is not asked about tokens') };
  cache.dropUnlessHeld('gone', store, 'token');
  cache.dropUnlessHeld('held', store, 'token');
  assert.equal(cache.stats().bodies, 2);
  // A store that cannot tell which bodies it holds is asked about the token.
  let asked: string | undefined;
  cache.dropUnlessHeld('asked', { has: async (token) => ((asked = token), false) }, 'tok-1');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(asked, 'tok-1');
  assert.deepEqual(cache.stats().bodies, 1);
  assert.notEqual(cache.peek({ id: 'held' }, 'lz4', 0, [0]), undefined);
});

test('regression: a preparation whose compression was cancelled does not compress again (under its stopped signal it retried forever, spinning the event loop)', async () => {
  const cache = new EncodedBatchCache();
  const body = { id: 'b1' };
  const stopped = AbortSignal.abort();
  let calls = 0;
  const cancelled = async (): Promise<CompressedColumn[]> => {
    if (++calls > 100) throw new Error('compressed again and again');
    throw stopped.reason;
  };
  await assert.rejects(cache.columns(body, 'lz4', 0, [0], cancelled, stopped), { name: 'AbortError' });
  assert.equal(calls, 1);
});

test('a fetch that joined a preparation which was then stopped compresses through its own compressor', async () => {
  const cache = new EncodedBatchCache();
  const body = { id: 'b1' };
  const preparation = new AbortController();
  let stop!: () => void;
  const preparing = cache.columns(body, 'lz4', 0, [0], () => new Promise((_, reject) => (stop = () => reject(preparation.signal.reason))), preparation.signal);
  const { calls, compress } = counting();
  const fetching = cache.columns(body, 'lz4', 0, [0], compress); // joins the preparation
  assert.deepEqual(calls, [], 'joined, not compressed');
  preparation.abort();
  stop();
  await assert.rejects(preparing, { name: 'AbortError' });
  const [column] = await fetching;
  assert.deepEqual(calls, [[0]], 'compressed once, by the fetch');
  assert.equal(cache.peek(body, 'lz4', 0, [0])?.[0], column, 'and kept');
});
