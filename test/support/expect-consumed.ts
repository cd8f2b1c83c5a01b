/**
 * Test support: asserts a resource_url now answers 404. The data plane
 * commits the lease before the response's last bytes, so once the client
 * read them the token is consumed.
 *
 * With the server's store at hand (watched by lease-watch.ts), this waits for
 * that commit, then asks once. Without it (a server in another process, where
 * no event of its reaches the test), it polls: 409 is retried briefly, and
 * anything other than 404 or 409 fails at once.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WatchedStore } from './lease-watch.js';

/** POSTs `{}` to `url`, which must answer 404: after the commit when `store` is given, else until 404 (at most ~1 s of 409s). */
export async function expectConsumed(url: string, store?: WatchedStore): Promise<void> {
  const post = async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await response.arrayBuffer();
    return response.status;
  };
  if (store !== undefined) {
    await store.committed(url.slice(url.lastIndexOf('/') + 1));
    assert.equal(await post(), 404, 'the committed token still answers');
    return;
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const status = await post();
    if (status === 404) return;
    assert.equal(status, 409, `expected 404 (or a brief 409), got ${status}`);
    await sleep(10);
  }
  assert.fail('the token still answers 409 after 1 s: the completed transfer was never committed');
}
