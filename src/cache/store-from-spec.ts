/**
 * A store from a one-string spec, as the CLI's `--store` and `S2SP_STORE`
 * give it: `memory` (the default), or a Redis/Valkey URL,
 * `redis://[user:pass@]host:port[/db]` or `rediss://...` for TLS, or a
 * Redis/Valkey Cluster's, `redis-cluster://[user:pass@]host:port[,host:port...]`
 * or `rediss-cluster://...` for TLS.
 */
import { invalidOption, optionsObject } from '../option-checks.js';
import type { BodyStore } from './body-store.js';
import { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
import { redactedUrl, redisTargetOf } from './redis-connection.js';
import { RedisStore, type RedisStoreOptions } from './redis-store.js';

/** Settings every store kind takes, as the stores name them; `commandTimeoutMs` is RedisStore's alone (memory has none). */
export type StoreSettings = Pick<MemoryStoreOptions, 'ttlMs' | 'maxBytes' | 'leaseTimeoutMs' | 'fullGc'> & Pick<RedisStoreOptions, 'commandTimeoutMs'>;

/** The store kinds a spec can name. */
type StoreKind = 'memory' | 'redis';

/** Which kind of store `spec` names. @throws S2SPError `S2SP_ERR_OPTION_INVALID` for anything else */
export function storeKindOf(spec: string): StoreKind {
  if (spec === 'memory') return 'memory';
  const expected = '"memory", or a redis://, rediss://, redis-cluster:// or rediss-cluster:// URL';
  if (typeof spec !== 'string') throw invalidOption('store', expected, spec);
  try {
    redisTargetOf(spec);
  } catch {
    throw invalidOption('store', expected, redactedUrl(spec));
  }
  return 'redis';
}

/** Creates the store `spec` names. @throws S2SPError `S2SP_ERR_OPTION_INVALID` for an unknown spec or bad settings */
export function storeFromSpec(spec: string, settings: StoreSettings = {}): BodyStore {
  const { commandTimeoutMs, ...common } = optionsObject(settings, 'settings');
  if (storeKindOf(spec) === 'memory') return new MemoryStore(common);
  return new RedisStore({ url: spec, ...common, commandTimeoutMs });
}

/** `spec` fit for a log line: a Redis URL without its user and password. */
export function describeStoreSpec(spec: string): string {
  if (storeKindOf(spec) === 'memory') return 'memory';
  return redactedUrl(spec).replace(/\/$/, '');
}
