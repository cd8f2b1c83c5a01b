/**
 * One trace from the agent's tools/call through both servers (README,
 * Observability): the resource tool's call and its put, the consumer tool's
 * call, its fetch and decode, and the data plane's fetch, all under the
 * agent's `traceparent`, whether it came as the HTTP header on /mcp or as
 * `params._meta.traceparent` (the stdio way). Then: nothing exported holds
 * an access token or a data-plane token.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { startAuthorizationServer } from '../support/authorization-server.js';
import { captureSpans, spanNamed } from '../support/span-capture.js';

const ROWS = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `row ${i}`, value: i * 1.5 }));
const AGENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const AGENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${AGENT_TRACE}-${AGENT_SPAN}-01`;

interface Planes {
  resourceUrl: string;
  consumerUrl: string;
  logs: string[];
}

/** A resource server and a consumer server over HTTP, logging into `logs`. */
async function startPlanes(t: TestContext, auth?: { issuer: string }): Promise<Planes> {
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const resource = new S2SPServer({ name: 'resource', http: { logger: { level: 'debug', stream } }, ...(auth === undefined ? {} : { mcp: { auth } }) });
  resource.resourceTool('rows', { description: 'rows' }, () => ROWS);
  const consumer = new S2SPServer({ name: 'consumer', http: { logger: { level: 'debug', stream } } });
  consumer.consumerTool('consume', { description: 'consume' }, ({ rows }) => ({ count: rows.length }));
  const resourceUrl = await resource.listen({ mcpPath: '/mcp' });
  t.after(() => resource.close());
  const consumerUrl = await consumer.listen({ mcpPath: '/mcp' });
  t.after(() => consumer.close());
  return { resourceUrl, consumerUrl, logs };
}

async function connect(t: TestContext, url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'agent', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  t.after(() => client.close());
  return client;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

test('one trace runs from the agent through the resource tool, the consumer fetch and the data plane', async (t) => {
  const spans = captureSpans(t);
  const { resourceUrl, consumerUrl } = await startPlanes(t);
  // The resource call carries the agent's context as the HTTP header on /mcp ...
  const resource = await connect(t, resourceUrl, { traceparent: TRACEPARENT });
  const put = await resource.callTool({ name: 'rows', arguments: { abstract_domains: 'name' } });
  const { resource_url } = put.structuredContent as { resource_url: string };
  // ... the consumer call as params._meta.traceparent, as it would over stdio.
  const consumer = await connect(t, consumerUrl, {});
  const consumed = await consumer.callTool({
    name: 'consume',
    arguments: { resource_url, abstract_data: JSON.stringify([{ _row_id: 1 }, { _row_id: 2 }, { _row_id: 7 }]) },
    _meta: { traceparent: TRACEPARENT },
  });
  assert.notEqual(consumed.isError, true, JSON.stringify(consumed));

  const finished = await spans.until((all) => all.some((s) => s.name === 's2sp.data_plane.fetch') && all.some((s) => s.name === 'tools/call consume'));
  const resourceCall = spanNamed(finished, 'tools/call rows');
  const putSpan = spanNamed(finished, 's2sp.put');
  const consumerCall = spanNamed(finished, 'tools/call consume');
  const fetchSpan = spanNamed(finished, 's2sp.consumer.fetch');
  const decodeSpan = spanNamed(finished, 's2sp.consumer.decode');
  const servedSpan = spanNamed(finished, 's2sp.data_plane.fetch');

  for (const span of [resourceCall, putSpan, consumerCall, fetchSpan, decodeSpan, servedSpan]) {
    assert.equal(span.spanContext().traceId, AGENT_TRACE, `${span.name} is in the agent's trace`);
  }
  assert.equal(parentOf(resourceCall), AGENT_SPAN);
  assert.equal(parentOf(consumerCall), AGENT_SPAN);
  assert.equal(parentOf(putSpan), resourceCall.spanContext().spanId);
  assert.equal(parentOf(fetchSpan), consumerCall.spanContext().spanId);
  assert.equal(parentOf(decodeSpan), fetchSpan.spanContext().spanId);
  // Across the wire: the consumer's fetch sent its own context to the data plane.
  assert.equal(parentOf(servedSpan), fetchSpan.spanContext().spanId);
  assert.equal(servedSpan.parentSpanContext?.isRemote, true);

  assert.equal(resourceCall.attributes['gen_ai.tool.name'], 'rows');
  assert.equal(putSpan.attributes['s2sp.rows'], ROWS.length);
  assert.ok((putSpan.attributes['s2sp.bytes'] as number) > 0);
  assert.equal(servedSpan.attributes['s2sp.rows'], 3);
  assert.equal(servedSpan.attributes['s2sp.format'], 'arrow');
  assert.equal(servedSpan.attributes['s2sp.codec'], 'none'); // loopback: the consumer asks for no codec
  assert.equal(servedSpan.attributes['s2sp.lease.outcome'], 'committed');
  assert.equal(servedSpan.attributes['http.response.status_code'], 200);
  assert.equal(servedSpan.attributes['http.route'], '/s2sp/data/:token');
  assert.ok((servedSpan.attributes['s2sp.bytes'] as number) > 0);
  assert.equal(fetchSpan.attributes['s2sp.rows'], 3);
  assert.equal(fetchSpan.attributes['s2sp.bytes'], servedSpan.attributes['s2sp.bytes']);
  assert.equal(fetchSpan.attributes['s2sp.format'], 'arrow');
});

test('nothing exported holds an access token or a data-plane token: spans, attributes, events, statuses, logs', async (t) => {
  const spans = captureSpans(t);
  const as = await startAuthorizationServer(t);
  const { resourceUrl, consumerUrl, logs } = await startPlanes(t, { issuer: as.issuer });
  as.resource = `${resourceUrl}/mcp`;
  const accessToken = await as.token();
  const resource = await connect(t, resourceUrl, { traceparent: TRACEPARENT, authorization: `Bearer ${accessToken}` });
  const put = await resource.callTool({ name: 'rows', arguments: { abstract_domains: 'name' } });
  const { resource_url } = put.structuredContent as { resource_url: string };
  const dataToken = new URL(resource_url).pathname.split('/').pop()!;
  const consumer = await connect(t, consumerUrl, { traceparent: TRACEPARENT });
  await consumer.callTool({ name: 'consume', arguments: { resource_url, abstract_data: '[{"_row_id": 0}]' } });
  // Failures too: the spent resource_url again (404 on the data plane, a tool error), and a bad access token.
  const again = await consumer.callTool({ name: 'consume', arguments: { resource_url, abstract_data: '[{"_row_id": 0}]' } });
  assert.equal(again.isError, true);
  const refused = await fetch(`${resourceUrl}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}x`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(refused.status, 401);

  const finished = await spans.until(
    (all) => all.filter((s) => s.name === 's2sp.data_plane.fetch').length === 2 && all.filter((s) => s.name === 'tools/call consume').length === 2,
  );
  const failed = finished.filter((s) => s.name === 's2sp.data_plane.fetch').find((s) => s.attributes['http.response.status_code'] === 404);
  assert.equal(failed?.attributes['s2sp.lease.outcome'], 'none');
  assert.equal(failed?.attributes['error.type'], 'S2SP_ERR_TOKEN_NOT_FOUND');
  const exported = JSON.stringify(
    finished.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      status: span.status,
      links: span.links,
      resource: span.resource.attributes,
    })),
  );
  const everything = `${exported}\n${logs.join('')}`;
  assert.ok(logs.length > 0, 'the servers logged');
  for (const [what, secret] of [
    ['access token', accessToken],
    ['access token signature', accessToken.split('.')[2]!],
    ['data-plane token', dataToken],
  ] as const) {
    assert.ok(!everything.includes(secret), `no ${what} in what was exported or logged`);
  }
});
