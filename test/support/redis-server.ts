/**
 * Test support: a private redis-server for one test file. Each server gets a
 * random loopback port and its own temp dir, keeps nothing on disk (unless
 * asked to keep an append-only file, so a restart comes back on its data),
 * and refuses writes when full rather than evicting (noeviction), so a test
 * sees exactly what the store did. No Redis client is needed: readiness is a
 * raw RESP PING.
 *
 * redis-server comes from Debian's package (`bash .ci/ensure-redis.sh`).
 * Outside CI a machine without it may skip the Redis tests
 * (`redisSkipReason()`); in CI a missing binary is a failure, never a skip.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const HOST = '127.0.0.1';
const MISSING = 'redis-server is not on PATH: run `bash .ci/ensure-redis.sh` (as root) to install it';

export interface RedisServer {
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  /** The running process's pid; a restart changes it. */
  readonly pid: number;
  /** Ends the server and waits for its exit; removes its temp dir. Safe to call twice. */
  stop(): Promise<void>;
  /** Ends the server's process (SIGTERM) and waits for its exit, which closed its port; restart() brings it back. */
  down(): Promise<void>;
  /**
   * Ends the server, then starts it again on the same port and dir: empty,
   * or with `appendOnly` back on the data its append-only file kept.
   */
  restart(): Promise<void>;
  /** Stops the process (SIGSTOP): its connections stay open and nothing answers, as in a partition. */
  pause(): void;
  /** Lets a paused process run again (SIGCONT). */
  resume(): void;
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Keep an append-only file (`appendonly yes`, fsync every write), so `down()` then `restart()` keeps the data. */
  appendOnly?: boolean;
  /**
   * Run as a Redis Cluster node (`cluster-enabled yes`) with this node
   * timeout: how long its peers wait before they call it failed and promote
   * a replica. The cluster bus gets its own free port, kept across restarts.
   */
  clusterNodeTimeoutMs?: number;
}

/**
 * `undefined` when redis-server is installed. Otherwise, outside CI, the
 * reason to pass as a test's `skip` option; in CI it throws, so the Redis
 * tests fail loudly instead of silently not running.
 */
export function redisSkipReason(): string | undefined {
  if (onPath('redis-server')) return undefined;
  if (inCi()) throw new Error(`${MISSING}; CI must run the Redis tests, not skip them`);
  return MISSING;
}

/** Starts a redis-server on a free loopback port and resolves once it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  if (!onPath('redis-server')) throw new Error(MISSING);
  const dir = await mkdtemp(join(tmpdir(), 's2sp-redis-'));
  const persistence = options.appendOnly === true ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  if (options.clusterNodeTimeoutMs !== undefined) {
    persistence.push(
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(options.clusterNodeTimeoutMs),
      '--cluster-port',
      String(await freePort()),
      // A replica that has not finished its first sync cannot take over: sync at once.
      '--repl-diskless-sync-delay',
      '0',
    );
  }
  try {
    // Between finding a free port and redis binding it another process may
    // take it; redis then exits, and a few fresh ports are tried.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        const running = await launch(port, dir, persistence);
        return handle(port, dir, persistence, running);
      } catch (error) {
        if (!(error instanceof PortTaken) || attempt === 5) throw error;
      }
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A started process plus the promise of its exit. */
interface Running {
  child: ChildProcess;
  exited: Promise<void>;
}

function handle(port: number, dir: string, persistence: readonly string[], first: Running): RedisServer {
  let running: Running | undefined = first;
  let pid = first.child.pid!;
  return {
    url: `redis://${HOST}:${port}`,
    port,
    get pid() {
      return pid;
    },
    async stop() {
      if (running) await terminate(running);
      running = undefined;
      await rm(dir, { recursive: true, force: true });
    },
    async down() {
      if (!running) throw new Error('down() after stop()');
      await terminate(running);
    },
    async restart() {
      if (!running) throw new Error('restart() after stop()');
      await terminate(running); // nothing to do after down()
      running = undefined;
      // The same port, which this server just let go of: a test simulating a
      // Redis restart needs its clients' URL to stay valid.
      running = await launch(port, dir, persistence);
      pid = running.child.pid!;
    },
    pause() {
      running?.child.kill('SIGSTOP');
    },
    resume() {
      running?.child.kill('SIGCONT');
    },
  };
}

class PortTaken extends Error {}

/** Spawns redis-server on `port` and resolves once it answers PING; rejects (with its output) if it exits first. */
async function launch(port: number, dir: string, persistence: readonly string[]): Promise<Running> {
  const child = spawn(
    'redis-server',
    ['--bind', HOST, '--port', String(port), '--save', '', ...persistence, '--maxmemory-policy', 'noeviction', '--daemonize', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000); // the tail is what explains a failure
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let hasExited = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      hasExited = true;
      resolve();
    });
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  await spawned;
  // Should the test process end without stop(), the server must not outlive it.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  if (await ready(child, port, exited)) {
    // A forgotten stop() must not keep the test process alive: the exit
    // hook above ends the server then. stop() refs the child again.
    child.unref();
    (child.stdout as Socket).unref();
    (child.stderr as Socket).unref();
    return { child, exited };
  }
  if (!hasExited) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`redis-server on port ${port} did not answer PING within 5 s:\n${output}`);
  }
  if (/address already in use/i.test(output)) throw new PortTaken(`port ${port} taken`);
  throw new Error(`redis-server exited during startup (code ${child.exitCode}, signal ${child.signalCode}):\n${output}`);
}

/**
 * True once the server answers PING, false if it exits first or answers no
 * PING within 5 s. Redis logs a line as it becomes ready ("Ready to accept
 * connections"), so each chunk of its output is a moment to PING: no pace to
 * guess, whatever the log's wording.
 */
function ready(child: ChildProcess, port: number, exited: Promise<void>): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    let pinging = false;
    let outputSincePing = false;
    const finish = (ok: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdout!.off('data', onOutput);
      resolve(ok);
    };
    const onOutput = (): void => {
      outputSincePing = true;
      if (pinging) return;
      pinging = true;
      void (async () => {
        while (outputSincePing && !done) {
          outputSincePing = false;
          if (await answersPing(port)) finish(true);
        }
        pinging = false;
      })();
    };
    const timer = setTimeout(() => finish(false), 5000);
    child.stdout!.on('data', onOutput);
    void exited.then(() => finish(false));
    onOutput(); // it may have logged before we listened
  });
}

/** SIGTERM, then waits for the exit event; SIGKILL if it has not exited after 5 s. */
async function terminate({ child, exited }: Running): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.ref(); // keep the loop alive until the exit event arrives
  child.kill('SIGTERM');
  child.kill('SIGCONT'); // a paused server acts on the SIGTERM only once it runs again
  const timer = new AbortController();
  const gaveUp = sleep(5000, 'timeout', { signal: timer.signal }).catch(() => 'aborted');
  if ((await Promise.race([exited.then(() => 'exited'), gaveUp])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
  timer.abort();
}

/** True when a redis answers `+PONG` on `port` within 1 s. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply === '+PONG\r\n');
    });
  });
}

/** A loopback port that was free a moment ago (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function onPath(command: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), fsConstants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}
