/**
 * S2SP for LangChain.js: the `beforeToolCall` / `afterToolCall` hooks of
 * `@langchain/mcp-adapters`, so the model sees abstracts and `ddi://`
 * handles, never sync-mode bodies, and a consumer tool called with a handle
 * receives the body as `body_data` (SPEC 2.3).
 *
 *   const client = new MultiServerMCPClient({ mcpServers, ...createS2SPToolHooks() });
 *   const agent = createAgent({ model, tools: await client.getTools() });
 *
 * The hooks also fit `loadMcpTools(name, client, { ...createS2SPToolHooks(dispatcher) })`.
 * Only types come from the framework: importing this module loads none of it.
 *
 * LangChain turns a tool error into an exception before `afterToolCall`
 * runs, so unlike S2SPClient these hooks cannot put a handle back after a
 * failed consumer call: the failed call spends it, and the error the LLM
 * gets on reuse tells it to call the resource tool again.
 */
import type { LoadMcpToolsOptions } from '@langchain/mcp-adapters';
import { S2SPDispatcher } from '../dispatcher.js';
import { withholdBodies } from './tool-output.js';
import { isRecord } from '../../json/is-record.js';

/** The two tool-call hooks, ready to spread into `MultiServerMCPClient` or `loadMcpTools` options. */
export type S2SPToolHooks = Required<Pick<LoadMcpToolsOptions, 'beforeToolCall' | 'afterToolCall'>>;

type AfterToolCall = S2SPToolHooks['afterToolCall'];
type ToolCallResult = Parameters<AfterToolCall>[0];
type ToolContent = ToolCallResult['result'][0];
type ContentBlock = Exclude<ToolContent, string>[number];

/**
 * Creates the S2SP tool-call hooks.
 * @param dispatcher share one between clients of several servers, so a handle
 *   minted from one server's result is spent on another's consumer tool; a new one by default
 */
export function createS2SPToolHooks(dispatcher: S2SPDispatcher = new S2SPDispatcher()): S2SPToolHooks {
  return {
    beforeToolCall: ({ args }) => {
      if (!isRecord(args)) return undefined;
      const delivered = dispatcher.beforeToolCall(args);
      if (delivered === args) return undefined;
      // LangChain merges these into the LLM's arguments (Object.assign), so the handle is
      // cleared explicitly; an undefined value is dropped when the request is serialised.
      return { args: { ...delivered, resource_url: undefined } };
    },
    afterToolCall: (call) => {
      const [content, artifacts] = call.result;
      const withheld = typeof content === 'string' ? withholdBodies(dispatcher, content) : withheldBlocks(dispatcher, content);
      if (withheld === undefined) return undefined;
      // The artifacts LangChain passes here already leave out structuredContent, the body's other copy.
      return { ...call, result: [withheld as ToolContent, artifacts] };
    },
  };
}

/**
 * A text block carries the tool's structuredContent beside its text when the
 * server sent one; both copies of the envelope get the same handle.
 */
function withheldBlocks(dispatcher: S2SPDispatcher, blocks: ContentBlock[]): ContentBlock[] | undefined {
  let changed = false;
  const out = blocks.map((block) => {
    if (block.type !== 'text' || typeof block.text !== 'string') return block;
    const { structuredContent } = block as { structuredContent?: unknown };
    const input = { content: [{ type: 'text' as const, text: block.text }], ...(isRecord(structuredContent) ? { structuredContent } : {}) };
    const result = dispatcher.afterToolResult(input);
    if (result === input) return block;
    changed = true;
    const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
    return { ...block, text, ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }) };
  });
  return changed ? out : undefined;
}
