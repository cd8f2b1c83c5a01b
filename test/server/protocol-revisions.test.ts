/**
 * Both MCP protocol revisions on one endpoint, and both SDK lines: an
 * S2SPServer on SDK v2 answers a v2 Client pinned to 2026-07-28 (no
 * initialize; server/discover; the version and capabilities in each
 * request's `_meta`), a v1 Client (the 2025 handshake) and raw HTTP requests
 * of either revision; an S2SPServer on SDK v1 answers 2025 clients. Each
 * client runs the round trip: a resource tool, then a consumer tool that
 * fetches the body over the data plane.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { S2SPClient } from '../../src/agent/s2sp-client.js';
import type { McpSdkLine } from '../../src/server/mcp-sdk.js';
import { isDdiHandle } from '../../src/protocol/ddi-handle.js';
import { SYNC_BODY_META_KEY } from '../../src/protocol/sync-body-meta.js';

const ROWS = Array.from({ length: 50 }, (_, i) => ({ id: i, mag: i / 10, place: `place ${i}` }));
const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A server with a resource tool and a consumer tool, over HTTP at /mcp. */
async function startServer(t: TestContext, sdk: McpSdkLine): Promise<string> {
  const server = new S2SPServer({ name: 'revisions', sdk });
  server.resourceTool('rows', { description: 'rows' }, () => ROWS);
  server.consumerTool('places', { description: 'places of chosen rows' }, ({ rows }) => ({ places: rows.map((row) => row.place) }));
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  return `${url}/mcp`;
}

/** The round trip through s2sp's client wrapper: the abstract, then the consumer fetching two rows' bodies. */
async function roundTrip(agent: S2SPClient): Promise<unknown> {
  const read = await agent.callTool({ name: 'rows', arguments: { abstract_domains: 'mag' } });
  const envelope = JSON.parse((read.content[0] as { text: string }).text) as { resource_url: string; abstract: { _row_id: number }[] };
  assert.equal(envelope.abstract.length, ROWS.length);
  const chosen = JSON.stringify(envelope.abstract.filter((row) => row._row_id === 3 || row._row_id === 7));
  const consumed = await agent.callTool({ name: 'places', arguments: { abstract_data: chosen, resource_url: envelope.resource_url } });
  assert.notEqual(consumed.isError, true, JSON.stringify(consumed.content));
  return JSON.parse((consumed.content[0] as { text: string }).text);
}

test('SDK v2 server: a v2 Client in the 2026-07-28 era runs the round trip without initialize', async (t) => {
  const url = await startServer(t, 'v2');
  const client = new V2Client({ name: 'agent-2026', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new V2HttpTransport(new URL(url)));
  t.after(() => client.close());
  assert.equal(client.getProtocolEra(), 'modern');
  assert.deepEqual(await roundTrip(new S2SPClient(client)), { places: ['place 3', 'place 7'] });
});

for (const sdk of ['v2', 'v1'] as const) {
  test(`SDK ${sdk} server: a v1 Client (the 2025 handshake) runs the round trip`, async (t) => {
    const url = await startServer(t, sdk);
    const client = new V1Client({ name: 'agent-2025', version: '0' });
    await client.connect(new V1HttpTransport(new URL(url)));
    t.after(() => client.close());
    assert.deepEqual(await roundTrip(new S2SPClient(client)), { places: ['place 3', 'place 7'] });
  });
}

/** POSTs one JSON-RPC request; returns the status and the parsed answer (JSON, or the last SSE data line). */
async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; answer: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? (
        text
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .at(-1) ?? 'data: {}'
      ).slice(6)
    : text;
  return { status: response.status, answer: JSON.parse(json) as Record<string, unknown> };
}

test('raw HTTP, 2026-07-28: server/discover, then tools/call with Mcp-Method and Mcp-Name, results carry resultType', async (t) => {
  const url = await startServer(t, 'v2');
  const modern = { 'mcp-protocol-version': MODERN };
  const discover = await post(
    url,
    { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } },
    { ...modern, 'mcp-method': 'server/discover' },
  );
  assert.equal(discover.status, 200);
  const found = discover.answer.result as { supportedVersions: string[]; capabilities: { tools?: unknown }; resultType: string };
  assert.ok(found.supportedVersions.includes(MODERN));
  assert.ok(found.capabilities.tools);
  assert.equal(found.resultType, 'complete');

  const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'rows', arguments: { abstract_domains: 'mag' }, _meta: META } };
  const called = await post(url, call, { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'rows' });
  assert.equal(called.status, 200);
  const result = called.answer.result as { resultType: string; structuredContent: { total_rows: number; resource_url: string } };
  assert.equal(result.resultType, 'complete');
  assert.equal(result.structuredContent.total_rows, ROWS.length);
  assert.match(result.structuredContent.resource_url, /\/s2sp\/data\//);

  // The headers must agree with the body (the spec's routing headers): a wrong Mcp-Name is refused.
  const mismatched = await post(url, { ...call, id: 3 }, { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'other' });
  assert.equal(mismatched.status, 400);
  assert.ok(mismatched.answer.error, 'a JSON-RPC error');
});

test('raw HTTP, 2025-11-25: tools/list without a session is answered as plain JSON', async (t) => {
  const url = await startServer(t, 'v2');
  const listed = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(listed.status, 200);
  const names = (listed.answer.result as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort();
  assert.deepEqual(names, ['places', 'rows']);
});

test('sync mode, 2026-07-28: the body travels in the result _meta, never in a block or structuredContent; the dispatcher hands it on', async (t) => {
  const url = await startServer(t, 'v2');
  const client = new V2Client({ name: 'agent-2026', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new V2HttpTransport(new URL(url)));
  t.after(() => client.close());
  const raw = await client.callTool({ name: 'rows', arguments: { abstract_domains: 'mag', mode: 'sync' } });
  const bodyText = (raw._meta as Record<string, unknown> | undefined)?.[SYNC_BODY_META_KEY];
  assert.equal(typeof bodyText, 'string');
  assert.equal((JSON.parse(bodyText as string) as unknown[]).length, ROWS.length);
  const shown = JSON.stringify([raw.content, raw.structuredContent]);
  assert.ok(!shown.includes('place 3'), 'no body value in what a host may show the model');

  const agent = new S2SPClient(client);
  const read = await agent.callTool({ name: 'rows', arguments: { abstract_domains: 'mag', mode: 'sync' } });
  assert.equal(read._meta?.[SYNC_BODY_META_KEY], undefined, 'the dispatcher took the body out of _meta');
  const envelope = JSON.parse((read.content[0] as { text: string }).text) as { resource_url: string };
  assert.ok(isDdiHandle(envelope.resource_url));
  assert.equal((read.structuredContent as { resource_url?: string }).resource_url, envelope.resource_url);
  const consumed = await agent.callTool({ name: 'places', arguments: { abstract_data: '[{"_row_id":7}]', resource_url: envelope.resource_url } });
  assert.deepEqual(JSON.parse((consumed.content[0] as { text: string }).text), { places: ['place 7'] });
});

test('progress, 2026-07-28: notifications flow on the request own stream, growing to the total, before the result', async (t) => {
  const server = new S2SPServer({ name: 'progress', sdk: 'v2' });
  const big = Array.from({ length: 50_000 }, (_, i) => ({ id: i, note: `row ${i} `.repeat(4) }));
  server.resourceTool('big', { description: 'a large table' }, () => big);
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  const client = new V2Client({ name: 'agent-2026', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new V2HttpTransport(new URL(`${url}/mcp`)));
  t.after(() => client.close());
  const seen: { progress: number; total?: number }[] = [];
  let answered = false;
  const result = await client.callTool(
    { name: 'big', arguments: { abstract_domains: 'id' } },
    { onprogress: (update) => (assert.equal(answered, false, 'no notification after the result'), seen.push(update)) },
  );
  answered = true;
  assert.notEqual(result.isError, true);
  assert.ok(seen.length >= 2, `${seen.length} notifications`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, 'progress grows');
  assert.equal(seen.at(-1)?.progress, seen.at(-1)?.total, 'it ends at its total');
});
