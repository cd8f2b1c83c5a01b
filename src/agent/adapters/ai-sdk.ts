/**
 * S2SP for the Vercel AI SDK (`ai`): wraps the tool set an MCP client
 * returns (`await mcpClient.tools()`, from `@ai-sdk/mcp` or `ai`'s
 * `experimental_createMCPClient`) so the model sees abstracts and `ddi://`
 * handles, never sync-mode bodies, and a consumer tool called with a handle
 * receives the body as `body_data` (SPEC 2.3).
 *
 *   const tools = withS2SP({ ...(await weather.tools()), ...(await stats.tools()) });
 *   await generateText({ model, tools, stopWhen: stepCountIs(5), prompt });
 *
 * Only types come from `ai`: importing this module loads no framework code.
 */
import type { ToolSet } from 'ai';
import { S2SPDispatcher } from '../dispatcher.js';
import { isCallToolResult } from './tool-output.js';
import { isRecord } from '../../json/is-record.js';

type AnyTool = ToolSet[string];
// Taken from the tool itself: `ToolExecutionOptions` gained a type parameter in ai v7.
type ExecuteOptions = Parameters<NonNullable<AnyTool['execute']>>[1];

/**
 * Wraps every tool of a set with the S2SP dispatcher.
 * @param tools an AI SDK tool set, typically from an MCP client; tools without `execute` pass through
 * @param dispatcher share one between tool sets of several servers, so a handle
 *   minted from one server's result is spent on another's consumer tool; a new one by default
 * @returns a tool set with the same names, schemas and descriptions
 */
export function withS2SP<TOOLS extends ToolSet>(tools: TOOLS, dispatcher: S2SPDispatcher = new S2SPDispatcher()): TOOLS {
  const wrapped: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(tools)) wrapped[name] = withDispatcher(tool, dispatcher);
  return wrapped as TOOLS;
}

function withDispatcher(tool: AnyTool, dispatcher: S2SPDispatcher): AnyTool {
  const execute = tool.execute;
  if (execute === undefined) return tool;
  const run = (input: unknown, options: ExecuteOptions): unknown => {
    const args = isRecord(input) ? dispatcher.beforeToolCall(input) : input;
    let output: unknown;
    try {
      output = execute(args, options);
    } catch (error) {
      restore(dispatcher, args);
      throw error;
    }
    // A streaming tool yields preliminary results; MCP tools never stream, so it passes as is.
    if (isAsyncIterable(output)) return output;
    return Promise.resolve(output).then(
      (value) => afterExecute(dispatcher, args, value),
      (error: unknown) => {
        // The call failed before the tool used the body: the handle stays spendable for a retry.
        restore(dispatcher, args);
        throw error;
      },
    );
  };
  return { ...tool, execute: run } as AnyTool;
}

function afterExecute(dispatcher: S2SPDispatcher, args: unknown, output: unknown): unknown {
  if (isCallToolResult(output)) {
    // A tool error (a bad column_mapping, say) did not use the body: the LLM may retry with the same handle.
    if (output.isError === true) restore(dispatcher, args);
    return dispatcher.afterToolResult(output);
  }
  // With an outputSchema the AI SDK's MCP client returns structuredContent alone: the envelope itself.
  if (isRecord(output)) return dispatcher.afterToolResult({ content: [], structuredContent: output }).structuredContent;
  return output;
}

function restore(dispatcher: S2SPDispatcher, args: unknown): void {
  if (isRecord(args)) dispatcher.restore(args);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
