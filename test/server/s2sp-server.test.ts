import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { McpServer } from '@modelcontextprotocol/server';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { expectConsumed } from '../support/expect-consumed.js';
import { watchLeases } from '../support/lease-watch.js';

const ROWS = [
  { a: 1, b: 'x' },
  { a: 2, b: 'y' },
];

function envelopeOf(result: unknown): { resource_url: string } {
  return JSON.parse(((result as CallToolResult).content[0] as { text: string }).text);
}

test('publicUrl is the base of every resource_url', async (t) => {
  const server = new S2SPServer({ name: 't', http: { publicUrl: 'https://data.example.test/prefix/' } });
  server.resourceTool('rows', { description: 'r' }, () => ROWS);
  const client = await connectInMemory(server, t);
  const { resource_url } = envelopeOf(await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } }));
  assert.match(resource_url, /^https:\/\/data\.example\.test\/prefix\/s2sp\/data\/[A-Za-z0-9_-]{43}$/);
});

test('over HTTP every request sees the resource tools and what configure() added', async (t) => {
  // Typed as SDK v2's McpServer: configure() hands out the line's own server type.
  const server = new S2SPServer<McpServer>({ name: 't', sdk: 'v2' });
  server.resourceTool('rows', { description: 'r' }, () => ROWS);
  server.configure((mcp) => mcp.registerTool('ping', { description: 'p' }, async () => ({ content: [{ type: 'text', text: 'pong' }] })));
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  // Two clients at once: the stateless endpoint gives each request its own McpServer.
  const clients = await Promise.all(
    [1, 2].map(async () => {
      const client = new Client({ name: 'c', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      return client;
    }),
  );
  t.after(() => Promise.all(clients.map((c) => c.close())));
  for (const client of clients) {
    assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), ['ping', 'rows']);
  }
  const results = await Promise.all(clients.map((c) => c.callTool({ name: 'rows', arguments: { abstract_domains: 'b' } })));
  const urls = results.map((r) => envelopeOf(r).resource_url);
  assert.notEqual(urls[0], urls[1]);
  for (const resourceUrl of urls) {
    assert.ok(resourceUrl.startsWith(`${url}/s2sp/data/`));
    assert.equal((await fetch(resourceUrl, { method: 'POST' })).status, 200);
  }
  assert.equal((await fetch(`${url}/mcp`)).status, 405);
});

test('unknown routes answer our JSON 404 and no log line carries a token in full', async (t) => {
  const lines: string[] = [];
  const store = watchLeases(new MemoryStore());
  const server = new S2SPServer({ name: 't', store, http: { logger: { level: 'trace', stream: { write: (line: string) => lines.push(line) } } } });
  server.resourceTool('rows', { description: 'r' }, () => ROWS);
  const url = await server.listen();
  const client = await connectInMemory(server, t);
  const { resource_url } = envelopeOf(await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } }));
  const token = resource_url.slice(resource_url.lastIndexOf('/') + 1);
  for (const path of [`//s2sp/data/${token}`, `/S2SP/data/${token}`, `/other/${token}`, `/s2sp/data/${token}/x`]) {
    const response = await fetch(`${url}${path}`, { method: 'POST' });
    assert.equal(response.status, 404, path);
    assert.match(((await response.json()) as { error: { code: string } }).error.code, /^S2SP_ERR_(ROUTE|TOKEN)_NOT_FOUND$/);
  }
  assert.equal((await fetch(resource_url)).status, 405);
  assert.equal((await fetch(resource_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"row_ids":[9]}' })).status, 400);
  assert.equal((await fetch(resource_url, { method: 'POST' })).status, 200);
  await expectConsumed(resource_url, store);
  assert.ok(lines.length > 10, 'the logger captured the requests');
  const leaks = lines.filter((line) => line.includes(token));
  assert.deepEqual(leaks, []);
});

test('an existing fastify app: the data plane mounts under its prefix, MCP beside it, the app stays the embedder’s', async (t) => {
  const app = Fastify();
  app.get('/own', async () => ({ mine: true }));
  const server = new S2SPServer({ name: 't', http: { app, prefix: '/internal' } });
  server.resourceTool('rows', { description: 'r' }, () => ROWS);
  await server.mount({ mcpPath: '/mcp' });
  assert.equal(server.http, app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const client = new Client({ name: 'c', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  t.after(() => client.close());
  const { resource_url } = envelopeOf(await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } }));
  assert.ok(resource_url.startsWith(`${base}/internal/s2sp/data/`), resource_url);
  const response = await fetch(resource_url, { method: 'POST' });
  assert.equal(response.status, 200);
  assert.equal(((await response.json()) as { total_rows: number }).total_rows, 2);
  assert.equal(await server.listen(), base, 'listen on an app that already listens only reports its URL');
  await server.close();
  assert.equal(app.server.listening, true, 'close leaves the embedder’s app running');
  assert.deepEqual(await (await fetch(`${base}/own`)).json(), { mine: true });
});
