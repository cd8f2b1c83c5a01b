import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedMemoryPool } from '../../src/cache/shared-memory-pool.js';

test('acquire gives a zero-offset shared view of exactly the size asked', () => {
  const pool = new SharedMemoryPool();
  const view = pool.acquire(1000);
  assert.ok(view.buffer instanceof SharedArrayBuffer);
  assert.equal(view.byteOffset, 0);
  assert.equal(view.byteLength, 1000);
  assert.equal(view.buffer.byteLength % (64 * 1024), 0, 'whole pages');
});

test('a released buffer is reused for a body of a similar size, best fit first', () => {
  const pool = new SharedMemoryPool();
  const big = pool.acquire(10 * 64 * 1024);
  const small = pool.acquire(64 * 1024);
  pool.release(big);
  pool.release(small);
  assert.deepEqual(pool.stats(), { buffers: 2, bytes: 11 * 64 * 1024 });
  assert.equal(pool.acquire(60 * 1024).buffer, small.buffer);
  assert.equal(pool.acquire(9 * 64 * 1024).buffer, big.buffer);
  assert.deepEqual(pool.stats(), { buffers: 0, bytes: 0 });
});

test('a buffer far larger than the body is not reused for it', () => {
  const pool = new SharedMemoryPool();
  const big = pool.acquire(10 * 64 * 1024);
  pool.release(big);
  assert.notEqual(pool.acquire(1000).buffer, big.buffer);
  assert.equal(pool.stats().buffers, 1);
});

test('idle bytes stay under the limit: the oldest buffers go first', () => {
  const pool = new SharedMemoryPool({ maxIdleBytes: 3 * 64 * 1024 });
  const views = [1, 2, 3, 4].map(() => pool.acquire(64 * 1024));
  for (const v of views) pool.release(v);
  assert.deepEqual(pool.stats(), { buffers: 3, bytes: 3 * 64 * 1024 });
  assert.notEqual(pool.acquire(64 * 1024).buffer, views[0].buffer, 'the oldest was dropped');
  pool.clear();
  assert.deepEqual(pool.stats(), { buffers: 0, bytes: 0 });
});
