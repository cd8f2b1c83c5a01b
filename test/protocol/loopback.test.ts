import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopbackHost } from '../../src/protocol/loopback.js';

test('isLoopbackHost', () => {
  assert.equal(isLoopbackHost('127.0.0.1'), true);
  assert.equal(isLoopbackHost('[::1]'), true);
  assert.equal(isLoopbackHost('localhost'), true);
  assert.equal(isLoopbackHost('128.0.0.1'), false);
  assert.equal(isLoopbackHost('example.com'), false);
});
