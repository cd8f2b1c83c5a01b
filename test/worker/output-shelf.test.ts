/** The recycled answer memory of an encoder worker (src/worker/output-shelf.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OutputShelf, capacityFor } from '../../src/worker/output-shelf.js';

test('an answer goes into the smallest shelved buffer it fills at least 3/4 of, else into new memory with room to spare', () => {
  const shelf = new OutputShelf({ maxBytes: 1 << 30, idleMs: 60_000 });
  const small = new ArrayBuffer(1000);
  const large = new ArrayBuffer(4000);
  const larger = new ArrayBuffer(5000);
  shelf.add([larger, small, large]);
  const taken = shelf.take(3500);
  assert.equal(taken.buffer, large, 'the smallest that fits');
  assert.equal(taken.byteOffset, 0);
  assert.equal(taken.byteLength, 3500);
  assert.notEqual(shelf.take(500).buffer, small, 'filled under 3/4: new memory');
  assert.equal(shelf.take(900).buffer, small);
  assert.equal(shelf.bytes, 5000);
  const fresh = shelf.take(6000);
  assert.ok(fresh.buffer !== larger && fresh.byteLength === 6000, 'too large for every shelved buffer: new memory');

  assert.equal(capacityFor(100), 100, 'small answers get exact buffers');
  assert.equal(capacityFor(64 * 1024), 128 * 1024, 'larger ones whole 64 KiB pages, 1/16 more');
  assert.ok(capacityFor(1_000_000) >= 1_062_500 && capacityFor(1_000_000) % (64 * 1024) === 0);
});

test('the shelf lets go of the oldest buffers beyond its bytes, and of buffers idle too long; detached ones are skipped', () => {
  const shelf = new OutputShelf({ maxBytes: 2500, idleMs: 1000 });
  const [a, b, c] = [new ArrayBuffer(1000), new ArrayBuffer(1000), new ArrayBuffer(1000)];
  shelf.add([a, b, c]);
  assert.equal(shelf.bytes, 2000, 'the oldest went');
  assert.deepEqual(shelf.takeOldest(1), [b]);
  const detached = new ArrayBuffer(8);
  structuredClone(detached, { transfer: [detached] });
  shelf.add([detached]);
  assert.equal(shelf.bytes, 1000);
  shelf.trim(Date.now() + 1001);
  assert.equal(shelf.bytes, 0, 'idle too long');
  assert.deepEqual(shelf.takeOldest(2), []);
});
