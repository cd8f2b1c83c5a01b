/** Test support: waiting for a token's transfer to let go of it. */
import { isS2SPError } from '../../src/errors.js';
import type { WatchedStore } from './lease-watch.js';

/**
 * Leases and releases `token` once no transfer holds it: when one does (409),
 * waits for that lease to end (the data plane releases a cut transfer's lease
 * on 'close') and tries again. Rejects with the store's error when the token
 * is gone (consumed or unknown), and after `timeoutMs` of waiting for a lease
 * that never ends.
 */
export async function waitUntilIdle(store: WatchedStore, token: string, timeoutMs?: number): Promise<void> {
  for (;;) {
    const before = store.settlements(token).length;
    try {
      await (await store.lease(token)).release();
      return;
    } catch (error) {
      if (!isS2SPError(error, 'S2SP_ERR_TOKEN_IN_FLIGHT')) throw error;
    }
    await store.settled(token, before + 1, timeoutMs);
  }
}
