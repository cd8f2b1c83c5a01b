/**
 * Three `s2sp serve --transport http --store redis://...` processes on one
 * real redis-server, as replicas behind a load balancer would run: any
 * replica serves any token, exactly once; a replica killed mid-transfer
 * holds its token only until the lease timeout; Redis going away is a clear
 * error on both planes, and both work again once it is back.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { tableToIPC } from 'apache-arrow';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { ERROR_CODE_META_KEY } from '../../src/control/tool-results.js';
import { redisSkipReason, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { takeRedisDown } from '../support/redis-outage.js';
import { eventually } from '../support/store-contract.js';
import { CLI_PATH as CLI } from '../support/cli-process.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const LEASE_TIMEOUT_S = 1;

interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  readonly base: string;
  readonly client: Client;
}

let redis: RedisServer;
let dir: string;
let file: string;
const replicas: Replica[] = [];

/** Starts one replica and connects an MCP client to it; C names its store by S2SP_STORE instead of --store. */
async function startReplica(name: string): Promise<Replica> {
  const viaEnv = name === 'C';
  const args = [CLI, 'serve', file, '--transport', 'http', '--port', '0', '--lease-timeout', String(LEASE_TIMEOUT_S)];
  if (!viaEnv) args.push('--store', redis.url);
  const env = viaEnv ? { ...process.env, S2SP_STORE: redis.url } : { ...process.env, S2SP_STORE: '' };
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica ${name} did not start: ${stderr}`)), 60_000);
    child.stderr!.on('data', (d) => {
      stderr += d;
      const match = /MCP at (http:\/\/[^/\s]+)\/mcp/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited with ${code}: ${stderr}`));
    });
  });
  const client = new Client({ name: `replica-test-${name}`, version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return { name, child, base, client };
}

/** Calls read_table on a replica; the token of the envelope's resource_url. */
async function mint(replica: Replica): Promise<string> {
  const result = (await replica.client.callTool({ name: 'read_table', arguments: { abstract_domains: 'label' } })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const envelope = JSON.parse((result.content[0] as { text: string }).text) as { resource_url: string };
  assert.ok(envelope.resource_url.startsWith(`${replica.base}/s2sp/data/`));
  return envelope.resource_url.slice(envelope.resource_url.lastIndexOf('/') + 1);
}

interface Fetched {
  status: number;
  bytes: Buffer;
  complete: boolean;
}

/** A full Arrow fetch of `token` on `replica`. */
function fetchOn(replica: Replica, token: string): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${replica.base}/s2sp/data/${token}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', accept: ARROW } },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (d: Buffer) => parts.push(d));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes: Buffer.concat(parts), complete: response.complete }));
        response.on('error', () => resolve({ status: response.statusCode ?? 0, bytes: Buffer.concat(parts), complete: false }));
      },
    );
    request.on('error', reject);
    request.end('{}');
  });
}

function codeOfDocument(fetched: Fetched): string {
  return (JSON.parse(fetched.bytes.toString('utf8')) as { error: { code: string } }).error.code;
}

const skip = redisSkipReason();

before(async () => {
  if (skip !== undefined) return;
  redis = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 's2sp-replicas-'));
  file = join(dir, 'table.arrow');
  // ~15 MB of Arrow: large enough that a transfer is still running when its replica is killed.
  const rows = Array.from({ length: 300_000 }, (_, i) => ({ id: i, label: `label of row ${i}`, x: i / 7, y: i * 3.5, odd: i % 2 === 1 }));
  writeFileSync(file, tableToIPC(tableFromRows(rows), 'file'));
  for (const name of ['A', 'B', 'C']) replicas.push(await startReplica(name));
});

after(async () => {
  for (const replica of replicas) {
    await replica.client.close().catch(() => {});
    if (replica.child.exitCode === null && replica.child.signalCode === null) {
      const exited = new Promise((resolve) => replica.child.once('exit', resolve));
      replica.child.kill('SIGKILL');
      await exited;
    }
  }
  await redis?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

test('a token minted on replica A is fetched on B, byte-identical to what A answers, then 404 on C', { skip }, async () => {
  const [a, b, c] = replicas;
  const reference = await fetchOn(a, await mint(a));
  assert.equal(reference.status, 200);
  assert.ok(reference.bytes.byteLength > 5_000_000, `${reference.bytes.byteLength} bytes`);
  const token = await mint(a);
  const onB = await fetchOn(b, token);
  assert.equal(onB.status, 200);
  assert.equal(onB.complete, true);
  assert.ok(onB.bytes.equals(reference.bytes), 'B answers the bytes A answers');
  const onC = await fetchOn(c, token);
  assert.equal(onC.status, 404);
  assert.equal(codeOfDocument(onC), 'S2SP_ERR_TOKEN_NOT_FOUND');
});

test('100 concurrent fetches of one token over three replicas: exactly one complete 200, the rest 404 or 409, no 5xx', { skip }, async () => {
  const token = await mint(replicas[1]);
  const results = await Promise.all(Array.from({ length: 100 }, (_, i) => fetchOn(replicas[i % 3], token)));
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
  assert.ok(results.find((r) => r.status === 200)!.complete);
  assert.ok(
    statuses.every((s) => s === 200 || s === 404 || s === 409),
    JSON.stringify(statuses),
  );
  for (const r of results) if (r.status !== 200) assert.match(codeOfDocument(r), /^S2SP_ERR_TOKEN_(NOT_FOUND|IN_FLIGHT)$/);
});

test('Redis stopped and started again: clear errors while it is down, success after', { skip }, async () => {
  const [a, b] = replicas;
  const waiting = await mint(a);
  await takeRedisDown(redis);
  const result = (await a.client.callTool({ name: 'read_table', arguments: { abstract_domains: 'label' } })) as CallToolResult;
  assert.equal(result.isError, true);
  assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_STORE_UNAVAILABLE');
  const fetched = await fetchOn(b, waiting);
  assert.equal(fetched.status, 503);
  assert.equal(codeOfDocument(fetched), 'S2SP_ERR_STORE_UNAVAILABLE');
  const health = await fetch(`${b.base}/s2sp/health`);
  assert.equal(health.status, 503);
  await redis.restart();
  // Each replica reconnects by itself; no restart.
  for (const replica of replicas) {
    await eventually(async () => (await fetch(`${replica.base}/s2sp/health`)).status === 200, 15_000, `${replica.name} healthy`);
  }
  const token = await mint(a);
  const after = await fetchOn(b, token);
  assert.equal(after.status, 200);
  assert.equal(after.complete, true);
});

test('the replica streaming a transfer is killed mid-stream: after the lease timeout another replica serves the token, byte-identical', { skip }, async () => {
  const [a, b, c] = replicas;
  const reference = await fetchOn(c, await mint(a));
  assert.equal(reference.status, 200);
  const token = await mint(a);
  // Read the first bytes from A, then stop reading, and kill A while the rest waits in the socket.
  const cut = await new Promise<{ received: number; complete: boolean }>((resolve, reject) => {
    const request = http.request(
      `${a.base}/s2sp/data/${token}`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', accept: ARROW } },
      (response) => {
        assert.equal(response.statusCode, 200);
        let received = 0;
        response.once('data', (d: Buffer) => {
          received += d.byteLength;
          response.pause();
          a.child.kill('SIGKILL');
          a.child.once('exit', () => {
            response.resume();
            response.on('data', (more: Buffer) => (received += more.byteLength));
          });
        });
        const done = () => resolve({ received, complete: response.complete });
        response.on('end', done);
        response.on('error', done);
        response.on('close', done);
      },
    );
    request.on('error', reject);
    request.end('{}');
  });
  assert.equal(cut.complete, false, 'the transfer was cut');
  assert.ok(cut.received < reference.bytes.byteLength);
  const killedAt = Date.now();
  // B sees the dead replica's lease until it times out, then serves the token.
  let retry: Fetched | undefined;
  const seen: number[] = [];
  await eventually(
    async () => {
      retry = await fetchOn(b, token);
      seen.push(retry.status);
      return retry.status !== 409;
    },
    10_000,
    'the lease timed out',
  );
  assert.equal(seen[0], 409, `the dead replica's lease held the token at first: ${seen.join(',')}`);
  assert.equal(retry!.status, 200);
  assert.ok(Date.now() - killedAt < LEASE_TIMEOUT_S * 1000 + 5000);
  assert.equal(retry!.complete, true);
  assert.ok(retry!.bytes.equals(reference.bytes), 'the retry is byte-identical');
  assert.equal((await fetchOn(c, token)).status, 404);
});
