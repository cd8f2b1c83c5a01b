/**
 * Test support: a real redis-server of the test's own, on a free 127.0.0.1
 * port, persistence off (nothing written to disk), stopped by the test.
 * `restart()` brings it back on the same port, empty, as a restarted Redis
 * without persistence would be.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A running redis-server. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The process id of the running server (changes with `restart`). */
  readonly pid: number;
  /** Stops the server (SIGTERM) and waits until it exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port (stopping it first if it runs). */
  restart(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function launch(port: number, extraArgs: readonly string[]): Promise<ChildProcess> {
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'notice', ...extraArgs];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start within ${START_TIMEOUT_MS} ms: ${output}`));
    }, START_TIMEOUT_MS);
    const onData = (data: Buffer) => {
      output += data;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (output += d));
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`redis-server could not be started (is it installed? .ci/ensure-redis.sh installs it): ${error.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code} before it was ready: ${output}`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts a redis-server on a free loopback port; `extraArgs` are passed on (e.g. `--maxmemory 2mb`). */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  const port = await freePort();
  let child = await launch(port, extraArgs);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid!;
    },
    stop: () => stopChild(child),
    async restart() {
      await stopChild(child);
      child = await launch(port, extraArgs);
    },
  };
}
