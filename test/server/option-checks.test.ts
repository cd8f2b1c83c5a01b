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
import { registerConsumerTool, type ConsumerToolOptions } from '../../src/control/consumer-tool.js';
import { createDataPlane } from '../../src/data/data-plane-handle.js';
import { createEncoderPool } from '../../src/worker/encoder-pool.js';
import { EncodedBatchCache } from '../../src/data/encoded-batch-cache.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { storeFromSpec } from '../../src/cache/store-from-spec.js';
import { SharedMemoryPool } from '../../src/cache/shared-memory-pool.js';
import { S2SPDispatcher } from '../../src/agent/dispatcher.js';

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
    { prepare: 'on' as any },
    { prepare: ['gzip'] as any },
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
    { http: { port: -1 } },
    { http: { port: 65536 } },
    { http: { port: 1.5 } },
    { http: { host: '' } },
    { http: { publicUrl: 'data.example.com' } },
    { http: { publicUrl: 'ftp://data.example.com' } },
    { http: { publicUrl: 'https://data.example.com/?token=1' } },
    { http: { timeouts: { headersMs: -1 } } },
    { store: { ttlMs: 0 } },
    { store: { maxBytes: -1 } },
    { store: { leaseTimeoutMs: 0 } },
    { tools: { abstractRowLimit: 0 } },
    { dataPlane: { bodyLimit: 0 } },
    { dataPlane: { workers: -1 } },
    { dataPlane: { prepare: 'json' as any } },
    { dataPlane: { fullGc: 'gc' as any } },
    { mcp: { bodyLimit: 0 } },
    { mcp: { allowedOrigins: ['not an origin'] } },
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
  const cases: Array<ConsumerToolOptions & { batches?: false }> = [{ maxBodyBytes: 0 }, { timeoutMs: -1 }, { allowedOrigins: ['data.example.com'] }];
  for (const [i, options] of cases.entries()) {
    assert.throws(() => registerConsumerTool(mcp, `c${i}`, {}, () => null, options), INVALID, JSON.stringify(options));
  }
  void store.close();
});

/** Calls that must throw S2SP_ERR_OPTION_INVALID naming `option`. */
function assertNamesOption(cases: Array<[string, () => unknown]>): void {
  for (const [option, build] of cases) {
    assert.throws(
      build,
      (error: unknown) => {
        const { code, message } = error as { code?: string; message: string };
        return code === 'S2SP_ERR_OPTION_INVALID' && message.startsWith(`option ${option} `);
      },
      `${option}: ${build.toString()}`,
    );
  }
}

test('missing or wrong-typed required options are S2SP_ERR_OPTION_INVALID naming the option, never a TypeError (createDataPlane({}) threw one)', () => {
  const store = new MemoryStore();
  const mcp = new McpServer({ name: 't', version: '0' });
  const context = { store, resourceUrlFor: () => 'http://127.0.0.1:1/x' };
  const anyArgs = (f: (...args: any[]) => unknown) => f as (...args: unknown[]) => unknown;
  assertNamesOption([
    ['store', () => anyArgs(createDataPlane)({})],
    ['store', () => anyArgs(createDataPlane)()],
    ['options', () => anyArgs(createDataPlane)(null)],
    ['store', () => anyArgs(createDataPlane)({ store: 1 })],
    ['publicUrl', () => anyArgs(createDataPlane)({ store, publicUrl: 1 })],
    ['ttlMs', () => anyArgs(createDataPlane)({ store, ttlMs: 'x' })],
    ['name', () => new (S2SPServer as any)()],
    ['options', () => new (S2SPServer as any)(null)],
    ['store', () => new S2SPServer({ name: 't', store: 1 as any })],
    ['http', () => new S2SPServer({ name: 't', http: 1 as any })],
    ['tools.consumer', () => new S2SPServer({ name: 't', tools: { consumer: 1 as any } })],
    ['maxBodyBytes', () => new S2SPServer({ name: 't', tools: { consumer: { maxBodyBytes: 'x' as any } } })],
    ['context', () => anyArgs(registerResourceTool)(mcp, 'r', {}, () => [])],
    ['context.store', () => anyArgs(registerResourceTool)(mcp, 'r', {}, () => [], {})],
    ['context.resourceUrlFor', () => anyArgs(registerResourceTool)(mcp, 'r', {}, () => [], { store, resourceUrlFor: 1 })],
    ['handler', () => anyArgs(registerResourceTool)(mcp, 'r', {}, 1, context)],
    ['name', () => anyArgs(registerResourceTool)(mcp, 1, {}, () => [], context)],
    ['handler', () => anyArgs(registerConsumerTool)(mcp, 'c', {}, 1)],
    ['options', () => anyArgs(registerConsumerTool)(mcp, 'c', {}, () => null, 1)],
    ['options', () => anyArgs(createEncoderPool)(null)],
    ['threads', () => anyArgs(createEncoderPool)({ threads: 'x' })],
    ['options', () => new (EncodedBatchCache as any)(null)],
    ['maxBytes', () => new (EncodedBatchCache as any)({ maxBytes: 'x' })],
    ['options', () => new (MemoryStore as any)(null)],
    ['ttlMs', () => new (MemoryStore as any)({ ttlMs: 'x' })],
    ['maxBytes', () => new MemoryStore({ maxBytes: -1 })],
    ['url', () => new (RedisStore as any)()],
    ['url', () => new (RedisStore as any)({})],
    ['url', () => new (RedisStore as any)({ url: 1 })],
    ['url', () => new RedisStore({ url: 'http://127.0.0.1:6379' })],
    ['store', () => anyArgs(storeFromSpec)(1)],
    ['store', () => anyArgs(storeFromSpec)()],
    ['store', () => storeFromSpec('postgres://db')],
    ['options', () => new (SharedMemoryPool as any)(null)],
    ['maxIdleBytes', () => new (SharedMemoryPool as any)({ maxIdleBytes: 'x' })],
    ['buffer', () => new (S2SPDispatcher as any)(1)],
  ]);
  void store.close();
});
