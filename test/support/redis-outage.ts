/**
 * Test support: Redis going away during a run. The shared helper's
 * `restart()` stops and starts in one step; a test that must see the store
 * while Redis is down stops the process itself with {@link takeRedisDown},
 * checks what it needs, then calls `restart()` to bring it back on its port.
 */
import type { RedisServer } from './redis-server.js';

/** Ends `redis`'s process (SIGTERM) and waits for its exit, after which its port refuses connections. */
export async function takeRedisDown(redis: RedisServer): Promise<void> {
  await redis.down();
}
