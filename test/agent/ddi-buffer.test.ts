import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DdiBuffer } from '../../src/agent/ddi-buffer.js';
import { isDdiHandle } from '../../src/protocol/ddi-handle.js';

test('put returns a fresh ddi:// handle of 32 random bytes', () => {
  const buffer = new DdiBuffer();
  const a = buffer.put('[{"_row_id":0}]');
  const b = buffer.put('[]');
  assert.match(a, /^ddi:\/\/[A-Za-z0-9_-]{43}$/);
  assert.equal(Buffer.from(a.slice(6), 'base64url').length, 32);
  assert.notEqual(a, b);
  assert.equal(buffer.size, 2);
});

test('take returns the rows once; a used or unknown handle is DDI_HANDLE_UNKNOWN', () => {
  const buffer = new DdiBuffer();
  const rows = '[{"_row_id":0,"a":1}]';
  const handle = buffer.put(rows);
  assert.equal(buffer.has(handle), true);
  assert.equal(buffer.take(handle), rows);
  assert.equal(buffer.has(handle), false);
  assert.equal(buffer.size, 0);
  assert.throws(() => buffer.take(handle), { code: 'S2SP_ERR_DDI_HANDLE_UNKNOWN' });
  assert.throws(() => buffer.take('ddi://nope'), { code: 'S2SP_ERR_DDI_HANDLE_UNKNOWN' });
});

test('the unknown-handle message does not repeat the handle in full', () => {
  const buffer = new DdiBuffer();
  const handle = buffer.put('[]');
  buffer.take(handle);
  assert.throws(
    () => buffer.take(handle),
    (error: Error) => !error.message.includes(handle) && /call the resource tool again/.test(error.message),
  );
});

test('clear drops every entry', () => {
  const buffer = new DdiBuffer();
  const handle = buffer.put('[1]');
  buffer.put('[2]');
  buffer.clear();
  assert.equal(buffer.size, 0);
  assert.equal(buffer.has(handle), false);
});

test('isDdiHandle', () => {
  const handle = new DdiBuffer().put('[]');
  assert.equal(isDdiHandle(handle), true);
  assert.equal(isDdiHandle('ddi://short'), false);
  assert.equal(isDdiHandle(`http://x/${handle.slice(6)}`), false);
  assert.equal(isDdiHandle(`${handle}x`), false);
  assert.equal(isDdiHandle(undefined), false);
  assert.equal(isDdiHandle(42), false);
});
