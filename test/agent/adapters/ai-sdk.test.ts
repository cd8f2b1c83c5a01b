import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { withS2SP } from '../../../src/agent/adapters/ai-sdk.js';
import { S2SPDispatcher } from '../../../src/agent/dispatcher.js';
import {
  READ_TABLE_ARGS,
  assertConsumerGotBody,
  bodyLeaks,
  startAdapterServers,
  summarizeArgsFrom,
  type AdapterServers,
} from '../../support/adapter-servers.js';

type MockOptions = NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>;
type DoGenerate = Extract<NonNullable<MockOptions['doGenerate']>, (...args: never[]) => unknown>;
type CallOptions = Parameters<DoGenerate>[0];
type GenerateResult = Awaited<ReturnType<DoGenerate>>;
type Step = (prompt: CallOptions['prompt']) => GenerateResult;

const USAGE: GenerateResult['usage'] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function toolCall(id: string, toolName: string, input: unknown): GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: USAGE,
    warnings: [],
  };
}

function finalText(text: string): GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] };
}

/** The text of the newest tool result for `toolName` in a prompt, as the model reads it. */
function lastToolResultText(prompt: CallOptions['prompt'], toolName: string): { text: string; isError: boolean } {
  for (const message of [...prompt].reverse()) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || part.toolName !== toolName) continue;
      const { output } = part;
      if (output.type === 'content') {
        const text = output.value.map((item) => (item.type === 'text' ? item.text : '')).join('');
        return { text, isError: false };
      }
      if (output.type === 'error-text' || output.type === 'text') return { text: output.value, isError: output.type === 'error-text' };
      if (output.type === 'json' || output.type === 'error-json') return { text: JSON.stringify(output.value), isError: output.type === 'error-json' };
      return { text: JSON.stringify(output), isError: true };
    }
  }
  throw new Error(`no ${toolName} result in the prompt`);
}

/** A MockLanguageModelV3 that plays `steps` in order; each sees the prompt it was sent. */
function scriptedModel(steps: Step[]): MockLanguageModelV3 {
  let next = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const step = steps[next++];
      if (step === undefined) throw new Error('the scripted model ran out of steps');
      return step(options.prompt);
    },
  });
}

async function mcpTools(t: TestContext, servers: AdapterServers): Promise<ToolSet> {
  const resource = await createMCPClient({ transport: { type: 'http', url: servers.resourceMcpUrl } });
  t.after(() => resource.close());
  const consumer = await createMCPClient({ transport: { type: 'http', url: servers.consumerMcpUrl } });
  t.after(() => consumer.close());
  return { ...(await resource.tools()), ...(await consumer.tools()) };
}

test('AI SDK: the model reads abstracts and a ddi:// handle, never a body; the consumer gets every body column', async (t) => {
  const servers = await startAdapterServers(t);
  const dispatcher = new S2SPDispatcher();
  const tools = withS2SP(await mcpTools(t, servers), dispatcher);
  const model = scriptedModel([
    () => toolCall('call-1', 'read_table', READ_TABLE_ARGS),
    (prompt) => toolCall('call-2', 'summarize', summarizeArgsFrom(lastToolResultText(prompt, 'read_table').text)),
    (prompt) => finalText(`summary: ${lastToolResultText(prompt, 'summarize').text}`),
  ]);

  const result = await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: 'Summarize the northern stations.' });

  assert.equal(model.doGenerateCalls.length, 3);
  assert.match(result.text, /"rows":3/);
  const sent = JSON.stringify(model.doGenerateCalls);
  assert.match(sent, /ddi:\/\//, 'the model saw the handle');
  assert.match(sent, /station-4/, 'the model saw the abstract');
  assert.deepEqual(bodyLeaks(sent), [], 'body values in what the model was sent');
  assertConsumerGotBody(servers.received);
  assert.equal(dispatcher.buffer.size, 0, 'the handle was spent');
});

test('AI SDK: without withS2SP the same run puts the body in front of the model', async (t) => {
  const servers = await startAdapterServers(t);
  const tools = await mcpTools(t, servers);
  const model = scriptedModel([() => toolCall('call-1', 'read_table', READ_TABLE_ARGS), () => finalText('done')]);
  await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Read the stations.' });
  assert.equal(bodyLeaks(JSON.stringify(model.doGenerateCalls)).length > 0, true, 'the leak check sees a body');
});

test('AI SDK: a consumer call that fails keeps the handle, and the retry delivers the body', async (t) => {
  const servers = await startAdapterServers(t);
  const dispatcher = new S2SPDispatcher();
  const tools = withS2SP(await mcpTools(t, servers), dispatcher);
  let handle = '';
  const model = scriptedModel([
    () => toolCall('call-1', 'read_table', READ_TABLE_ARGS),
    (prompt) => {
      const args = summarizeArgsFrom(lastToolResultText(prompt, 'read_table').text);
      handle = args.resource_url;
      return toolCall('call-2', 'summarize', { ...args, column_mapping: '{not json' });
    },
    (prompt) => {
      const failed = lastToolResultText(prompt, 'summarize');
      assert.match(failed.text, /S2SP_ERR_CONSUMER_ARG_INVALID/);
      assert.ok(dispatcher.buffer.has(handle), 'the handle survived the failed call');
      return toolCall('call-3', 'summarize', summarizeArgsFrom(lastToolResultText(prompt, 'read_table').text));
    },
    () => finalText('done'),
  ]);

  await generateText({ model, tools, stopWhen: stepCountIs(6), prompt: 'Summarize the northern stations.' });

  assert.equal(model.doGenerateCalls.length, 4);
  assertConsumerGotBody(servers.received);
  assert.deepEqual(bodyLeaks(JSON.stringify(model.doGenerateCalls)), []);
  assert.equal(dispatcher.buffer.size, 0);
});

test('AI SDK: with an outputSchema the tool returns the envelope object, and the sync body never reaches it', async (t) => {
  const servers = await startAdapterServers(t);
  const client = await createMCPClient({ transport: { type: 'http', url: servers.resourceMcpUrl } });
  t.after(() => client.close());
  const schemas = {
    read_table: {
      inputSchema: z.object({ abstract_domains: z.string().optional(), mode: z.enum(['async', 'sync']).optional() }),
      outputSchema: z.object({ abstract: z.array(z.record(z.string(), z.unknown())) }).passthrough(),
    },
  };
  const dispatcher = new S2SPDispatcher();
  const tools = withS2SP(await client.tools({ schemas }), dispatcher);
  const model = scriptedModel([() => toolCall('call-1', 'read_table', READ_TABLE_ARGS), () => finalText('done')]);

  const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Read the stations.' });

  const output = result.steps[0]?.toolResults[0]?.output as Record<string, unknown> | undefined;
  assert.ok(Array.isArray(output?.abstract), 'the tool output is the envelope object');
  assert.equal(output?.body, undefined);
  // structuredContent never holds a sync body (a host may show it to the model), and with an
  // outputSchema the AI SDK keeps structuredContent alone: such a tool gets the abstract, no handle
  // (README: use async mode there).
  assert.equal(output?.resource_url, undefined);
  assert.deepEqual(bodyLeaks(JSON.stringify(model.doGenerateCalls)), []);
});
