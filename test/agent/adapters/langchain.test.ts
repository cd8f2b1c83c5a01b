import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel, type FakeBuiltModel } from '@langchain/core/testing';
import { MultiServerMCPClient, loadMcpTools } from '@langchain/mcp-adapters';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createAgent } from 'langchain';
import { createS2SPToolHooks } from '../../../src/agent/adapters/langchain.js';
import { S2SPDispatcher } from '../../../src/agent/dispatcher.js';
import { connectInMemory } from '../../support/in-memory-client.js';
import {
  READ_TABLE_ARGS,
  TABLE_ROWS,
  assertConsumerGotBody,
  bodyLeaks,
  startAdapterServers,
  summarizeArgsFrom,
  type AdapterServers,
} from '../../support/adapter-servers.js';

function toolCall(id: string, name: string, args: Record<string, unknown>): AIMessage {
  return new AIMessage({ content: '', tool_calls: [{ id, name, args, type: 'tool_call' }] });
}

/** The newest ToolMessage from `name` the model was sent. */
function lastToolMessage(messages: BaseMessage[], name: string): ToolMessage {
  const message = [...messages].reverse().find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.name === name);
  if (message === undefined) throw new Error(`no ${name} result in the messages`);
  return message;
}

/** The text of the newest ToolMessage from `name`, as the model reads it. */
function lastToolText(messages: BaseMessage[], name: string): string {
  return lastToolMessage(messages, name).text;
}

function mcpClient(t: TestContext, servers: AdapterServers, hooks: Partial<ReturnType<typeof createS2SPToolHooks>>): MultiServerMCPClient {
  const client = new MultiServerMCPClient({
    mcpServers: {
      stations: { transport: 'http', url: servers.resourceMcpUrl },
      stats: { transport: 'http', url: servers.consumerMcpUrl },
    },
    ...hooks,
  });
  t.after(() => client.close());
  return client;
}

/** Everything the fake model was sent: the messages of each call and the tools bound to it. */
function sentToModel(model: FakeBuiltModel): string {
  return JSON.stringify(model.calls.map((call) => ({ messages: call.messages.map((m) => ({ type: m.type, content: m.content })), options: call.options })));
}

test('LangChain: the agent model reads abstracts and a ddi:// handle, never a body; the consumer gets every body column', async (t) => {
  const servers = await startAdapterServers(t);
  const dispatcher = new S2SPDispatcher();
  const client = mcpClient(t, servers, createS2SPToolHooks(dispatcher));
  const model = fakeModel()
    .respond(() => toolCall('call-1', 'read_table', READ_TABLE_ARGS))
    .respond((messages) => toolCall('call-2', 'summarize', summarizeArgsFrom(lastToolText(messages, 'read_table'))))
    .respond((messages) => new AIMessage(`summary: ${lastToolText(messages, 'summarize')}`));
  const agent = createAgent({ model, tools: await client.getTools() });

  const state = await agent.invoke({ messages: [{ role: 'user', content: 'Summarize the northern stations.' }] });

  assert.equal(model.callCount, 3);
  assert.match(state.messages.at(-1)?.text ?? '', /"rows":3/);
  const sent = sentToModel(model);
  assert.match(sent, /ddi:\/\//, 'the model saw the handle');
  assert.match(sent, /station-4/, 'the model saw the abstract');
  assert.deepEqual(bodyLeaks(sent), [], 'body values in what the model was sent');
  // The agent's state (messages, artifacts) holds no body either.
  assert.deepEqual(bodyLeaks(JSON.stringify(state.messages)), []);
  assertConsumerGotBody(servers.received);
  assert.equal(dispatcher.buffer.size, 0, 'the handle was spent');
});

test('LangChain: without the hooks the same run puts the body in front of the model', async (t) => {
  const servers = await startAdapterServers(t);
  const client = mcpClient(t, servers, {});
  const model = fakeModel()
    .respond(() => toolCall('call-1', 'read_table', READ_TABLE_ARGS))
    .respond(() => new AIMessage('done'));
  const agent = createAgent({ model, tools: await client.getTools() });
  await agent.invoke({ messages: [{ role: 'user', content: 'Read the stations.' }] });
  assert.equal(bodyLeaks(sentToModel(model)).length > 0, true, 'the leak check sees a body');
});

test('LangChain: a spent handle reaches no server and comes back to the model as a tool error', async (t) => {
  const servers = await startAdapterServers(t);
  const client = mcpClient(t, servers, createS2SPToolHooks());
  let args: { abstract_data: string; resource_url: string } | undefined;
  const model = fakeModel()
    .respond(() => toolCall('call-1', 'read_table', READ_TABLE_ARGS))
    .respond((messages) => {
      args = summarizeArgsFrom(lastToolText(messages, 'read_table'));
      return toolCall('call-2', 'summarize', args);
    })
    .respond(() => toolCall('call-3', 'summarize', args ?? {}))
    .respond(() => new AIMessage('done'));
  const agent = createAgent({ model, tools: await client.getTools() });

  await agent.invoke({ messages: [{ role: 'user', content: 'Summarize twice.' }] });

  assert.equal(servers.received.length, 1, 'only the first call reached the consumer');
  const reused = model.calls[3]?.messages ?? [];
  const answer = lastToolMessage(reused, 'summarize');
  assert.equal(answer.status, 'error', 'the model was told the call failed');
  assert.equal(answer.tool_call_id, 'call-3');
});

test('LangChain: loadMcpTools with the hooks withholds the body from text and structuredContent alike, under one handle', async (t) => {
  // A hand-made server that sends the envelope twice, as SPEC 2.1 has it: text and structuredContent.
  const envelope = {
    total_rows: TABLE_ROWS.length,
    abstract: TABLE_ROWS.map(({ id }, i) => ({ _row_id: i, id })),
    body: TABLE_ROWS.map(({ description, reading, detail }, i) => ({ _row_id: i, description, reading, detail })),
  };
  const server = new McpServer({ name: 'stations', version: '1.0.0' });
  server.registerTool(
    'read_table',
    { inputSchema: { mode: z.string().optional() }, outputSchema: { total_rows: z.number(), abstract: z.array(z.unknown()), body: z.array(z.unknown()) } },
    async () => ({
      content: [{ type: 'text', text: JSON.stringify(envelope) }],
      structuredContent: envelope,
    }),
  );
  const dispatcher = new S2SPDispatcher();
  const [tool] = await loadMcpTools('stations', await connectInMemory(server, t), createS2SPToolHooks(dispatcher));

  const message: unknown = await tool.invoke({ id: 'call-1', name: 'read_table', args: { mode: 'sync' }, type: 'tool_call' });

  assert.ok(ToolMessage.isInstance(message));
  const dump = JSON.stringify({ content: message.content, artifact: message.artifact });
  assert.deepEqual(bodyLeaks(dump), [], 'body values in the ToolMessage');
  assert.equal(dispatcher.buffer.size, 1, 'one handle for both copies');
  const [block] = message.content as unknown as { text: string; structuredContent: { resource_url: string } }[];
  assert.equal(JSON.parse(block.text).resource_url, block.structuredContent.resource_url);
  assert.ok(dispatcher.buffer.has(block.structuredContent.resource_url));
});
