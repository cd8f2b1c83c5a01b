/**
 * Test support: a BodyStore whose leases say when they end. The data plane
 * commits or releases a transfer's lease on the connection's events
 * ('finish', 'close'), after the client already saw its answer; a test that
 * needs the token free again waits for that settlement instead of polling
 * the store or sleeping.
 */
import { EventEmitter, once } from 'node:events';
import type { BodyLease, BodyStore } from '../../src/cache/body-store.js';

/** How a lease ended. */
export type Settlement = 'commit' | 'release';

/** What {@link watchLeases} adds to a store. */
export interface LeaseWatch {
  /**
   * Resolves with how the leases on `token` ended, once `count` of them have
   * (counting those that ended before the call). A lease counts once the
   * store has settled it: the token is then free again (or consumed).
   */
  settled(token: string, count?: number): Promise<Settlement[]>;
  /** Resolves once leases on `token` were renewed `count` times, successfully (counting earlier ones). */
  renewed(token: string, count: number): Promise<void>;
}

/**
 * `store`, with every lease taken through it watched. Everything else is the
 * store's own (methods bound to it, so class-private state works).
 */
export function watchLeases<S extends BodyStore>(store: S): S & LeaseWatch {
  const ended = new Map<string, Settlement[]>();
  const renewals = new Map<string, number>();
  const events = new EventEmitter();
  const record = (token: string, how: Settlement) => {
    ended.set(token, [...(ended.get(token) ?? []), how]);
    events.emit('settled', token);
  };
  const lease = async (token: string): Promise<BodyLease> => {
    const taken = await store.lease(token);
    let done = false;
    const end = async (how: Settlement) => {
      await (how === 'commit' ? taken.commit() : taken.release());
      if (done) return;
      done = true;
      record(token, how);
    };
    return {
      body: taken.body,
      timeoutMs: taken.timeoutMs,
      renew: async () => {
        const held = await taken.renew();
        if (held) {
          renewals.set(token, (renewals.get(token) ?? 0) + 1);
          events.emit('renewed', token);
        }
        return held;
      },
      commit: () => end('commit'),
      release: () => end('release'),
    };
  };
  const settled = async (token: string, count = 1): Promise<Settlement[]> => {
    while ((ended.get(token)?.length ?? 0) < count) await once(events, 'settled');
    return ended.get(token)!.slice(0, count);
  };
  const renewed = async (token: string, count: number): Promise<void> => {
    while ((renewals.get(token) ?? 0) < count) await once(events, 'renewed');
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'lease') return lease;
      if (property === 'settled') return settled;
      if (property === 'renewed') return renewed;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as S & LeaseWatch;
}
