/**
 * Sync mode over real Streamable HTTP on the bundled earthquakes table: the
 * whole body (1.1 MB of body_data) crosses the consumer's /mcp inside one
 * tool call, through the agent's dispatcher. And over the MCP body limit,
 * the client gets a JSON-RPC error it can show, not a bare 413.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { S2SPClient } from '../../src/agent/s2sp-client.js';
import { S2SPDispatcher } from '../../src/agent/dispatcher.js';
import { isDdiHandle } from '../../src/protocol/ddi-handle.js';
import type { S2SPServer } from '../../src/server/s2sp-server.js';
import { createConsumerServer, SUMMARIZE_TOOL } from '../../src/cli/consumer-command.js';
import { createServeServer } from '../../src/cli/serve-command.js';

async function httpClient(t: TestContext, server: S2SPServer, dispatcher: S2SPDispatcher): Promise<S2SPClient> {
  const url = await server.listen({ mcpPath: '/mcp' });
  const client = new Client({ name: 'agent', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  t.after(async () => {
    await client.close();
    await server.close();
  });
  return new S2SPClient(client, dispatcher);
}

function textOf(result: { content: unknown[] }): string {
  return (result.content[0] as { text: string }).text;
}

async function readSync(t: TestContext, dispatcher: S2SPDispatcher) {
  const serve = await httpClient(t, await createServeServer({ transport: 'http', port: 0, tool: 'read_table' }, () => {}), dispatcher);
  const envelope = JSON.parse(textOf(await serve.callTool({ name: 'read_table', arguments: { abstract_domains: 'mag,place', mode: 'sync' } })));
  assert.equal(envelope.total_rows, 1707);
  assert.ok(isDdiHandle(envelope.resource_url), 'the LLM sees a ddi:// handle');
  assert.equal(envelope.body, undefined, 'and no body');
  return envelope as { resource_url: string; abstract: Array<{ _row_id: number; mag: number }> };
}

test('sync mode over HTTP: read_table(mode="sync") then summarize_rows(body_data) on earthquakes, through the dispatcher', async (t) => {
  const dispatcher = new S2SPDispatcher();
  const envelope = await readSync(t, dispatcher);
  const consumer = await httpClient(t, await createConsumerServer({ transport: 'http', port: 0, allowOrigins: [] }), dispatcher);
  const chosen = envelope.abstract.filter((row) => row.mag >= 4);
  assert.ok(chosen.length > 0);
  const result = await consumer.callTool({
    name: SUMMARIZE_TOOL,
    arguments: { abstract_data: JSON.stringify(chosen), resource_url: envelope.resource_url },
  });
  assert.notEqual(result.isError, true, textOf(result).slice(0, 300));
  const summary = JSON.parse(textOf(result));
  assert.equal(summary.transfer.source, 'body_data');
  assert.ok(summary.transfer.bytes > 1_000_000, `body_data of ${summary.transfer.bytes} bytes crossed /mcp`);
  assert.equal(summary.row_count, chosen.length);
});

test('over the MCP body limit, the client gets a JSON-RPC error naming the limit, and the handle stays spendable', async (t) => {
  const dispatcher = new S2SPDispatcher();
  const envelope = await readSync(t, dispatcher);
  const small = await createConsumerServer({ transport: 'http', port: 0, allowOrigins: [], mcpBodyLimit: 100_000 });
  const consumer = await httpClient(t, small, dispatcher);
  const args = { abstract_data: JSON.stringify(envelope.abstract.slice(0, 3)), resource_url: envelope.resource_url };
  const error = await consumer.callTool({ name: SUMMARIZE_TOOL, arguments: args }).then(
    () => assert.fail('the call was accepted'),
    (e: Error & { code?: number }) => e,
  );
  assert.equal(error.code, 413, 'the SDK reports the HTTP status');
  assert.match(error.message, /S2SP_ERR_MCP_BODY_TOO_LARGE/);
  const doc = JSON.parse(error.message.slice(error.message.indexOf('{')));
  assert.equal(doc.jsonrpc, '2.0');
  assert.equal(doc.error.data.code, 'S2SP_ERR_MCP_BODY_TOO_LARGE');
  assert.ok(dispatcher.buffer.size > 0, 'the body waits for a retry');
});
