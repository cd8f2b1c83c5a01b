/**
 * The `query_rows` tool (README, "query_rows"): SQL over bodies from one or
 * more resource servers, answered as a new body. It is a resource tool
 * whose table comes from a query: the sources are fetched as Arrow (every
 * row, each URL once), loaded into a sealed DuckDB database
 * (sql/sql-session.ts), and the result is cached in this server's own store
 * behind a resource_url, with the abstract the agent asks for; so results
 * chain into further tools and never pass through the LLM.
 *
 * A query the engine's parser refuses (syntax, not a SELECT, a table not
 * named in `tables`, a table function that could reach outside) costs no
 * token: it is read before any source is fetched. What needs the columns
 * (an unknown column, a type mismatch) is checked once the schemas arrive,
 * before the rows are loaded; a refusal then cuts every transfer still
 * running, and the data plane keeps those tokens (a small body may have
 * arrived whole by then, and its token is spent).
 */
import { Table, type RecordBatch } from 'apache-arrow';
import * as z from 'zod/v4';
import { S2SPError, isS2SPError } from '../errors.js';
import { integerOption, optionsObject } from '../option-checks.js';
import { isDdiHandle } from '../protocol/ddi-handle.js';
import { isRecord } from '../json/is-record.js';
import { ROW_ID } from '../protocol/row-id.js';
import { resolveConsumerBatches, type ResolveOptions, type ResolvedBatches } from '../consumer/resolve-batches.js';
import { SqlSession } from '../sql/sql-session.js';
import { registerResourceTool, type ResourceToolContext, type ToolConfig } from './resource-tool.js';
import { toolCallOf, type McpToolHost, type RegisteredToolOf, type ToolExtra } from './tool-host.js';
import { onwardTraceparent } from './tool-span.js';

/** The tool's name in `s2sp consumer`. */
export const QUERY_TOOL = 'query_rows';

/** Default time limit of a query (declaring, loading and running), in ms. */
export const DEFAULT_QUERY_TIME_LIMIT_MS = 30_000;

/** Options of {@link registerQueryTool}, beyond where its results go. */
export interface QueryToolOptions {
  /** How the sources are fetched: origins allowed besides loopback, size and time limits, metrics. */
  consumer?: Omit<ResolveOptions, 'observe' | 'signal' | 'traceparent'>;
  /** Time for one query, from its first table to its last result row, in ms (default 30,000). */
  timeLimitMs?: number;
  /** The engine's memory limit per query, as DuckDB's `memory_limit` takes it (default '2GB'; past it the query fails, nothing spills). */
  memoryLimit?: string;
  /** Engine threads per query (default: DuckDB's, one per core). */
  threads?: number;
}

const QUERY_PARAMS = {
  sql: z
    .string()
    .describe(
      'One SELECT in DuckDB SQL over the tables named in `tables`, e.g. ' +
        '"SELECT c.country, sum(o.amount) AS total FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.country". ' +
        'Each table has its body columns and _row_id. Files, the network and settings are out of reach.',
    ),
  tables: z
    .union([z.record(z.string(), z.string()), z.string()])
    .describe(
      'An object mapping each table name used in sql to the resource_url a resource tool returned (or its ddi:// handle in sync mode), ' +
        'e.g. {"orders": "http://.../s2sp/data/...", "customers": "http://..."}. Every row of each is read once.',
    ),
  tables_data: z
    .record(z.string(), z.string())
    .optional()
    .describe('Rows of sync-mode tables, by table name (normally filled in by your SDK from ddi:// handles).'),
};

const QUERY_DESCRIPTION =
  'Runs SQL (DuckDB dialect) over tables held by S2SP resource servers, joined and aggregated server to server; ' +
  'you never read the tables. The result is a new S2SP resource: pass abstract_domains to see some of its columns, ' +
  'and hand its resource_url to further tools (another query_rows, a consumer tool).';

/**
 * Registers `query_rows` on `mcp`: a resource tool (its results are cached in
 * `context.store` behind resource_urls) whose table is a SQL query's result.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for a time limit or thread count that is not a positive integer,
 *   and whatever registerResourceTool throws
 */
export function registerQueryTool<Host extends McpToolHost>(
  mcp: Host,
  context: ResourceToolContext,
  options: QueryToolOptions = {},
  name = QUERY_TOOL,
  config: Omit<ToolConfig<typeof QUERY_PARAMS>, 'inputSchema'> = {},
): RegisteredToolOf<Host> {
  checkQueryToolOptions(options);
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_QUERY_TIME_LIMIT_MS;
  const toolConfig: ToolConfig<typeof QUERY_PARAMS> = {
    title: 'Query rows (SQL)',
    description: QUERY_DESCRIPTION,
    ...config,
    inputSchema: QUERY_PARAMS,
  };
  return registerResourceTool(
    mcp,
    name,
    toolConfig,
    async (args, extra) => {
      const { sql, sources } = checkQueryArgs(args);
      const maxResultBytes = (await context.store.stats()).maxBytes;
      return runQuery(sql, sources, { ...options, timeLimitMs, maxResultBytes }, extra);
    },
    context,
  );
}

/**
 * Checks the options of {@link registerQueryTool}.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function checkQueryToolOptions(value: QueryToolOptions | undefined): void {
  const options = optionsObject(value, 'query');
  integerOption(options.timeLimitMs, 'query.timeLimitMs', 1);
  integerOption(options.threads, 'query.threads', 1);
}

/** Where one table's rows come from. */
type TableSource = { kind: 'url'; url: string } | { kind: 'rows'; rowsText: string };

/** The tool's own arguments, checked: the SQL and each table's source, by name. */
function checkQueryArgs(args: { sql: string; tables: Record<string, string> | string; tables_data?: Record<string, string> }): {
  sql: string;
  sources: Map<string, TableSource>;
} {
  if (typeof args.sql !== 'string' || args.sql.trim() === '') throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'sqlEmpty' });
  let tables: unknown = args.tables;
  // Some clients send an object argument as its JSON text.
  if (typeof tables === 'string') {
    try {
      tables = JSON.parse(tables);
    } catch {
      throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'tablesNotObject', got: args.tables });
    }
  }
  if (!isRecord(tables)) {
    throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'tablesNotObject', got: tables });
  }
  const sources = new Map<string, TableSource>();
  for (const [table, value] of Object.entries(tables)) {
    if (isDdiHandle(value)) throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'ddiNotDelivered', table });
    if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) {
      throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'tableSource', table, got: value });
    }
    sources.set(table, { kind: 'url', url: value });
  }
  for (const [table, rowsText] of Object.entries(args.tables_data ?? {})) {
    if (sources.has(table)) throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'tableTwice', table });
    if (typeof rowsText !== 'string') throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'tableDataNotRows', table });
    sources.set(table, { kind: 'rows', rowsText });
  }
  if (sources.size === 0) throw new S2SPError('S2SP_ERR_QUERY_ARG_INVALID', { problem: 'tablesEmpty' });
  return { sql: args.sql, sources };
}

/** One body being fetched, and the table names it fills (a URL named twice is fetched once). */
interface OpenSource {
  names: string[];
  resolved: ResolvedBatches;
}

/**
 * Fetches the sources, checks the SQL against their schemas, loads them and
 * runs it; the result as a Table (its `_row_id` columns left out: the
 * result is numbered afresh when it is cached).
 */
async function runQuery(
  sql: string,
  sources: Map<string, TableSource>,
  options: QueryToolOptions & { timeLimitMs: number; maxResultBytes: number },
  extra: ToolExtra,
): Promise<Table> {
  const { signal } = toolCallOf(extra);
  const session = await SqlSession.open({
    timeLimitMs: options.timeLimitMs,
    maxResultBytes: options.maxResultBytes,
    memoryLimit: options.memoryLimit,
    threads: options.threads,
    signal,
  });
  const open: OpenSource[] = [];
  try {
    await session.inspect(sql, [...sources.keys()]);
    const resolveOptions: ResolveOptions = { ...options.consumer, signal, traceparent: onwardTraceparent(extra) };
    // Every source at once: their schemas come first, their rows follow as they are loaded.
    const settled = await Promise.allSettled(
      [...groupByOrigin(sources)].map(async ([key, names]) => {
        const source = sources.get(names[0])!;
        const args = source.kind === 'url' ? { abstract_data: '*', resource_url: key } : { abstract_data: '*', body_data: source.rowsText };
        open.push({ names, resolved: await sourceStep(names[0], () => resolveConsumerBatches(args, resolveOptions)) });
      }),
    );
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    for (const { names, resolved } of open) {
      await session.declare(names[0], resolved.schema);
      for (const alias of names.slice(1)) await session.alias(alias, names[0]);
    }
    await session.bind(sql);
    for (const { names, resolved } of open) {
      await session.load(names[0], sourceBatches(names[0], resolved.batches));
    }
    const result = await session.run(sql, ROW_ID);
    return new Table(result.schema, result.batches);
  } finally {
    // A transfer not read to its end is cut, so its token stays unspent (the query failed before it).
    await Promise.all(open.map(({ resolved }) => resolved.cancel()));
    session.close();
  }
}

/** Table names by source: each URL once (named twice, it is fetched once); each tables_data entry alone. */
function groupByOrigin(sources: Map<string, TableSource>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const [name, source] of sources) {
    const key = source.kind === 'url' ? source.url : `rows:${name}`;
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  return groups;
}

/** A source's failure, named by its table. */
async function sourceStep<T>(table: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw sourceError(table, error);
  }
}

async function* sourceBatches(table: string, batches: AsyncIterable<RecordBatch>): AsyncGenerator<RecordBatch> {
  try {
    yield* batches;
  } catch (error) {
    throw sourceError(table, error);
  }
}

function sourceError(table: string, error: unknown): unknown {
  if (!isS2SPError(error)) return error;
  return new S2SPError('S2SP_ERR_QUERY_SOURCE_FAILED', { table, code: error.code, detail: error.message }, { cause: error });
}
