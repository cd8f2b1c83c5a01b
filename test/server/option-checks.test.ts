/**
 * Options are checked when a plugin, store, pool or server is built, with
 * S2SP_ERR_OPTION_INVALID naming the option: `chunkRows: 0` used to loop
 * forever on the first fetch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane, type DataPlaneOptions } from '../../src/data/data-plane-plugin.js';
import { mcpHttpPlugin, type McpHttpOptions } from '../../src/server/mcp-http-plugin.js';
import { S2SPServer, type S2SPServerOptions } from '../../src/server/s2sp-server.js';
import { registerResourceTool } from '../../src/control/resource-tool.js';
import { registerConsumerTool } from '../../src/control/consumer-tool.js';
import type { ResolveOptions } from '../../src/consumer/resolve.js';

const INVALID = { code: 'S2SP_ERR_OPTION_INVALID' };

test('the data plane refuses bad options at registration (chunkRows: 0 no longer hangs)', async (t) => {
  const store = new MemoryStore();
  t.after(() => store.close());
  const cases: Array<Partial<DataPlaneOptions>> = [
    { chunkRows: 0 },
    { chunkRows: -1 },
    { chunkRows: 1.5 },
    { chunkRows: 2 ** 31 },
    { bodyLimit: 0 },
    { bodyLimit: Number.NaN },
    { inlineCellLimit: -1 },
    { workers: -1 },
    { workers: 2.5 },
    { store: undefined },
  ];
  for (const options of cases) {
    const app = Fastify();
    await assert.rejects(async () => app.register(s2spDataPlane, { store, workers: 0, ...options } as DataPlaneOptions), INVALID, JSON.stringify(options));
    await app.close();
  }
});

test('mcpHttpPlugin refuses bad options at registration', async () => {
  const createServer = () => new McpServer({ name: 't', version: '0' });
  const cases: Array<Partial<McpHttpOptions>> = [
    { bodyLimit: 0 },
    { bodyLimit: -5 },
    { allowedHosts: ['http://x.example'] },
    { allowedOrigins: ['x.example'] },
    { createServer: undefined },
  ];
  for (const options of cases) {
    const app = Fastify();
    await assert.rejects(async () => app.register(mcpHttpPlugin, { createServer, ...options } as McpHttpOptions), INVALID, JSON.stringify(options));
    await app.close();
  }
});

test('S2SPServer refuses bad options at construction', () => {
  const cases: Array<Partial<S2SPServerOptions>> = [
    { name: '' },
    { port: -1 },
    { port: 65536 },
    { port: 1.5 },
    { host: '' },
    { publicUrl: 'data.example.com' },
    { publicUrl: 'ftp://data.example.com' },
    { publicUrl: 'https://data.example.com/?token=1' },
    { ttlSeconds: 0 },
    { maxCacheBytes: -1 },
    { abstractRowLimit: 0 },
    { requestBodyLimit: 0 },
    { mcpBodyLimit: 0 },
    { workers: -1 },
    { mcpAllowedOrigins: ['not an origin'] },
    { timeouts: { headersMs: -1 } },
  ];
  for (const options of cases) {
    assert.throws(() => new S2SPServer({ name: 't', ...options } as S2SPServerOptions), INVALID, JSON.stringify(options));
  }
});

test('tool wrappers refuse bad limits at registration', () => {
  const mcp = new McpServer({ name: 't', version: '0' });
  const store = new MemoryStore();
  const context = { store, resourceUrlFor: () => 'http://127.0.0.1:1/x' };
  for (const abstractRowLimit of [0, -1, 1.5]) {
    assert.throws(() => registerResourceTool(mcp, `r${abstractRowLimit}`, {}, () => [], { ...context, abstractRowLimit }), INVALID);
  }
  const cases: ResolveOptions[] = [{ maxBodyBytes: 0 }, { timeoutMs: -1 }, { allowedOrigins: ['data.example.com'] }];
  for (const [i, options] of cases.entries()) {
    assert.throws(() => registerConsumerTool(mcp, `c${i}`, {}, () => null, options), INVALID, JSON.stringify(options));
  }
  void store.close();
});
