/**
 * An MCP client that applies the S2SP dispatcher (SPEC 2.3) around every
 * tool call: sync-mode bodies never reach the caller (the LLM), and `ddi://`
 * handles in a consumer call become `body_data` on the way out.
 *
 * An agent talking to several servers wraps each server's Client in its own
 * S2SPClient and passes them one shared dispatcher, so a handle minted from
 * one server's result can be spent on another server's consumer tool.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPDispatcher } from './dispatcher.js';

/** The SDK Client with the S2SP dispatcher around `callTool`. */
export class S2SPClient {
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
  async callTool(params: { name: string; arguments?: Record<string, unknown> }, options?: RequestOptions): Promise<CallToolResult> {
    const args = this.dispatcher.beforeToolCall(params.arguments);
    const request = args === undefined ? { ...params } : { ...params, arguments: args };
    // With CallToolResultSchema the SDK never returns the legacy `toolResult` shape.
    let result: CallToolResult;
    try {
      result = (await this.client.callTool(request, CallToolResultSchema, options)) as CallToolResult;
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
