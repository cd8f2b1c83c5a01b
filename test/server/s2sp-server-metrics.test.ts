/**
 * S2SPServer's `registry` option: the resource side's and the consumer
 * side's metrics on GET /metrics of their HTTP servers, after one S2SP
 * round trip through the real MCP client; a consumer-only server serves
 * /metrics without a data plane; no registry, no /metrics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Registry } from 'prom-client';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { scrape, valueOf } from '../support/prometheus-text.js';

const ROWS = Array.from({ length: 30 }, (_, i) => ({ id: i, mag: i / 10, place: `place ${i}` }));

function textOf(result: unknown): string {
  const { content, isError } = result as CallToolResult;
  assert.notEqual(isError, true, JSON.stringify(content));
  return (content[0] as { text: string }).text;
}

test('S2SPServer registry: both sides count one round trip; a consumer-only server serves /metrics alone', async (t) => {
  const resource = new S2SPServer({ name: 'resource', registry: new Registry() });
  resource.resourceTool('rows', { description: 'rows' }, () => ROWS);
  const resourceUrl = await resource.listen();
  const resourceClient = await connectInMemory(resource, t);

  const consumer = new S2SPServer({ name: 'consumer', registry: new Registry() });
  consumer.consumerTool('count', { description: 'counts' }, ({ rows, bytesReceived }) => ({ rows: rows.length, bytesReceived }));
  const consumerUrl = await consumer.listen();
  const consumerClient = await connectInMemory(consumer, t);
  // No data plane on a server without resource tools, but its metrics are there, before any fetch.
  assert.equal((await fetch(`${consumerUrl}/s2sp/health`)).status, 404);
  assert.match(await (await fetch(`${consumerUrl}/metrics`)).text(), /^# TYPE s2sp_consumer_fetches_total counter$/m);

  const envelope = JSON.parse(textOf(await resourceClient.callTool({ name: 'rows', arguments: { abstract_domains: 'mag' } })));
  const picked = envelope.abstract.filter((row: { mag: number }) => row.mag >= 2);
  const answer = JSON.parse(
    textOf(await consumerClient.callTool({ name: 'count', arguments: { abstract_data: JSON.stringify(picked), resource_url: envelope.resource_url } })),
  );
  assert.equal(answer.rows, picked.length);

  const consumerSide = await scrape(`${consumerUrl}/metrics`);
  let fetches = 0;
  let bytes = 0;
  for (const [key, value] of consumerSide) {
    if (key.startsWith('s2sp_consumer_fetches_total{')) fetches += value;
    if (key.startsWith('s2sp_consumer_bytes_received_total{')) bytes += value;
  }
  assert.equal(fetches, 1);
  assert.equal(bytes, answer.bytesReceived);
  assert.equal(
    [...consumerSide.keys()].some((key) => key.startsWith('s2sp_tokens_')),
    false,
    'no store on the consumer',
  );

  const resourceSide = await scrape(`${resourceUrl}/metrics`);
  assert.equal(valueOf(resourceSide, 's2sp_tokens_minted_total'), 1);
  assert.equal(valueOf(resourceSide, 's2sp_tokens_consumed_total'), 1);
  let served = 0;
  for (const [key, value] of resourceSide) if (/^s2sp_data_fetches_total\{.*status="200"/.test(key)) served += value;
  assert.equal(served, 1);
});

test('S2SPServer without a registry serves no /metrics', async (t) => {
  const server = new S2SPServer({ name: 'plain' });
  server.resourceTool('rows', { description: 'rows' }, () => ROWS);
  const url = await server.listen();
  t.after(() => server.close());
  assert.equal((await fetch(`${url}/metrics`)).status, 404);
  assert.equal((await fetch(`${url}/s2sp/health`)).status, 200);
});
