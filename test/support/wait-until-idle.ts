/** Test support: waiting for a token's transfer to let go of it. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BodyStore } from '../../src/cache/body-store.js';
import { isS2SPError } from '../../src/errors.js';

/**
 * Leases and releases `token` once no transfer holds it (the lease of a cut
 * transfer is released on 'close'). Rejects with the store's error when the
 * token is gone (consumed or unknown), and fails after 5 s in flight.
 */
export async function waitUntilIdle(store: BodyStore, token: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    try {
      await (await store.lease(token)).release();
      return;
    } catch (error) {
      if (!isS2SPError(error, 'S2SP_ERR_TOKEN_IN_FLIGHT')) throw error;
      await sleep(10);
    }
  }
  assert.fail('token still in flight after 5 s');
}
