/**
 * An analytics MCP server that already has its own McpServer and fastify app,
 * and embeds s2sp in them: `query(sql)` over a Parquet or CSV file through
 * DuckDB is registered as an S2SP resource tool, the s2sp data plane is a
 * plugin on the app, and both share one MemoryStore. A consumer tool,
 * `summarize`, takes rows chosen from a query's abstract.
 *
 *   node dist/examples/duckdb-server/server.js [FILE] [--port N]
 *
 * FILE defaults to vega-datasets' flights-3m.parquet (3 million flights).
 * Prints `MCP at http://127.0.0.1:<port>/mcp` once it listens.
 */
import { extname, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { DataType, type Table } from 'apache-arrow';
import Fastify, { type FastifyInstance } from 'fastify';
import { MemoryStore, createDataPlane, registerConsumerTool, registerResourceTool } from 's2sp';
import { z } from 'zod';
import { arrowTableFromQuery } from './arrow-from-duckdb.js';

/** Options of {@link startDuckDbServer}. */
export interface DuckDbServerOptions {
  /** A Parquet or CSV file, served as the view `data`. */
  file: string;
  /** Port on 127.0.0.1 (0: any free port). */
  port?: number;
  /** Most rows one query may return (default 1,000,000). */
  maxRows?: number;
}

/** A running server. */
export interface DuckDbServer {
  app: FastifyInstance;
  /** The MCP endpoint (Streamable HTTP). */
  mcpUrl: string;
  close(): Promise<void>;
}

// The data plane lives under the app's own prefix, like any other plugin of the host.
const DATA_PREFIX = '/s2sp';

/** Starts the server on 127.0.0.1. */
export async function startDuckDbServer(options: DuckDbServerOptions): Promise<DuckDbServer> {
  const file = resolve(options.file);
  const maxRows = options.maxRows ?? 1_000_000;
  const db = await DuckDBInstance.create(':memory:');
  const setup = await db.connect();
  const reader = extname(file).toLowerCase() === '.csv' ? 'read_csv_auto' : 'read_parquet';
  await setup.run(`CREATE VIEW data AS SELECT * FROM ${reader}(${sqlString(file)})`);
  // query() runs the agent's SQL: let it read this one file and nothing else, and keep it that way.
  await setup.run(`SET allowed_paths = [${sqlString(file)}]`);
  await setup.run('SET enable_external_access = false');
  await setup.run('SET lock_configuration = true');
  const described = await setup.run('DESCRIBE data');
  const columns = (await described.getRowObjectsJS()).map((row) => `${String(row.column_name)} ${String(row.column_type)}`);
  setup.closeSync();

  // The host's app and its own routes.
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ service: 'duckdb-analytics', file }));

  // s2sp, part 1: one store, and the data plane mounted on the host's app.
  // The plane builds each resource_url from where it is mounted and the app's listening address.
  const plane = createDataPlane({ store: new MemoryStore({ ttlMs: 10 * 60_000 }), workers: 0 });
  await app.register(plane.plugin, { prefix: DATA_PREFIX });

  // The host's McpServer, built per request (stateless Streamable HTTP).
  const createMcpServer = (): McpServer => {
    const mcp = new McpServer({ name: 'duckdb-analytics', version: '1.0.0' });
    // s2sp, part 2: the resource tool on the host's McpServer; the handler returns Arrow as is.
    registerResourceTool(
      mcp,
      'query',
      {
        description:
          `Runs one DuckDB SQL query over the view data (${columns.join(', ')}). ` +
          'Name the columns you need to read in abstract_domains; the rest of the result waits behind resource_url.',
        inputSchema: { sql: z.string().describe('A DuckDB SELECT over the view data') },
      },
      async ({ sql }): Promise<Table> => {
        const connection = await db.connect();
        try {
          return await arrowTableFromQuery(connection, sql, maxRows);
        } finally {
          connection.closeSync();
        }
      },
      plane,
    );
    // A consumer tool: statistics of the chosen rows, read column by column from the Arrow Table.
    registerConsumerTool(
      mcp,
      'summarize',
      { description: 'Count, and min/mean/max of each numeric column, of rows chosen from a query result.' },
      ({ table, source, bytesReceived }) => ({ rows: table.numRows, columns: numericSummary(table), source, bytes: bytesReceived }),
    );
    return mcp;
  };

  app.post('/mcp', async (request, reply) => {
    const mcp = createMcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.once('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  return {
    app,
    mcpUrl: `http://127.0.0.1:${address.port}/mcp`,
    async close() {
      await app.close();
      db.closeSync();
    },
  };
}

/** min, mean, max of every numeric column but `_row_id`. */
function numericSummary(table: Table): Record<string, { min: number; mean: number; max: number }> {
  const out: Record<string, { min: number; mean: number; max: number }> = {};
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name);
    if (field.name === '_row_id' || column === null || !(DataType.isInt(field.type) || DataType.isFloat(field.type))) continue;
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    let n = 0;
    for (const raw of column) {
      if (raw === null) continue;
      const v = Number(raw);
      min = Math.min(min, v);
      max = Math.max(max, v);
      sum += v;
      n++;
    }
    if (n > 0) out[field.name] = { min, mean: sum / n, max };
  }
  return out;
}

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** vega-datasets' flights-3m.parquet, the default FILE. */
function defaultFile(): string {
  const entry = createRequire(import.meta.url).resolve('vega-datasets'); // <root>/build/index.js
  return resolve(entry, '..', '..', 'data', 'flights-3m.parquet');
}

// Run as a program (not when imported).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { port: { type: 'string', default: '0' } } });
  const server = await startDuckDbServer({ file: positionals[0] ?? defaultFile(), port: Number(values.port) });
  process.stdout.write(`MCP at ${server.mcpUrl}\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
