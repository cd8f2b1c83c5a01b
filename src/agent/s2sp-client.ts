/**
 * An MCP client that applies the S2SP dispatcher (SPEC 2.3) around every
 * tool call: sync-mode bodies never reach the caller (the LLM), and `ddi://`
 * handles in a consumer call become `body_data` on the way out.
 *
 * An agent talking to several servers wraps each server's Client in its own
 * S2SPClient and passes them one shared dispatcher, so a handle minted from
 * one server's result can be spent on another server's consumer tool.
 */
import type { ToolResult as CallToolResult } from '../control/tool-host.js';
import { S2SPDispatcher } from './dispatcher.js';

/**
 * An MCP SDK Client of either line, as far as s2sp calls it: v2's
 * `callTool(params, options)` (it has `discover`) or v1's
 * `callTool(params, resultSchema, options)`.
 */
export interface McpToolClient {
  callTool(params: never, ...rest: never[]): Promise<unknown>;
}

/** Request options (timeout, signal, progress), passed to the SDK as they are. */
export type ToolCallOptions = Record<string, unknown>;

/**
 * The SDK Client with the S2SP dispatcher around `callTool`. `Client` is
 * the wrapped client's own type (SDK v2 or v1).
 */
export class S2SPClient<Client extends McpToolClient = McpToolClient> {
  /** The wrapped SDK client, for everything other than tool calls. */
  readonly client: Client;
  /** The dispatcher, possibly shared with other S2SPClients. */
  readonly dispatcher: S2SPDispatcher;

  /**
   * @param client a connected (or soon connected) SDK Client
   * @param dispatcher share one between clients of several servers; a new one by default
   */
  constructor(client: Client, dispatcher: S2SPDispatcher = new S2SPDispatcher()) {
    this.client = client;
    this.dispatcher = dispatcher;
  }

  /**
   * Calls a tool through the dispatcher.
   * @param params tool name and arguments as the LLM chose them
   * @param options SDK request options (timeout, signal, progress)
   * @returns the result as the LLM should see it: sync-mode bodies replaced by `ddi://` handles
   * @throws S2SPError `S2SP_ERR_DDI_HANDLE_UNKNOWN` for an unknown or used handle; SDK errors as is
   */
  async callTool(params: { name: string; arguments?: Record<string, unknown> }, options?: ToolCallOptions): Promise<CallToolResult> {
    const args = this.dispatcher.beforeToolCall(params.arguments);
    const request = args === undefined ? { ...params } : { ...params, arguments: args };
    let result: CallToolResult;
    try {
      result = await callToolOn(this.client, request, options);
    } catch (error) {
      // The transport failed: the handle stays spendable for a retry.
      this.dispatcher.restore(args);
      throw error;
    }
    // A tool error (bad column_mapping, say) did not use the body: let the LLM retry with the same handle.
    if (result.isError) this.dispatcher.restore(args);
    return this.dispatcher.afterToolResult(result);
  }
}

/**
 * One tool call on either SDK line. v1's default result schema is its
 * `CallToolResultSchema`, so it never returns the legacy `toolResult` shape.
 */
async function callToolOn(
  client: McpToolClient,
  request: { name: string; arguments?: Record<string, unknown> },
  options: ToolCallOptions | undefined,
): Promise<CallToolResult> {
  const call = client.callTool.bind(client) as unknown as (...args: unknown[]) => Promise<CallToolResult>;
  const isV2 = typeof (client as { discover?: unknown }).discover === 'function';
  return isV2 ? call(request, options) : call(request, undefined, options);
}
