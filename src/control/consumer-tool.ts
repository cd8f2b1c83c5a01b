/**
 * The consumer-tool wrapper (SPEC 2.2). Exposes exactly the reference's four
 * string parameters, resolves them to merged rows (fetching from the resource
 * server, or reading `body_data`), and hands the handler rows and the same
 * data as an Arrow Table.
 */
import type { McpServer, RegisteredTool, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Table } from 'apache-arrow';
import { z } from 'zod';
import type { ConsumerArgs } from '../consumer/consumer-args.js';
import { resolveConsumerRows, type ResolveOptions, type ResolvedRows } from '../consumer/resolve.js';
import { isS2SPError } from '../errors.js';
import type { Row } from '../table/rows-from-table.js';
import type { ToolExtra } from './resource-tool.js';
import { errorToolResult, jsonToolResult } from './tool-results.js';
import { progressReporterFor, type ProgressExtra } from './progress.js';

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

/** Consumer tool metadata (its parameters are fixed by SPEC 2.2). */
export interface ConsumerToolConfig {
  title?: string;
  description?: string;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
}

const CONSUMER_PARAMS = {
  abstract_data: z
    .string()
    .describe('JSON array of the abstract rows you chose (each keeps its _row_id), or "*" for every row of the resource.'),
  resource_url: z.string().optional().describe('The resource_url the resource tool returned (async mode).'),
  body_data: z.string().optional().describe('JSON array of body rows (sync mode; normally filled in by your SDK).'),
  column_mapping: z.string().optional().describe('JSON object renaming columns, e.g. {"event": "alert_type"}.'),
};

/** Registers a consumer tool on `mcp`. */
export function registerConsumerTool(
  mcp: McpServer,
  name: string,
  config: ConsumerToolConfig,
  handler: ConsumerToolHandler,
  options: ResolveOptions = {},
): RegisteredTool {
  return mcp.registerTool(name, { ...config, inputSchema: CONSUMER_PARAMS }, (async (args: ConsumerArgs, extra: ToolExtra) => {
    let resolved: ResolvedRows;
    // Progress of fetching the body, in bytes, when the caller asked for progress.
    const progress = progressReporterFor(extra as ProgressExtra, 'fetching the body (bytes)');
    try {
      resolved = await resolveConsumerRows(args, progress === undefined ? options : { ...options, onProgress: (received, total) => progress.report(received, total) });
    } catch (error) {
      if (isS2SPError(error)) return errorToolResult(error);
      throw error;
    } finally {
      await progress?.flush();
    }
    const bytesReceived = resolved.source === 'body_data' ? Buffer.byteLength(args.body_data ?? '') : resolved.bytesReceived;
    const result = await handler({ rows: resolved.rows, table: resolved.table, source: resolved.source, bytesReceived }, extra);
    return isToolResult(result) ? result : jsonToolResult(result);
  }) as ToolCallback<typeof CONSUMER_PARAMS>);
}

function isToolResult(value: unknown): value is CallToolResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content);
}
