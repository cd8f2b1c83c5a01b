import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type {
  HookCallback,
  HookEvent,
  HookJSONOutput,
  PostToolUseFailureHookInput,
  PostToolUseHookInput,
  PreToolUseHookInput,
} from '@anthropic-ai/claude-agent-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createS2SPHooks, type S2SPHooks } from '../../../src/agent/adapters/claude-agent-sdk.js';
import { S2SPDispatcher } from '../../../src/agent/dispatcher.js';
import { isDdiHandle } from '../../../src/protocol/ddi-handle.js';
import {
  READ_TABLE_ARGS,
  assertConsumerGotBody,
  bodyLeaks,
  startAdapterServers,
  summarizeArgsFrom,
  type AdapterServers,
} from '../../support/adapter-servers.js';

// What Claude Code puts in every hook input besides the event's own fields.
const BASE = { session_id: 'session-1', transcript_path: '/dev/null', cwd: '/' };
const SIGNAL = { signal: new AbortController().signal };
const READ_TABLE = 'mcp__stations__read_table';
const SUMMARIZE = 'mcp__stats__summarize';

/** The first callback registered for `event`. */
function callbackOf(hooks: S2SPHooks, event: HookEvent): HookCallback {
  const callback = hooks[event]?.[0]?.hooks[0];
  assert.ok(callback, `no ${event} hook`);
  return callback;
}

/** The event-specific output of a hook, or undefined when it returned none. */
function specificOf(output: HookJSONOutput): Record<string, unknown> | undefined {
  return 'hookSpecificOutput' in output ? (output.hookSpecificOutput as Record<string, unknown> | undefined) : undefined;
}

/** An SDK client playing the part of Claude Code's MCP connections. */
async function sdkClient(t: TestContext, url: string): Promise<Client> {
  const client = new Client({ name: 'claude-code-stand-in', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => client.close());
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, CallToolResultSchema)) as CallToolResult;
}

/** read_table through the PostToolUse hook: what Claude is shown, as content blocks. */
async function readTable(hooks: S2SPHooks, servers: AdapterServers, t: TestContext, toolUseId = 'toolu_read'): Promise<{ type: string; text: string }[]> {
  const raw = await callTool(await sdkClient(t, servers.resourceMcpUrl), 'read_table', READ_TABLE_ARGS);
  assert.ok(bodyLeaks(JSON.stringify(raw)).length > 0, 'the raw result holds the body');
  const input: PostToolUseHookInput = {
    ...BASE,
    hook_event_name: 'PostToolUse',
    tool_name: READ_TABLE,
    tool_input: READ_TABLE_ARGS,
    tool_response: raw.content,
    tool_use_id: toolUseId,
  };
  const output = await callbackOf(hooks, 'PostToolUse')(input, toolUseId, SIGNAL);
  const shown = specificOf(output)?.updatedMCPToolOutput;
  assert.ok(Array.isArray(shown), 'PostToolUse replaced the MCP output with content blocks');
  return shown as { type: string; text: string }[];
}

test('Claude Agent SDK: hooks show Claude abstracts and a ddi:// handle, and hand the consumer every body column', async (t) => {
  const servers = await startAdapterServers(t);
  const dispatcher = new S2SPDispatcher();
  const hooks = createS2SPHooks({ dispatcher });
  for (const event of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'] as const) assert.equal(hooks[event]?.[0]?.matcher, 'mcp__.*');

  const shown = await readTable(hooks, servers, t);
  assert.deepEqual(bodyLeaks(JSON.stringify(shown)), [], 'body values in what Claude is shown');
  const args = summarizeArgsFrom(shown[0].text);

  const pre: PreToolUseHookInput = { ...BASE, hook_event_name: 'PreToolUse', tool_name: SUMMARIZE, tool_input: args, tool_use_id: 'toolu_sum' };
  const rewrite = specificOf(await callbackOf(hooks, 'PreToolUse')(pre, 'toolu_sum', SIGNAL));
  assert.equal(rewrite?.permissionDecision, 'allow');
  const updatedInput = rewrite?.updatedInput as Record<string, unknown>;
  assert.equal(updatedInput.resource_url, undefined);
  assert.equal(updatedInput.abstract_data, args.abstract_data);

  const result = await callTool(await sdkClient(t, servers.consumerMcpUrl), 'summarize', updatedInput);
  assertConsumerGotBody(servers.received);
  const post: PostToolUseHookInput = {
    ...BASE,
    hook_event_name: 'PostToolUse',
    tool_name: SUMMARIZE,
    tool_input: updatedInput,
    tool_response: result.content,
    tool_use_id: 'toolu_sum',
  };
  assert.deepEqual(await callbackOf(hooks, 'PostToolUse')(post, 'toolu_sum', SIGNAL), {}, 'a result without an envelope passes as is');
  assert.equal(dispatcher.buffer.size, 0, 'the handle was spent');

  // The same handle again: denied before it reaches the consumer, with the code for Claude to act on.
  const again = specificOf(await callbackOf(hooks, 'PreToolUse')({ ...pre, tool_use_id: 'toolu_again' }, 'toolu_again', SIGNAL));
  assert.equal(again?.permissionDecision, 'deny');
  assert.match(String(again?.permissionDecisionReason), /S2SP_ERR_DDI_HANDLE_UNKNOWN/);
});

test('Claude Agent SDK: a consumer call that fails gives its body back to the handle (PostToolUseFailure)', async (t) => {
  const servers = await startAdapterServers(t);
  const dispatcher = new S2SPDispatcher();
  const hooks = createS2SPHooks({ dispatcher });
  const args = summarizeArgsFrom((await readTable(hooks, servers, t))[0].text);
  const pre: PreToolUseHookInput = { ...BASE, hook_event_name: 'PreToolUse', tool_name: SUMMARIZE, tool_input: args, tool_use_id: 'toolu_1' };
  assert.ok(specificOf(await callbackOf(hooks, 'PreToolUse')(pre, 'toolu_1', SIGNAL))?.updatedInput);
  assert.equal(dispatcher.buffer.has(args.resource_url), false, 'taken for the call');

  const failure: PostToolUseFailureHookInput = {
    ...BASE,
    hook_event_name: 'PostToolUseFailure',
    tool_name: SUMMARIZE,
    tool_input: args,
    tool_use_id: 'toolu_1',
    error: 'MCP server "stats" disconnected',
  };
  assert.deepEqual(await callbackOf(hooks, 'PostToolUseFailure')(failure, 'toolu_1', SIGNAL), {});
  assert.ok(dispatcher.buffer.has(args.resource_url), 'restored after the failure');

  // A result flagged isError (a bad column_mapping, say) did not use the body either.
  assert.ok(specificOf(await callbackOf(hooks, 'PreToolUse')({ ...pre, tool_use_id: 'toolu_2' }, 'toolu_2', SIGNAL))?.updatedInput);
  const toolError: PostToolUseHookInput = {
    ...BASE,
    hook_event_name: 'PostToolUse',
    tool_name: SUMMARIZE,
    tool_input: args,
    tool_response: { isError: true, content: [{ type: 'text', text: 'Error S2SP_ERR_CONSUMER_ARG_INVALID' }] },
    tool_use_id: 'toolu_2',
  };
  assert.deepEqual(await callbackOf(hooks, 'PostToolUse')(toolError, 'toolu_2', SIGNAL), {});
  assert.ok(dispatcher.buffer.has(args.resource_url), 'restored after a tool error');

  // The retry delivers the body.
  const retry = specificOf(await callbackOf(hooks, 'PreToolUse')({ ...pre, tool_use_id: 'toolu_3' }, 'toolu_3', SIGNAL));
  await callTool(await sdkClient(t, servers.consumerMcpUrl), 'summarize', retry?.updatedInput as Record<string, unknown>);
  assertConsumerGotBody(servers.received);
});

test('Claude Agent SDK: PostToolUse keeps the shape it was given (text, content blocks, a CallToolResult)', async (t) => {
  const servers = await startAdapterServers(t);
  const dispatcher = new S2SPDispatcher();
  const hooks = createS2SPHooks({ dispatcher });
  const raw = await callTool(await sdkClient(t, servers.resourceMcpUrl), 'read_table', READ_TABLE_ARGS);
  const text = (raw.content[0] as { text: string }).text;
  const post = (response: unknown, id: string): Promise<HookJSONOutput> =>
    callbackOf(hooks, 'PostToolUse')(
      { ...BASE, hook_event_name: 'PostToolUse', tool_name: READ_TABLE, tool_input: READ_TABLE_ARGS, tool_response: response, tool_use_id: id },
      id,
      SIGNAL,
    );

  const asText = specificOf(await post(text, 'toolu_text'))?.updatedMCPToolOutput;
  assert.equal(typeof asText, 'string');
  assert.ok(isDdiHandle(JSON.parse(asText as string).resource_url));

  const asResult = specificOf(await post(raw, 'toolu_result'))?.updatedMCPToolOutput as CallToolResult;
  assert.ok(Array.isArray(asResult.content));
  assert.ok(isDdiHandle(JSON.parse((asResult.content[0] as { text: string }).text).resource_url));

  assert.deepEqual(bodyLeaks(JSON.stringify([asText, asResult])), []);
  assert.equal(dispatcher.buffer.size, 2, 'one handle per result');
  assert.deepEqual(await post('plain text, no envelope', 'toolu_plain'), {});
});

test('Claude Agent SDK: permissionDecision "none" rewrites the input and leaves the decision to the session', async (t) => {
  const servers = await startAdapterServers(t);
  const hooks = createS2SPHooks({ permissionDecision: 'none', matcher: 'mcp__stats__.*|mcp__stations__.*' });
  assert.equal(hooks.PreToolUse?.[0]?.matcher, 'mcp__stats__.*|mcp__stations__.*');
  const args = summarizeArgsFrom((await readTable(hooks, servers, t))[0].text);
  const pre: PreToolUseHookInput = { ...BASE, hook_event_name: 'PreToolUse', tool_name: SUMMARIZE, tool_input: args, tool_use_id: 'toolu_1' };
  const rewrite = specificOf(await callbackOf(hooks, 'PreToolUse')(pre, 'toolu_1', SIGNAL));
  assert.ok(rewrite?.updatedInput);
  assert.equal('permissionDecision' in (rewrite ?? {}), false);
  // A call without a handle is left alone.
  const plain: PreToolUseHookInput = { ...pre, tool_input: { abstract_data: '[]' }, tool_use_id: 'toolu_2' };
  assert.deepEqual(await callbackOf(hooks, 'PreToolUse')(plain, 'toolu_2', SIGNAL), {});
});
