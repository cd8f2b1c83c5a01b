/**
 * Test support: Redis going away during a run. The shared helper's
 * `restart()` stops and starts in one step; a test that must see the store
 * while Redis is down stops the process itself with {@link takeRedisDown},
 * checks what it needs, then calls `restart()` to bring it back on its port.
 */
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisServer } from './redis-server.js';

/** Ends `redis`'s process (SIGTERM) and waits until its port refuses connections (at most 5 s). */
export async function takeRedisDown(redis: RedisServer): Promise<void> {
  process.kill(redis.pid, 'SIGTERM');
  for (let i = 0; i < 200; i++) {
    if (!(await accepts(redis.port))) return;
    await sleep(25);
  }
  throw new Error(`redis-server on port ${redis.port} still accepts connections 5 s after SIGTERM`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
