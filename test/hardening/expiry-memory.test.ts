/**
 * Expiry frees memory (hardening): 1,000 cycles of caching a ~10 MB body and
 * letting it expire. Afterwards the store is empty, and heap and
 * ArrayBuffer memory are back near the baseline plus the store's bounded pool
 * of idle buffers (RSS is printed and bounded loosely; before the pool, this
 * test saw 2.9 GB of RSS: V8 frees SharedArrayBuffers only in a full GC).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function snapshot() {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, rss: m.rss };
}

const MB = 1024 * 1024;

test('1,000 cached ~10 MB bodies that expire leave the store empty and memory near the baseline', { timeout: 120_000 }, async () => {
  // ~10 MB of Arrow IPC: 200k rows of ints, floats and short strings.
  const table = tableFromRows(Array.from({ length: 350_000 }, (_, i) => ({ id: i, score: i / 7, label: `label-${i % 1000}` })));
  const expired: string[] = [];
  let evicted = () => {};
  const store = new MemoryStore({ ttlMs: 5, fullGc: gc });
  store.observe((event) => {
    if (event.type !== 'expired') return;
    expired.push(event.type);
    evicted();
  });
  /** Resolves once `count` entries have left the store (their expiry timers fired): no guess at how long that takes. */
  const evictions = (count: number) =>
    new Promise<void>((resolve) => {
      // The store's timers are unref'd (they never keep a process alive): hold the loop open meanwhile.
      const alive = setInterval(() => {}, 60_000);
      evicted = () => {
        if (expired.length < count) return;
        clearInterval(alive);
        resolve();
      };
      evicted();
    });
  const first = await store.put(table);
  const bodyBytes = (await store.stats()).bytes;
  assert.ok(bodyBytes > 8 * MB && bodyBytes < 16 * MB, `body of ${bodyBytes} bytes`);
  await evictions(1);
  assert.equal(await store.has(first.token), false);
  const before = snapshot();

  let peakEntries = 0;
  for (let cycle = 0; cycle < 1000; cycle++) {
    await store.put(table);
    peakEntries = Math.max(peakEntries, (await store.stats()).entries);
    // Every 10 puts, wait for those entries to expire, as they would in service: their body is
    // freed and the next put stores it again.
    if (cycle % 10 === 9) await evictions(cycle + 2);
  }
  await evictions(1001);
  const stats = await store.stats();
  const after = snapshot();
  console.log(
    `expiry: ${expired.length} expired, peak ${peakEntries} entries; ` +
      `heapUsed ${(before.heapUsed / MB).toFixed(1)} -> ${(after.heapUsed / MB).toFixed(1)} MB, ` +
      `arrayBuffers ${(before.arrayBuffers / MB).toFixed(1)} -> ${(after.arrayBuffers / MB).toFixed(1)} MB, ` +
      `rss ${(before.rss / MB).toFixed(0)} -> ${(after.rss / MB).toFixed(0)} MB`,
  );
  assert.equal(stats.entries, 0);
  assert.equal(stats.bytes, 0);
  // Idle buffers wait in the store's pool for the next body (shared-memory-pool.ts): bounded, and reused.
  const idle = stats.idleBytes ?? 0;
  assert.ok(idle <= 256 * MB);
  assert.equal(expired.filter((r) => r === 'expired').length, 1001);
  assert.ok(after.heapUsed - before.heapUsed < 20 * MB, 'heap back near the baseline');
  assert.ok(after.arrayBuffers - before.arrayBuffers < idle + 2 * bodyBytes, 'no shared buffer beyond the idle pool');
  assert.ok(after.rss - before.rss < idle + 20 * bodyBytes, 'RSS bounded (1,000 leaked bodies would be ~10 GB)');
  await store.close();
  const closed = snapshot();
  console.log(`after close: arrayBuffers ${(closed.arrayBuffers / MB).toFixed(1)} MB, rss ${(closed.rss / MB).toFixed(0)} MB`);
  assert.ok(closed.arrayBuffers - before.arrayBuffers < 2 * bodyBytes, 'close() lets the idle buffers go');
});
