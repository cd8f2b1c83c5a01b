import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { isDdiHandle } from '../../src/protocol/ddi-handle.js';
import { S2SPDispatcher } from '../../src/agent/dispatcher.js';
import { S2SPClient } from '../../src/agent/s2sp-client.js';
import { connectInMemory } from '../support/in-memory-client.js';

const ENVELOPE = {
  total_rows: 3,
  columns: ['event', 'description'],
  abstract_domains: ['event'],
  body_domains: ['description'],
  abstract: [
    { _row_id: 0, event: 'Wind' },
    { _row_id: 1, event: 'Flood' },
    { _row_id: 2, event: 'Wind' },
  ],
  body: [
    { _row_id: 0, description: 'secret gusts' },
    { _row_id: 1, description: 'secret river' },
    { _row_id: 2, description: 'secret storm' },
  ],
};

interface Servers {
  echoCalls: Record<string, unknown>[];
}

/** An McpServer with a sync-mode resource tool and/or an echo consumer tool, connected in memory. */
async function connect(t: TestContext, tools: { resource?: boolean; echo?: boolean }, seen: Servers): Promise<Client> {
  const server = new McpServer({ name: 'test-server', version: '1.0.0' });
  if (tools.resource) {
    server.registerTool('get_alerts', { description: 'sync-mode resource tool', inputSchema: { area: z.string() } }, async () => ({
      content: [{ type: 'text', text: JSON.stringify(ENVELOPE) }],
    }));
  }
  if (tools.echo) {
    server.registerTool(
      'echo',
      {
        description: 'consumer tool echoing its arguments',
        inputSchema: { abstract_data: z.string(), resource_url: z.string().optional(), body_data: z.string().optional() },
      },
      async (args) => {
        seen.echoCalls.push(args);
        return { content: [{ type: 'text', text: JSON.stringify(args) }] };
      },
    );
  }
  return connectInMemory(server, t);
}

test('the LLM sees a ddi:// handle and no body; the echo tool receives body_data once', async (t) => {
  const seen: Servers = { echoCalls: [] };
  const s2sp = new S2SPClient(await connect(t, { resource: true, echo: true }, seen));
  assert.ok(s2sp.client instanceof Client);
  assert.ok(s2sp.dispatcher instanceof S2SPDispatcher);

  const result = await s2sp.callTool({ name: 'get_alerts', arguments: { area: 'CA' } });
  const text = (result.content[0] as { type: 'text'; text: string }).text;
  assert.ok(!text.includes('secret'));
  const visible = JSON.parse(text);
  assert.equal(visible.body, undefined);
  assert.ok(isDdiHandle(visible.resource_url));
  assert.deepEqual(visible.abstract, ENVELOPE.abstract);

  const chosen = visible.abstract.filter((row: { event: string }) => row.event === 'Wind');
  const args = { abstract_data: JSON.stringify(chosen), resource_url: visible.resource_url };
  const echoed = await s2sp.callTool({ name: 'echo', arguments: args });
  const received = JSON.parse((echoed.content[0] as { text: string }).text);
  assert.equal(received.resource_url, undefined);
  assert.equal(received.abstract_data, JSON.stringify(chosen));
  assert.deepEqual(JSON.parse(received.body_data), ENVELOPE.body);
  assert.equal(s2sp.dispatcher.buffer.size, 0, 'the handle is used up');

  await assert.rejects(s2sp.callTool({ name: 'echo', arguments: args }), { code: 'S2SP_ERR_DDI_HANDLE_UNKNOWN' });
  assert.equal(seen.echoCalls.length, 1, 'a used handle never reaches the server');
});

test('calls without envelopes or handles pass through unchanged', async (t) => {
  const seen: Servers = { echoCalls: [] };
  const s2sp = new S2SPClient(await connect(t, { echo: true }, seen));
  const args = { abstract_data: '[]', resource_url: 'http://127.0.0.1:9001/s2sp/data/abc' };
  const result = await s2sp.callTool({ name: 'echo', arguments: args });
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), args);
  assert.deepEqual(seen.echoCalls, [args]);
});

test('two clients sharing one dispatcher: a handle from one server is spent on the other', async (t) => {
  const seen: Servers = { echoCalls: [] };
  const dispatcher = new S2SPDispatcher();
  const weather = new S2SPClient(await connect(t, { resource: true }, seen), dispatcher);
  const stats = new S2SPClient(await connect(t, { echo: true }, seen), dispatcher);
  assert.equal(weather.dispatcher, stats.dispatcher);

  const visible = JSON.parse(((await weather.callTool({ name: 'get_alerts', arguments: { area: 'CA' } })).content[0] as { text: string }).text);
  const echoed = await stats.callTool({ name: 'echo', arguments: { abstract_data: '*', resource_url: visible.resource_url } });
  const received = JSON.parse((echoed.content[0] as { text: string }).text);
  assert.deepEqual(JSON.parse(received.body_data), ENVELOPE.body);
  assert.equal(dispatcher.buffer.size, 0);
});

test('a consumer call that errors keeps the ddi:// handle for a retry (single use is committed on success)', async (t) => {
  const seen: Servers = { echoCalls: [] };
  const dispatcher = new S2SPDispatcher();
  const resource = new S2SPClient(await connect(t, { resource: true }, seen), dispatcher);
  const visible = JSON.parse(((await resource.callTool({ name: 'get_alerts', arguments: { area: 'CA' } })).content[0] as { text: string }).text);

  // A tool that fails (isError) did not use the body.
  const failing = new McpServer({ name: 'failing', version: '1.0.0' });
  failing.registerTool('consume', { inputSchema: { abstract_data: z.string(), body_data: z.string().optional() } }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'bad column_mapping' }],
  }));
  const failingClient = await connectInMemory(failing, t);
  const consumer = new S2SPClient(failingClient, dispatcher);
  const result = await consumer.callTool({ name: 'consume', arguments: { abstract_data: '*', resource_url: visible.resource_url } });
  assert.equal(result.isError, true);
  assert.ok(dispatcher.buffer.has(visible.resource_url), 'handle restored after a tool error');

  // A transport that fails mid-call did not deliver the body either.
  await failingClient.close();
  await assert.rejects(consumer.callTool({ name: 'consume', arguments: { abstract_data: '*', resource_url: visible.resource_url } }));
  assert.ok(dispatcher.buffer.has(visible.resource_url), 'handle restored after a transport failure');

  // The retry on a working consumer spends it.
  const echo = new S2SPClient(await connect(t, { echo: true }, seen), dispatcher);
  await echo.callTool({ name: 'echo', arguments: { abstract_data: '*', resource_url: visible.resource_url } });
  assert.equal(dispatcher.buffer.has(visible.resource_url), false);
  assert.deepEqual(JSON.parse(String(seen.echoCalls[0].body_data)), ENVELOPE.body);
});
