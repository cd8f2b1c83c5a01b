/**
 * The consumer-tool wrapper (SPEC 2.2). Exposes exactly the reference's four
 * string parameters, resolves them to merged rows (fetching from the resource
 * server, or reading `body_data`), and hands the handler rows and the same
 * data as an Arrow Table.
 */
import type { Table } from 'apache-arrow';
import * as z from 'zod/v4';
import type { ConsumerArgs } from '../consumer/consumer-args.js';
import { resolveConsumerRows, type ResolvedRows } from '../consumer/resolve.js';
import { resolveConsumerBatches, type ResolveOptions, type ResolvedBatches } from '../consumer/resolve-batches.js';
import { functionOption, invalidOption, nonEmptyStringOption, optionsObject, positiveOption, stringListOption } from '../option-checks.js';
import type { Row } from '../table/rows-from-table.js';
import { registerToolOn, toolCallOf, type McpToolHost, type RegisteredToolOf, type ToolExtra, type ToolResult as CallToolResult } from './tool-host.js';
import type { Listener, ToolFailedEvent } from '../observe.js';
import { jsonToolResult, toolFailureResult } from './tool-results.js';
import { progressReporterFor } from './progress.js';
import { onwardTraceparent, tracedTool } from './tool-span.js';

/** What a consumer handler receives. */
export interface ConsumerInput {
  /** Merged rows in the abstract's order, `_row_id` first. */
  rows: Row[];
  /** The same rows as an Arrow Table. */
  table: Table;
  /** Where the body came from. */
  source: ResolvedRows['source'];
  /** Body bytes that reached this tool: fetched over the data plane, or the size of `body_data`. */
  bytesReceived: number;
}

/** A consumer handler: merged rows in; a tool result, or any JSON value to send as text. */
export type ConsumerToolHandler = (input: ConsumerInput, extra: ToolExtra) => unknown;

/**
 * What a consumer handler that asks for batches (`{ batches: true }`)
 * receives: the body as record batches while they arrive, and the abstract
 * rows beside it, not merged (see resolveConsumerBatches).
 */
export type ConsumerBatchInput = ResolvedBatches;

/**
 * A consumer handler for batches: reads `input.batches` before it returns
 * (a transfer still running then is stopped); a tool result, or any JSON value to send as text.
 */
export type ConsumerBatchToolHandler = (input: ConsumerBatchInput, extra: ToolExtra) => unknown;

/**
 * Options of {@link registerConsumerTool}: what may be fetched, how the
 * handler takes the body, and who hears of unexpected errors. (Each call's
 * progress and cancellation come from the MCP call itself.)
 */
export interface ConsumerToolOptions extends Omit<ResolveOptions, 'observe' | 'signal'> {
  /** `true`: the handler gets record batches as they arrive instead of merged rows. */
  batches?: boolean;
  /** Told of an unexpected error of the resolution or the handler (default: a line on stderr, tokens redacted). */
  observe?: Listener<ToolFailedEvent>;
}

/** Consumer tool metadata (its parameters are fixed by SPEC 2.2). */
export interface ConsumerToolConfig {
  title?: string;
  description?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

const CONSUMER_PARAMS = {
  abstract_data: z
    .string()
    .describe(
      'JSON array of the abstract rows you chose, as the resource tool returned them (each keeps its _row_id; for ' +
        'abstract_format "columns", the header array first), or just their _row_id numbers (e.g. [3,17,42]), or "*" for every row.',
    ),
  resource_url: z.string().optional().describe('The resource_url the resource tool returned (async mode).'),
  body_data: z.string().optional().describe('JSON array of body rows (sync mode; normally filled in by your SDK).'),
  column_mapping: z.string().optional().describe('JSON object renaming columns, e.g. {"event": "alert_type"}.'),
};

/**
 * Registers a consumer tool on `mcp`. With `{ batches: true }` the handler
 * takes record batches as they arrive ({@link ConsumerBatchToolHandler});
 * otherwise merged rows and a Table ({@link ConsumerToolHandler}). An
 * unexpected error (not an S2SPError), of the resolution or of the handler,
 * is logged and answered as `S2SP_ERR_TOOL_FAILED`, naming no internals.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for an allowed origin that is not an http(s) URL, or a limit that is not positive
 */
export function registerConsumerTool<Host extends McpToolHost>(
  mcp: Host,
  name: string,
  config: ConsumerToolConfig,
  handler: ConsumerBatchToolHandler,
  options: ConsumerToolOptions & { batches: true },
): RegisteredToolOf<Host>;
export function registerConsumerTool<Host extends McpToolHost>(
  mcp: Host,
  name: string,
  config: ConsumerToolConfig,
  handler: ConsumerToolHandler,
  options?: ConsumerToolOptions & { batches?: false },
): RegisteredToolOf<Host>;
export function registerConsumerTool<Host extends McpToolHost>(
  mcp: Host,
  name: string,
  config: ConsumerToolConfig,
  handler: ConsumerToolHandler | ConsumerBatchToolHandler,
  options: ConsumerToolOptions = {},
): RegisteredToolOf<Host> {
  nonEmptyStringOption(name, 'name');
  functionOption(handler, 'handler');
  checkConsumerOptions(options);
  const { observe, batches, ...resolveOptions } = options;
  if (batches === true) {
    return registerBatchConsumerTool(mcp, name, config, handler as ConsumerBatchToolHandler, resolveOptions, observe);
  }
  const rowHandler = handler as ConsumerToolHandler;
  const callback = async (args: ConsumerArgs, extra: ToolExtra): Promise<CallToolResult> => {
    // Progress of fetching the body, in bytes, when the caller asked for progress.
    const progress = progressReporterFor(extra, 'fetching the body (bytes)');
    // A cancelled call cuts its fetch: the resource server keeps the token and releases the lease.
    const { signal } = toolCallOf(extra);
    const callOptions: ResolveOptions = {
      ...resolveOptions,
      signal,
      traceparent: onwardTraceparent(extra),
      ...(progress === undefined ? {} : { observe: progress.report }),
    };
    try {
      let resolved: ResolvedRows;
      try {
        resolved = await resolveConsumerRows(args, callOptions);
      } finally {
        await progress?.flush();
      }
      const bytesReceived = resolved.source === 'body_data' ? Buffer.byteLength(args.body_data ?? '') : resolved.bytesReceived;
      const result = await rowHandler({ rows: resolved.rows, table: resolved.table, source: resolved.source, bytesReceived }, extra);
      return isToolResult(result) ? result : jsonToolResult(result);
    } catch (error) {
      return toolFailureResult(error, name, observe);
    }
  };
  return registerToolOn(mcp, name, { ...config, inputSchema: CONSUMER_PARAMS }, tracedTool(name, callback));
}

/** The batch flavour: errors of the transfer, thrown from the batches inside the handler, are tool errors too. */
function registerBatchConsumerTool<Host extends McpToolHost>(
  mcp: Host,
  name: string,
  config: ConsumerToolConfig,
  handler: ConsumerBatchToolHandler,
  options: ResolveOptions,
  observe: Listener<ToolFailedEvent> | undefined,
): RegisteredToolOf<Host> {
  const callback = async (args: ConsumerArgs, extra: ToolExtra): Promise<CallToolResult> => {
    let resolved: ResolvedBatches | undefined;
    // Progress of the body, in bytes, as the handler reads its batches.
    const progress = progressReporterFor(extra, 'fetching the body (bytes)');
    try {
      resolved = await resolveConsumerBatches(args, {
        ...options,
        signal: toolCallOf(extra).signal,
        traceparent: onwardTraceparent(extra),
        ...(progress === undefined ? {} : { observe: progress.report }),
      });
      const result = await handler(resolved, extra);
      return isToolResult(result) ? result : jsonToolResult(result);
    } catch (error) {
      return toolFailureResult(error, name, observe);
    } finally {
      await resolved?.cancel();
      await progress?.flush();
    }
  };
  return registerToolOn(mcp, name, { ...config, inputSchema: CONSUMER_PARAMS }, tracedTool(name, callback));
}

/**
 * Checks a consumer tool's options (also when a server is built with them).
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function checkConsumerOptions(value: ConsumerToolOptions | undefined, name = 'options'): void {
  const options = optionsObject(value, name);
  positiveOption(options.maxBodyBytes, 'maxBodyBytes');
  positiveOption(options.timeoutMs, 'timeoutMs');
  for (const origin of stringListOption(options.allowedOrigins, 'allowedOrigins') ?? []) {
    let protocol: string | undefined;
    try {
      protocol = new URL(origin).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw invalidOption('allowedOrigins', 'a list of http(s) origins', origin);
    }
  }
}

function isToolResult(value: unknown): value is CallToolResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content);
}
