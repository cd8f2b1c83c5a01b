/**
 * Test support: a BodyStore whose leases say when they are taken, renewed
 * and ended. The data plane releases a transfer's lease on the connection's
 * events ('close'), after the client may already have seen its answer, and
 * commits before the response's last bytes; a test that needs the token free
 * again (or consumed) waits for that settlement instead of polling the store
 * or sleeping.
 *
 * Every wait fails after `timeoutMs` (default 10 s) naming what it waited
 * for: a bound for a regression that never settles, not a pace (a passing
 * test never reaches it).
 */
import { EventEmitter, once } from 'node:events';
import type { BodyLease, BodyStore } from '../../src/cache/body-store.js';

/** How a lease ended. */
export type Settlement = 'commit' | 'release';

/** What {@link watchLeases} adds to a store. */
export interface LeaseWatch {
  /** Leases handed out so far, on any token. */
  readonly leaseCount: number;
  /** How the leases on `token` ended so far, in order. A lease counts once the store has settled it. */
  settlements(token: string): readonly Settlement[];
  /** Resolves once `count` leases were handed out, on any token (counting earlier ones). */
  leased(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves with how the leases on `token` ended, once `count` of them have (counting earlier ones). */
  settled(token: string, count?: number, timeoutMs?: number): Promise<Settlement[]>;
  /** Resolves once a lease on `token` was committed (the token consumed), whatever ended before it. */
  committed(token: string, timeoutMs?: number): Promise<void>;
  /** Resolves once leases on `token` were renewed `count` times, successfully (counting earlier ones). */
  renewed(token: string, count: number, timeoutMs?: number): Promise<void>;
}

/** A store watched by {@link watchLeases}. */
export type WatchedStore<S extends BodyStore = BodyStore> = S & LeaseWatch;

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * `store`, with every lease taken through it watched. Everything else is the
 * store's own (methods bound to it, so class-private state works).
 */
export function watchLeases<S extends BodyStore>(store: S): WatchedStore<S> {
  // One watcher per store: two planes over one store must see one store object (metrics count it once).
  const known = watched.get(store);
  if (known !== undefined) return known as WatchedStore<S>;
  const ended = new Map<string, Settlement[]>();
  const renewals = new Map<string, number>();
  let leaseCount = 0;
  const events = new EventEmitter();
  /** Resolves once `holds()`, checked at each event; rejects after `timeoutMs`. */
  const until = async (holds: () => boolean, what: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<void> => {
    if (holds()) return;
    // A ref'd timer: it also holds the event loop open while the wait is on (store timers are unref'd).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      while (!holds()) await once(events, 'change', { signal: deadline.signal });
    } catch (error) {
      if (deadline.signal.aborted) throw new Error(`${what}: not within ${timeoutMs} ms`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
  const lease = async (token: string): Promise<BodyLease> => {
    const taken = await store.lease(token);
    leaseCount++;
    events.emit('change');
    let done = false;
    const end = async (how: Settlement): Promise<boolean> => {
      const consumed = how === 'commit' ? await taken.commit() : (await taken.release(), false);
      if (done) return consumed;
      done = true;
      ended.set(token, [...(ended.get(token) ?? []), how]);
      events.emit('change');
      return consumed;
    };
    return {
      body: taken.body,
      timeoutMs: taken.timeoutMs,
      renew: async () => {
        const held = await taken.renew();
        if (held) {
          renewals.set(token, (renewals.get(token) ?? 0) + 1);
          events.emit('change');
        }
        return held;
      },
      commit: () => end('commit'),
      release: async () => void (await end('release')),
    };
  };
  const settlements = (token: string): readonly Settlement[] => ended.get(token) ?? [];
  const watch: LeaseWatch = {
    get leaseCount() {
      return leaseCount;
    },
    settlements,
    leased: (count, timeoutMs) => until(() => leaseCount >= count, `${count} leases (${leaseCount} taken)`, timeoutMs),
    settled: async (token, count = 1, timeoutMs) => {
      await until(() => settlements(token).length >= count, `${count} settled leases on the token`, timeoutMs);
      return settlements(token).slice(0, count);
    },
    committed: (token, timeoutMs) => until(() => settlements(token).includes('commit'), 'a committed lease on the token', timeoutMs),
    renewed: (token, count, timeoutMs) => until(() => (renewals.get(token) ?? 0) >= count, `${count} renewals of the token's lease`, timeoutMs),
  };
  const proxy = new Proxy(store, {
    get(target, property) {
      if (property === 'lease') return lease;
      if (property in watch) return Reflect.get(watch, property);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as WatchedStore<S>;
  watched.set(store, proxy);
  watched.set(proxy, proxy);
  return proxy;
}

const watched = new WeakMap<BodyStore, WatchedStore>();
