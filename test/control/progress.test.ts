/**
 * MCP progress (`notifications/progress`) from the tool wrappers, seen
 * through the SDK client's own `onprogress` callback: a resource tool caching
 * a large table and a consumer tool fetching a large body report bytes, the
 * values grow with each notification, the last one reaches its total, all of
 * them arrive before the result, and a call without a progress token gets
 * none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { RedisStore } from '../../src/cache/redis-store.js';
import { Registry } from 'prom-client';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { parsePrometheusText, valueOf } from '../support/prometheus-text.js';
import { redisSkipReason, startRedisServer } from '../support/redis-server.js';

/** ~10 MB as JSON, ~7 MB as Arrow: far over one socket read, and over the 1 MiB progress step. */
const BIG_ROWS = Array.from({ length: 100_000 }, (_, i) => ({
  id: i,
  place: `place number ${i} of a long list`,
  mag: i / 1000,
  detail: `detail ${'x'.repeat(i % 40)}`,
}));

function textOf(result: unknown): string {
  const { content, isError } = result as CallToolResult;
  assert.notEqual(isError, true, JSON.stringify(content).slice(0, 500));
  return (content[0] as { text: string }).text;
}

/** Calls a tool with a progress callback; resolves with the result and the progress seen before it. */
async function callWithProgress(client: Client, name: string, args: Record<string, unknown>): Promise<{ result: unknown; progress: Progress[] }> {
  const progress: Progress[] = [];
  let answered = false;
  const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
    onprogress: (update) => {
      assert.equal(answered, false, 'a notification after the result');
      progress.push(update);
    },
  });
  answered = true;
  return { result, progress };
}

/** Progress that arrived, grew with each notification and ended at its total; returns the total. */
function assertGrowsToTotal(progress: readonly Progress[], label: string): number {
  assert.ok(progress.length > 0, `${label}: no progress arrived`);
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i].progress > progress[i - 1].progress, `${label}: progress ${i} grew (${progress[i - 1].progress} -> ${progress[i].progress})`);
  }
  const last = progress[progress.length - 1];
  assert.equal(typeof last.total, 'number', `${label}: the last notification has a total`);
  assert.equal(last.progress, last.total, `${label}: progress ends at the total`);
  for (const update of progress) {
    if (update.total !== undefined) assert.equal(update.total, last.total, `${label}: one total throughout`);
    assert.equal(typeof update.message, 'string');
  }
  return last.total!;
}

test('progress: a resource tool caching a large table reports the body bytes, ending at the total', async (t) => {
  const server = new S2SPServer({ name: 'resource' });
  server.resourceTool('big', { description: 'a large table' }, () => BIG_ROWS);
  await server.listen();
  const client = await connectInMemory(server, t);
  const { result, progress } = await callWithProgress(client, 'big', { abstract_domains: 'mag' });
  const total = assertGrowsToTotal(progress, 'resource');
  // The store's own measure of what it cached.
  assert.equal(total, (await server.store.stats()).bytes);
  assert.equal(progress[0].progress, 0, 'the start, with the total, before the copy');
  assert.ok(JSON.parse(textOf(result)).resource_url);

  // No progress token, no notification (and sync mode caches nothing).
  let notified = 0;
  await client.callTool({ name: 'big', arguments: { abstract_domains: 'mag' } });
  await client.callTool({ name: 'big', arguments: { abstract_domains: 'mag', mode: 'sync' } }, CallToolResultSchema, { onprogress: () => notified++ });
  assert.equal(notified, 0);
});

test('progress: with a shared store, caching reports each chunk written to Redis', { skip: redisSkipReason(), timeout: 60_000 }, async (t) => {
  const redis = await startRedisServer();
  t.after(() => redis.stop());
  const store = new RedisStore({ url: redis.url, chunkBytes: 256 * 1024 });
  await store.ready();
  const server = new S2SPServer({ name: 'resource', store });
  server.resourceTool('big', { description: 'a large table' }, () => BIG_ROWS);
  await server.listen();
  const client = await connectInMemory(server, t);
  const { progress } = await callWithProgress(client, 'big', { abstract_domains: 'mag' });
  const total = assertGrowsToTotal(progress, 'redis');
  assert.equal(total, (await store.stats()).bytes);
  // ~7 MB in 256 KiB chunks, reported a twentieth at a time: many notifications, not one per chunk.
  assert.ok(progress.length >= 10 && progress.length <= 22, `${progress.length} notifications`);
});

test('progress: a consumer tool fetching a large body reports bytes received, ending at the bytes it got', async (t) => {
  const resource = new S2SPServer({ name: 'resource' });
  resource.resourceTool('big', { description: 'a large table' }, () => BIG_ROWS);
  await resource.listen();
  const resourceClient = await connectInMemory(resource, t);
  const consumer = new S2SPServer({ name: 'consumer' });
  consumer.consumerTool('count', { description: 'counts rows' }, ({ rows, bytesReceived }) => ({ rows: rows.length, bytesReceived }));
  const consumerClient = await connectInMemory(consumer, t);

  const envelope = JSON.parse(textOf(await resourceClient.callTool({ name: 'big', arguments: { abstract_domains: 'mag' } })));
  const { result, progress } = await callWithProgress(consumerClient, 'count', { abstract_data: '*', resource_url: envelope.resource_url });
  const answer = JSON.parse(textOf(result));
  assert.equal(answer.rows, BIG_ROWS.length);
  const total = assertGrowsToTotal(progress, 'consumer');
  assert.equal(total, answer.bytesReceived);
  // It took several notifications to get there. A whole uncompressed Arrow body is sent with its
  // Content-Length, so the total may be known from the first one; a streamed one learns it at the end.
  assert.ok(progress.length >= 3, `${progress.length} notifications`);
  assert.ok(progress[0].total === undefined || progress[0].total === total, `first total ${progress[0].total}`);
});

test('regression: a batch consumer tool ({ batches: true }) reports progress and is counted by its registry, as the rows flavour is', async (t) => {
  const resource = new S2SPServer({ name: 'resource' });
  resource.resourceTool('big', { description: 'a large table' }, () => BIG_ROWS);
  await resource.listen();
  const resourceClient = await connectInMemory(resource, t);
  const registry = new Registry();
  const consumer = new S2SPServer({ name: 'consumer', registry });
  consumer.consumerTool(
    'load',
    { description: 'loads batches' },
    async ({ batches }) => {
      let rows = 0;
      for await (const batch of batches) rows += batch.numRows;
      return { rows };
    },
    { batches: true },
  );
  const consumerClient = await connectInMemory(consumer, t);

  const envelope = JSON.parse(textOf(await resourceClient.callTool({ name: 'big', arguments: { abstract_domains: 'mag' } })));
  const { result, progress } = await callWithProgress(consumerClient, 'load', { abstract_data: '*', resource_url: envelope.resource_url });
  assert.equal(JSON.parse(textOf(result)).rows, BIG_ROWS.length);
  const total = assertGrowsToTotal(progress, 'batch consumer');
  const samples = parsePrometheusText(await registry.metrics());
  assert.equal(valueOf(samples, 's2sp_consumer_fetches_total', { format: 'arrow' }), 1);
  assert.equal(valueOf(samples, 's2sp_consumer_bytes_received_total', { format: 'arrow' }), total);
});

test('progress over Streamable HTTP: a request with a progress token is answered as an event stream that carries it', async (t) => {
  const server = new S2SPServer({ name: 'resource' });
  server.resourceTool('big', { description: 'a large table' }, () => BIG_ROWS);
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  const client = new Client({ name: 'http-agent', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  t.after(() => client.close());
  const { result, progress } = await callWithProgress(client, 'big', { abstract_domains: 'mag' });
  assertGrowsToTotal(progress, 'http');
  assert.ok(JSON.parse(textOf(result)).resource_url);
  // Without a token the answer stays plain JSON.
  const plain = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
  await plain.text();
});
