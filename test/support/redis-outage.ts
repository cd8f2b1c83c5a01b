/**
 * Test support: Redis going away during a run. The shared helper's
 * `restart()` stops and starts in one step; a test that must see the store
 * while Redis is down stops the process itself with {@link takeRedisDown},
 * checks what it needs, then calls `restart()` to bring it back on its port.
 * A Redis that stops answering but keeps its connections open (SIGSTOP, as
 * in a partition) comes from {@link stallingRedis}.
 */
import type { TestContext } from 'node:test';
import { RedisStore } from '../../src/cache/redis-store.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** Ends `redis`'s process (SIGTERM) and waits for its exit, after which its port refuses connections. */
export async function takeRedisDown(redis: RedisServer): Promise<void> {
  await redis.down();
}

/** A private Redis that a test can stall, and a store on it with a short command deadline. */
export interface StallingRedis {
  readonly redis: RedisServer;
  readonly store: RedisStore;
  /** The store's `commandTimeoutMs`. */
  readonly deadlineMs: number;
}

/**
 * Starts a redis-server and a connected RedisStore on it with `deadlineMs`.
 * Both end after the test, the server continued first should it be paused
 * (`redis.pause()` / `redis.resume()`), so no stopped process outlives it.
 */
export async function stallingRedis(t: TestContext, deadlineMs = 500): Promise<StallingRedis> {
  const redis = await startRedisServer();
  t.after(() => redis.stop()); // stop() continues a paused server before ending it
  const store = new RedisStore({ url: redis.url, commandTimeoutMs: deadlineMs });
  t.after(() => store.close());
  await store.ready();
  return { redis, store, deadlineMs };
}
