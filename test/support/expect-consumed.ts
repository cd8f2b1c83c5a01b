/**
 * Test support: asserts a resource_url now answers 404. The lease is committed
 * on the response's 'finish' event, which in a single process can run just
 * after the client already read the last byte; until then a new request sees
 * the transfer still in flight (409). So 409 is retried briefly; anything
 * other than 404 or 409 fails at once.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** POSTs `{}` to `url` until it answers 404 (at most ~1 s of 409s). */
export async function expectConsumed(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await response.arrayBuffer();
    if (response.status === 404) return;
    assert.equal(response.status, 409, `expected 404 (or a brief 409), got ${response.status}`);
    await sleep(10);
  }
  assert.fail('the token still answers 409 after 1 s: the completed transfer was never committed');
}
