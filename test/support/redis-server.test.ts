/**
 * The redis-server helper itself: the Redis tests lean on it to start a
 * clean, private server and to restart it on the same port. Talks raw RESP
 * over a TCP socket so it checks the helper without any Redis client.
 */
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { test } from 'node:test';
import { redisSkipReason, startRedisServer } from './redis-server.js';

type Reply = string | number | null | Error | Reply[];

/** Sends one command and resolves with its parsed reply. */
function command(port: number, ...args: string[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let buffered = Buffer.alloc(0);
    socket.setTimeout(2000, () => {
      socket.destroy();
      reject(new Error(`no full reply to ${args[0]} within 2 s`));
    });
    socket.once('error', reject);
    socket.once('connect', () => {
      const parts = args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
      socket.write(`*${args.length}\r\n${parts.join('')}`);
    });
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      const parsed = parseReply(buffered, 0);
      if (parsed) {
        socket.destroy();
        resolve(parsed.value);
      }
    });
  });
}

/** Parses one RESP2 reply at `at`; undefined while it is incomplete. */
function parseReply(data: Buffer, at: number): { value: Reply; end: number } | undefined {
  const lineEnd = data.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const kind = String.fromCharCode(data[at]);
  const line = data.toString('utf8', at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (kind) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new Error(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (data.length < next + length + 2) return undefined;
      return { value: data.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: Reply[] = [];
      let end = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(data, end);
        if (!item) return undefined;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      throw new Error(`unexpected RESP type ${JSON.stringify(kind)}`);
  }
}

/** Resolves with the error code of a connection attempt (undefined if it connects). */
function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
  });
}

const skip = redisSkipReason();

test('starts a private server on a loopback port that answers PING', { skip }, async (t) => {
  const redis = await startRedisServer();
  t.after(() => redis.stop());
  assert.equal(redis.url, `redis://127.0.0.1:${redis.port}`);
  assert.ok(redis.port > 0);
  assert.equal(await command(redis.port, 'PING'), 'PONG');
});

test('persistence is off, it listens on 127.0.0.1 only, and a full server refuses writes instead of evicting', { skip }, async (t) => {
  const redis = await startRedisServer();
  t.after(() => redis.stop());
  assert.deepEqual(await command(redis.port, 'CONFIG', 'GET', 'save'), ['save', '']);
  assert.deepEqual(await command(redis.port, 'CONFIG', 'GET', 'appendonly'), ['appendonly', 'no']);
  assert.deepEqual(await command(redis.port, 'CONFIG', 'GET', 'bind'), ['bind', '127.0.0.1']);
  assert.deepEqual(await command(redis.port, 'CONFIG', 'GET', 'maxmemory-policy'), ['maxmemory-policy', 'noeviction']);
  assert.equal(await command(redis.port, 'SET', 'kept', 'v'), 'OK');
  // A limit below what the server already uses: it is full from here on.
  assert.equal(await command(redis.port, 'CONFIG', 'SET', 'maxmemory', '1'), 'OK');
  const refused = await command(redis.port, 'SET', 'more', 'v');
  assert.ok(refused instanceof Error && refused.message.startsWith('OOM'), `expected an OOM error, got ${String(refused)}`);
  assert.equal(await command(redis.port, 'GET', 'kept'), 'v', 'nothing was evicted');
});

test('stop waits for the process to exit and frees the port; a second stop is a no-op', { skip }, async () => {
  const redis = await startRedisServer();
  const { pid, port } = redis;
  await redis.stop();
  // The exit was awaited, so the pid is gone now, not eventually.
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  assert.equal(await connectError(port), 'ECONNREFUSED');
  await redis.stop();
});

test('restart brings up a fresh, empty server on the same port', { skip }, async (t) => {
  const redis = await startRedisServer();
  t.after(() => redis.stop());
  const { port, pid } = redis;
  assert.equal(await command(port, 'SET', 'k', 'v'), 'OK');
  assert.equal(await command(port, 'GET', 'k'), 'v');

  await redis.restart();

  assert.equal(redis.port, port);
  assert.notEqual(redis.pid, pid);
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  assert.equal(await command(port, 'PING'), 'PONG');
  assert.equal(await command(port, 'GET', 'k'), null, 'nothing survives a restart: persistence is off');
});

test('two servers run side by side on different ports', { skip }, async (t) => {
  const [a, b] = await Promise.all([startRedisServer(), startRedisServer()]);
  t.after(() => Promise.all([a.stop(), b.stop()]));
  assert.notEqual(a.port, b.port);
  await command(a.port, 'SET', 'only-in', 'a');
  assert.equal(await command(b.port, 'GET', 'only-in'), null);
});
