/**
 * HTTP timeouts (item 3 of the deploy-grade issue): a client that dribbles
 * its body, or never finishes its headers, is cut off with the error
 * document; idle keep-alive connections close; a client that stops reading
 * its response is dropped and its lease released.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { S2SPServer, type S2SPServerOptions } from '../../src/server/s2sp-server.js';
import { DEFAULT_HTTP_TIMEOUTS, resolveHttpTimeouts } from '../../src/server/http-timeouts.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { collectRaw, connectRaw } from '../support/raw-socket.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { watchLeases } from '../support/lease-watch.js';
import { waitUntilIdle } from '../support/wait-until-idle.js';

async function start(t: TestContext, options: Partial<S2SPServerOptions>, rows: Record<string, unknown>[] = [{ a: 1 }]) {
  const server = new S2SPServer({ name: 't', ...options });
  server.resourceTool('rows', { description: 'r' }, () => rows);
  await server.listen({ mcpPath: '/mcp' });
  const client = await connectInMemory(server, t);
  const port = (server.http!.server.address() as AddressInfo).port;
  const mint = async (): Promise<string> => {
    const result = await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } });
    return JSON.parse((result.content as Array<{ text: string }>)[0].text).resource_url;
  };
  return { server, port, mint };
}

test('a client that dribbles its body is cut off with 408 and the error document', async (t) => {
  const { port, mint } = await start(t, { http: { timeouts: { requestMs: 400, headersMs: 200 } } });
  const resourceUrl = await mint();
  for (const path of [new URL(resourceUrl).pathname, '/mcp']) {
    const socket = await connectRaw(port);
    const answer = collectRaw(socket, 5000);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
    // One byte every 50 ms, at most 100 of them (5 s): far slower than the 400 ms the whole request may take.
    const dribble = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(dribble)), 50);
    const started = Date.now();
    const result = await answer;
    clearInterval(dribble);
    assert.equal(result.closed, true, `${path}: the server still holds the connection after 5 s`);
    assert.ok(Date.now() - started < 3000, `${path}: cut after ${Date.now() - started} ms`);
    assert.equal(result.status, 408, `${path}: ${result.text.slice(0, 200)}`);
    assert.equal(JSON.parse(result.body).error.code, 'S2SP_ERR_REQUEST_TIMEOUT', path);
  }
  assert.equal((await fetch(resourceUrl, { method: 'POST' })).status, 200, 'the token was never leased');
});

test('a client that never finishes its headers is cut off with 408', async (t) => {
  const { port } = await start(t, { http: { timeouts: { requestMs: 1000, headersMs: 200 } } });
  const socket = await connectRaw(port);
  const answer = collectRaw(socket, 5000);
  socket.write('POST /s2sp/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  const result = await answer;
  assert.equal(result.closed, true, 'the server still holds the connection after 5 s');
  assert.equal(result.status, 408, result.text.slice(0, 200));
  assert.equal(JSON.parse(result.body).error.code, 'S2SP_ERR_REQUEST_TIMEOUT');
});

test('an idle keep-alive connection is closed after keepAliveMs', async (t) => {
  const { port } = await start(t, { http: { timeouts: { keepAliveMs: 200 } } });
  const socket = await connectRaw(port);
  const answer = collectRaw(socket, 5000);
  socket.write('GET /s2sp/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  const result = await answer;
  assert.equal(result.status, 200);
  assert.equal(result.closed, true, 'the idle connection was still open after 5 s');
});

test('a client that stops reading its response is dropped after idleMs, and its lease released', async (t) => {
  // 20 MB of body: far more than the socket buffers take, so the response stalls.
  const rows = Array.from({ length: 2000 }, (_, i) => ({ a: i, text: `${i}`.padEnd(10_000, 'x') }));
  const store = watchLeases(new MemoryStore());
  const { port, mint } = await start(t, { http: { timeouts: { idleMs: 300 } }, dataPlane: { workers: 0 }, store }, rows);
  const resourceUrl = await mint();
  const token = resourceUrl.slice(resourceUrl.lastIndexOf('/') + 1);
  const request = http.request({ host: '127.0.0.1', port, path: new URL(resourceUrl).pathname, method: 'POST', agent: false });
  request.end();
  const [response] = (await once(request, 'response')) as [http.IncomingMessage];
  assert.equal(response.statusCode, 200);
  response.pause(); // reads nothing more
  response.on('error', () => {});
  t.after(() => response.destroy());
  // Waits for the dropped transfer's lease to be released; throws if the cut transfer consumed it.
  await waitUntilIdle(store, token);
  const again = await fetch(resourceUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"row_ids":[0],"columns":["a"]}' });
  assert.equal(again.status, 200, 'the token serves again');
  await again.arrayBuffer();
});

test('timeouts are set by default and validated', async (t) => {
  const { server } = await start(t, {});
  const node = server.http!.server;
  assert.equal(node.requestTimeout, DEFAULT_HTTP_TIMEOUTS.requestMs);
  assert.equal(node.headersTimeout, DEFAULT_HTTP_TIMEOUTS.headersMs);
  assert.equal(node.keepAliveTimeout, DEFAULT_HTTP_TIMEOUTS.keepAliveMs);
  assert.equal(node.timeout, DEFAULT_HTTP_TIMEOUTS.idleMs);
  assert.ok(DEFAULT_HTTP_TIMEOUTS.requestMs > 0 && DEFAULT_HTTP_TIMEOUTS.headersMs > 0);
  for (const timeouts of [{ requestMs: -1 }, { idleMs: 1.5 }, { requestMs: 100, headersMs: 200 }, { keepAliveMs: Number.NaN }]) {
    assert.throws(() => new S2SPServer({ name: 't', http: { timeouts } }), { code: 'S2SP_ERR_OPTION_INVALID' }, JSON.stringify(timeouts));
  }
  assert.equal(resolveHttpTimeouts({ requestMs: 100 }).headersMs, 100, 'the headers default shrinks to a shorter request timeout');
});
