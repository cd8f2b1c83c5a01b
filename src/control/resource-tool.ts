/**
 * The resource-tool wrapper (SPEC 2.1). Registers a tool on any `McpServer`
 * with the tool's own input schema plus `abstract_domains`, `mode` and
 * `abstract_format`; the
 * handler returns rows or an Arrow Table, and the wrapper answers plain MCP,
 * or an envelope with the body cached (async) or inline (sync).
 */
import { Table } from 'apache-arrow';
import { isRecordBatchSource, openBodyBatches, tableFromBatchStream, type RecordBatchSource } from '../table/batch-stream.js';
import type { BodyStore, PutResult } from '../cache/body-store.js';
import { S2SPError } from '../errors.js';
import { functionOption, integerOption, invalidOption, nonEmptyStringOption, optionsObject, storeOption } from '../option-checks.js';
import { ABSTRACT_FORMATS, type AbstractFormat } from '../protocol/abstract-format.js';
import { SYNC_BODY_META_KEY } from '../protocol/sync-body-meta.js';
import { bodyTableOf } from '../table/body-table.js';
import { stringifyJsonExact } from '../json/exact-json.js';
import { tableFromRows } from '../table/table-from-rows.js';
import { checkDomainsExist, parseAbstractDomains } from './abstract-domains.js';
import { DEFAULT_ABSTRACT_ROW_LIMIT, bodyText, buildEnvelope, dataColumns, envelopeText, rowsText, type AnyEnvelope } from './envelope.js';
import { RESOURCE_TOOL_OUTPUT_SCHEMA } from './envelope-schema.js';
import type { Listener, ToolFailedEvent } from '../observe.js';
import { toolFailureResult } from './tool-results.js';
import { ZOD_FLAVOURS, flavourOf, rawShapeOf, type ShapeOutput, type ZodFlavour, type ZodObjectOf, type ZodRawShapeCompat } from './zod-flavour.js';
import { progressReporterFor } from './progress.js';
import { tracedPut, tracedTool } from './tool-span.js';
import { registerToolOn, toolCallOf, type McpToolHost, type RegisteredToolOf, type ToolExtra, type ToolResult as CallToolResult } from './tool-host.js';

/**
 * What a resource tool handler returns: rows (plain objects), an Arrow Table,
 * or Arrow record batches as they are produced (an `AsyncIterable<RecordBatch>`,
 * e.g. an arrow-js `RecordBatchReader`), cached batch by batch.
 */
export type TableResult = readonly Record<string, unknown>[] | Table | RecordBatchSource;

/** A resource tool handler: the tool's own arguments (parsed by its zod 3 or zod 4 shape) in, a table out. */
export type ResourceToolHandler<Shape extends ZodRawShapeCompat> = (args: ShapeOutput<Shape>, extra: ToolExtra) => TableResult | Promise<TableResult>;

/** Tool metadata, as `McpServer.registerTool` takes it. */
export interface ToolConfig<Shape extends ZodRawShapeCompat> {
  title?: string;
  /** What the tool does; a sentence on how long a resource_url lives is appended. */
  description?: string;
  /**
   * The tool's own parameters: a zod 3 or zod 4 raw shape, or (SDK v2 style)
   * a zod 4 `z.object(...)`; `abstract_domains`, `mode` and `abstract_format` are added.
   */
  inputSchema?: Shape | ZodObjectOf<Shape>;
  annotations?: Record<string, unknown>;
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
  /** Told of an unexpected error of the handler (default: a line on stderr, tokens redacted). */
  observe?: Listener<ToolFailedEvent>;
  /** How long a cached body lives in ms, told to the LLM in the tool description (default: the store's `ttlMs`). */
  ttlMs?: number;
}

const DOMAINS_TEXT =
  'S2SP: comma-separated columns (or a JSON array string) to return to you; the other columns stay on the server ' +
  'behind resource_url. Omit for the full table.';
const MODE_TEXT = 'S2SP: "async" (default) caches the body behind resource_url; "sync" returns it inline for your SDK.';
const MODES = ['async', 'sync'] as const;
const FORMAT_TEXT =
  'S2SP: "rows" (default) returns abstract rows as objects; "columns" returns the column names once, then one array per ' +
  'row (fewer tokens). A consumer tool takes either, or just the chosen _row_id numbers.';

/** The parameters S2SP adds to a tool's own, in each zod flavour (the SDK refuses a shape that mixes them). */
const ADDED_PARAMS: Record<ZodFlavour, ZodRawShapeCompat> = {
  v3: {
    abstract_domains: ZOD_FLAVOURS.v3.string().optional().describe(DOMAINS_TEXT),
    mode: ZOD_FLAVOURS.v3.enum(MODES).optional().describe(MODE_TEXT),
    abstract_format: ZOD_FLAVOURS.v3.enum(ABSTRACT_FORMATS).optional().describe(FORMAT_TEXT),
  },
  v4: {
    abstract_domains: ZOD_FLAVOURS.v4.string().optional().describe(DOMAINS_TEXT),
    mode: ZOD_FLAVOURS.v4.enum(MODES).optional().describe(MODE_TEXT),
    abstract_format: ZOD_FLAVOURS.v4.enum(ABSTRACT_FORMATS).optional().describe(FORMAT_TEXT),
  },
};

/**
 * Registers a resource tool on `mcp`. The tool declares an `outputSchema`
 * and answers with `structuredContent` as well as the text block (SPEC 2.1).
 *
 * A call that fails leaves nothing in the store: a body cached before the
 * failure is revoked. An unexpected error (not an S2SPError) is logged and
 * answered as `S2SP_ERR_TOOL_FAILED`, naming no internals.
 * @param context where bodies go: a store and its resource_urls (a `createDataPlane` handle fits)
 * @throws Error when the tool's own schema already defines `abstract_domains`, `mode` or `abstract_format`
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for a missing or wrong-typed name, handler, store or
 *   resourceUrlFor, or an abstract row limit that is not a positive integer
 */
export function registerResourceTool<Shape extends ZodRawShapeCompat, Host extends McpToolHost>(
  mcp: Host,
  name: string,
  config: ToolConfig<Shape>,
  handler: ResourceToolHandler<Shape>,
  context: ResourceToolContext,
): RegisteredToolOf<Host> {
  nonEmptyStringOption(name, 'name');
  functionOption(handler, 'handler');
  // Required, unlike most options objects: absent is refused too.
  if (context === undefined) throw invalidOption('context', 'an object', context);
  storeOption(optionsObject(context, 'context').store, 'context.store');
  functionOption(context.resourceUrlFor, 'context.resourceUrlFor');
  const own: ZodRawShapeCompat = rawShapeOf(config.inputSchema);
  const added = ADDED_PARAMS[flavourOf(own)];
  for (const key of Object.keys(added)) {
    if (key in own) throw invalidOption('inputSchema', `a schema without ${Object.keys(added).join(', ')} (S2SP adds them)`, key);
  }
  const inputSchema: ZodRawShapeCompat = { ...own, ...added };
  const limit = integerOption(context.abstractRowLimit, 'abstractRowLimit', 1) ?? DEFAULT_ABSTRACT_ROW_LIMIT;
  const description = withLifetime(config.description, context.ttlMs ?? context.store.ttlMs);
  const callback = async (args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult> => {
    const {
      abstract_domains: domainsText,
      mode,
      abstract_format: format,
      ...toolArgs
    } = args as {
      abstract_domains?: string;
      mode?: 'async' | 'sync';
      abstract_format?: AbstractFormat;
    } & Record<string, unknown>;
    try {
      const domains = parseAbstractDomains(domainsText);
      const result = await handler(toolArgs as ShapeOutput<Shape>, extra);
      if (isRecordBatchSource(result) && !isArrowTable(result)) {
        return await streamedResult(result, domains && { domains, limit, format }, mode, { ...context, origin: name }, extra);
      }
      if (domains === undefined) return plainResult(result);
      const table = bodyTableFrom(result);
      checkDomainsExist(domains, dataColumns(table));
      const shape = { domains, limit, format };
      if (mode === 'sync') return syncResult(table, syncEnvelope(table, shape), extra);
      const put = await putReportingProgress(table, extra, context.store, name);
      return await asyncEnvelopeResult(table, shape, put, context, extra);
    } catch (error) {
      return toolFailureResult(error, name, context.observe);
    }
  };
  return registerToolOn(mcp, name, { ...config, description, inputSchema, outputSchema: RESOURCE_TOOL_OUTPUT_SCHEMA }, tracedTool(name, callback));
}

/**
 * The tool's description, then what resource_url is and how long it lives:
 * protocol 2026-07-28 carries state across calls in server-minted handles
 * passed as tool arguments, and asks servers to say so with their lifetime.
 */
function withLifetime(description: string | undefined, ttlMs: number | undefined): string {
  const lifetime = ttlMs === undefined ? 'until its expires_at' : `${durationText(ttlMs)} (until its expires_at)`;
  const note =
    `S2SP: with abstract_domains, the columns you did not ask for stay on the server behind resource_url, ` +
    `a handle this server mints: pass it unchanged as the resource_url argument of a consumer tool. ` +
    `It serves one fetch and lives ${lifetime}; call this tool again for a fresh one.`;
  return description === undefined || description === '' ? note : `${description}\n\n${note}`;
}

/** 600000 -> "10 minutes", 90000 -> "90 seconds". */
function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return plural(ms / 3_600_000, 'hour');
  if (ms % 60_000 === 0) return plural(ms / 60_000, 'minute');
  return plural(Math.max(1, Math.round(ms / 1000)), 'second');
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** What the caller asked the abstract to be: its columns, at most how many rows, in which layout. */
interface AbstractShape {
  domains: readonly string[];
  limit: number;
  format: AbstractFormat | undefined;
}

function syncEnvelope(table: Table, shape: AbstractShape): AnyEnvelope {
  return buildEnvelope(table, shape.domains, { mode: 'sync' }, shape.limit, shape.format);
}

/**
 * An envelope as a tool result: the text block is {@link envelopeText}'s
 * exact text (what the Python reference's consumers read: int64 beyond 2^53
 * keeps its digits, floats stay floats), and `structuredContent` is the
 * envelope as JSON values (parsed from that text, so it never holds a bigint
 * and reads like the text).
 */
function envelopeResult(table: Table, envelope: AnyEnvelope): CallToolResult {
  const text = envelopeText(envelope, table);
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
}

/**
 * A sync-mode envelope as a tool result, shaped so that only an S2SP-aware
 * SDK (the dispatcher) hands the body on, and a host that is not one never
 * passes it to the model (README, Platform: "Sync mode and hosts"):
 * - `structuredContent` never holds the body (hosts may show it to the model);
 * - a 2026-07-28 call carries the body in the result's `_meta`
 *   ({@link SYNC_BODY_META_KEY}, its exact JSON text), which hosts do not
 *   show to models; the text block holds the envelope without it;
 * - a 2025-era call keeps the reference's shape, the body inside the text
 *   block (the Python reference's dispatcher reads it there), and that
 *   block is annotated for the user only, so a host that honours `audience`
 *   keeps it from the model.
 */
function syncResult(table: Table, envelope: AnyEnvelope, extra: ToolExtra): CallToolResult {
  const withoutBody = envelopeText(envelope, table);
  const structuredContent = JSON.parse(withoutBody) as Record<string, unknown>;
  const body = bodyText(envelope, table);
  if (toolCallOf(extra).era === 'modern') {
    return { content: [{ type: 'text', text: withoutBody }], structuredContent, _meta: { [SYNC_BODY_META_KEY]: body } };
  }
  // The reference's shape: `body` is the envelope's last key.
  const text = `${withoutBody.slice(0, -1)},"body":${body}}`;
  return { content: [{ type: 'text', text, annotations: { audience: ['user'] } }], structuredContent };
}

/**
 * Caches `table` as a body of tool `origin`, sending progress notifications
 * (bytes stored) when the caller passed a progress token.
 */
async function putReportingProgress(table: Table, extra: ToolExtra, store: BodyStore, origin: string): Promise<PutResult> {
  const progress = progressReporterFor(extra, 'caching the body (bytes)');
  return tracedPut(extra, table.numRows, progress?.report, async (observe) => {
    if (observe === undefined) return store.put(table, { origin });
    try {
      return await store.put(table, { observe, origin });
    } finally {
      await progress?.flush();
    }
  });
}

/**
 * The async envelope of a body already cached under `put.token`. If building
 * the answer fails, or the caller cancelled the call meanwhile, the token is
 * revoked: no one will ever hold it, so its body must not stay for a TTL.
 */
async function asyncEnvelopeResult(
  table: Table,
  shape: AbstractShape,
  put: { token: string; expiresAt: number },
  context: ResourceToolContext,
  extra: ToolExtra,
): Promise<CallToolResult> {
  try {
    // A call its caller cancelled while the body was cached keeps nothing: no one will get this token.
    if (toolCallOf(extra).signal?.aborted === true) throw new S2SPError('S2SP_ERR_TOOL_CANCELLED');
    const placement = { mode: 'async' as const, resourceUrl: context.resourceUrlFor(put.token), expiresAt: put.expiresAt };
    return envelopeResult(table, buildEnvelope(table, shape.domains, placement, shape.limit, shape.format));
  } catch (error) {
    await context.store.delete(put.token).catch(() => false);
    throw error;
  }
}

/**
 * A handler's record batches. Async mode with a store that takes batches
 * caches them as they come, and the envelope is built from the cached body
 * (only the abstract's rows become objects); plain and sync answers are
 * built whole anyway, so the batches are gathered first there, as they are
 * for a store without `putBatches` (RedisStore). Domains are checked against
 * the schema before anything is cached.
 */
async function streamedResult(
  source: RecordBatchSource,
  shape: AbstractShape | undefined,
  mode: 'async' | 'sync' | undefined,
  context: ResourceToolContext & { origin: string },
  extra: ToolExtra,
): Promise<CallToolResult> {
  const stream = await openBodyBatches(source);
  try {
    if (shape === undefined) return plainResult(rowsWithoutIds(await tableFromBatchStream(stream)));
    checkDomainsExist(shape.domains, dataColumns(stream.schema));
    if (mode === 'sync' || context.store.putBatches === undefined) {
      const table = await tableFromBatchStream(stream);
      if (mode === 'sync') return syncResult(table, syncEnvelope(table, shape), extra);
      const put = await tracedPut(extra, table.numRows, undefined, (observe) => context.store.put(table, { observe, origin: context.origin }));
      return await asyncEnvelopeResult(table, shape, put, context, extra);
    }
    const put = await tracedPut(extra, undefined, undefined, () => context.store.putBatches!(stream, { origin: context.origin }));
    return await asyncEnvelopeResult(put.table, shape, put, context, extra);
  } finally {
    await stream.close();
  }
}

/** Plain MCP answers the rows as the tool produced them: without the `_row_id` the stream added. */
function rowsWithoutIds(table: Table): Table {
  return table.select(dataColumns(table));
}

/**
 * Plain MCP (no `abstract_domains`): the rows exactly as the handler returned
 * them, an Arrow Table's values as the JSON body would write them; the same
 * rows as `{rows}` in `structuredContent`.
 */
function plainResult(result: TableResult): CallToolResult {
  let text: string;
  if (Array.isArray(result)) text = stringifyJsonExact(result);
  else if (isArrowTable(result)) text = rowsText(result);
  else throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'notTable' });
  return { content: [{ type: 'text', text }], structuredContent: { rows: JSON.parse(text) as unknown[] } };
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
