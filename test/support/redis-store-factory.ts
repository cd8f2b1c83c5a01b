/**
 * Test support: RedisStores for the tests of one file, on the Redis (one
 * node or a cluster) that file started, each under a key prefix of its own
 * so that tests sharing that Redis do not see each other's keys.
 */
import { RedisStore, type RedisStoreOptions } from '../../src/cache/redis-store.js';

/** Something that runs cleanup after a test (a TestContext). */
interface AfterTest {
  after(fn: () => Promise<void>): void;
}

/**
 * A factory of connected RedisStores on `url()` (read at each call: the file's
 * Redis starts in `before`), under the key prefix `<tag><n>` unless
 * `keyPrefix` is given; each store closes after its test.
 */
export function redisStoresOn(url: () => string, tag: string): (t: AfterTest, options?: Partial<RedisStoreOptions>) => Promise<RedisStore> {
  let made = 0;
  return async (t, options = {}) => {
    const store = new RedisStore({ url: url(), keyPrefix: `${tag}${++made}`, ...options });
    t.after(() => store.close());
    await store.ready();
    return store;
  };
}
