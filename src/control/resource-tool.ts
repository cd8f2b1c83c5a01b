/**
 * The resource-tool wrapper (SPEC 2.1). Registers a tool on any `McpServer`
 * with the tool's own input schema plus `abstract_domains` and `mode`; the
 * handler returns rows or an Arrow Table, and the wrapper answers plain MCP,
 * or an envelope with the body cached (async) or inline (sync).
 */
import type { McpServer, RegisteredTool, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { Table } from 'apache-arrow';
import { z, type ZodRawShape } from 'zod';
import type { BodyStore } from '../cache/body-store.js';
import { S2SPError, isS2SPError } from '../errors.js';
import { bodyTableOf } from '../table/body-table.js';
import { rowsFromTable } from '../table/rows-from-table.js';
import { tableFromRows } from '../table/table-from-rows.js';
import { checkDomainsExist, parseAbstractDomains } from './abstract-domains.js';
import { DEFAULT_ABSTRACT_ROW_LIMIT, buildEnvelope, dataColumns } from './envelope.js';
import { errorToolResult, jsonToolResult } from './tool-results.js';
import { progressReporterFor, type ProgressExtra } from './progress.js';

/** What a resource tool handler returns: rows (plain objects) or an Arrow Table. */
export type TableResult = readonly Record<string, unknown>[] | Table;

/** The handler's extra argument, as the MCP SDK passes it. */
export type ToolExtra = Parameters<Parameters<McpServer['registerTool']>[2]>[1];

/** A resource tool handler: the tool's own arguments in, a table out. */
export type ResourceToolHandler<Shape extends ZodRawShape> = (
  args: z.objectOutputType<Shape, z.ZodTypeAny>,
  extra: ToolExtra,
) => TableResult | Promise<TableResult>;

/** Tool metadata, as `McpServer.registerTool` takes it. */
export interface ToolConfig<Shape extends ZodRawShape> {
  title?: string;
  description?: string;
  /** The tool's own parameters; `abstract_domains` and `mode` are added. */
  inputSchema?: Shape;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
}

/** What the wrapper needs from its surroundings. */
export interface ResourceToolContext {
  /** Where async bodies are cached. */
  store: BodyStore;
  /** The presigned URL for a token; throws when no data plane is reachable. */
  resourceUrlFor(token: string): string;
  /** Abstract rows per envelope (default 1,000). */
  abstractRowLimit?: number;
}

const ADDED_PARAMS = {
  abstract_domains: z
    .string()
    .optional()
    .describe(
      'S2SP: comma-separated columns (or a JSON array string) to return to you; the other columns stay on the server ' +
        'behind resource_url. Omit for the full table.',
    ),
  mode: z
    .enum(['async', 'sync'])
    .optional()
    .describe('S2SP: "async" (default) caches the body behind resource_url; "sync" returns it inline for your SDK.'),
};

/**
 * Registers a resource tool on `mcp`.
 * @throws Error when the tool's own schema already defines `abstract_domains` or `mode`
 */
export function registerResourceTool<Shape extends ZodRawShape>(
  mcp: McpServer,
  name: string,
  config: ToolConfig<Shape>,
  handler: ResourceToolHandler<Shape>,
  context: ResourceToolContext,
): RegisteredTool {
  const own = config.inputSchema ?? ({} as Shape);
  for (const key of Object.keys(ADDED_PARAMS)) {
    if (key in own) throw new Error(`resource tool ${name}: its input schema must not define "${key}" (S2SP adds it)`);
  }
  const inputSchema = { ...own, ...ADDED_PARAMS };
  const limit = context.abstractRowLimit ?? DEFAULT_ABSTRACT_ROW_LIMIT;
  return mcp.registerTool(name, { ...config, inputSchema }, (async (args: Record<string, unknown>, extra: ToolExtra) => {
    const { abstract_domains: domainsText, mode, ...toolArgs } = args as {
      abstract_domains?: string;
      mode?: 'async' | 'sync';
    } & Record<string, unknown>;
    try {
      const domains = parseAbstractDomains(domainsText);
      const result = await handler(toolArgs as z.objectOutputType<Shape, z.ZodTypeAny>, extra);
      if (domains === undefined) return plainResult(result);
      const table = bodyTableFrom(result);
      checkDomainsExist(domains, dataColumns(table));
      if (mode === 'sync') return jsonToolResult(buildEnvelope(table, domains, { mode: 'sync' }, limit));
      // Progress of caching the body, in bytes, when the caller asked for progress.
      const progress = progressReporterFor(extra as ProgressExtra, 'caching the body (bytes)');
      let token: string;
      try {
        ({ token } = await context.store.put(table, progress === undefined ? undefined : { onProgress: (stored, total) => progress.report(stored, total) }));
      } finally {
        await progress?.flush();
      }
      const resourceUrl = context.resourceUrlFor(token);
      return jsonToolResult(buildEnvelope(table, domains, { mode: 'async', resourceUrl }, limit));
    } catch (error) {
      if (isS2SPError(error)) return errorToolResult(error);
      throw error;
    }
  }) as ToolCallback<typeof inputSchema>);
}

/** Plain MCP (no `abstract_domains`): the rows exactly as the handler returned them. */
function plainResult(result: TableResult): CallToolResult {
  if (Array.isArray(result)) return jsonToolResult(result);
  if (isArrowTable(result)) return jsonToolResult(rowsFromTable(result));
  throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'notTable' });
}

/**
 * The handler's result as a body table with `_row_id` first. The same Table
 * on every call gives the same body object, which the store holds once.
 */
export function bodyTableFrom(result: unknown): Table {
  if (Array.isArray(result)) return tableFromRows(result);
  if (isArrowTable(result)) return bodyTableOf(result);
  throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'notTable' });
}

// Duck-typed as well, so a Table from a second copy of apache-arrow works.
function isArrowTable(value: unknown): value is Table {
  if (value instanceof Table) return true;
  const v = value as { schema?: unknown; batches?: unknown } | null;
  return typeof v === 'object' && v !== null && Array.isArray(v.batches) && typeof v.schema === 'object';
}
