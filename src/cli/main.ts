#!/usr/bin/env node
/**
 * The `s2sp` command: `serve`, `consumer`, `demo`. Logs go to stderr, so
 * stdout stays the MCP channel under `--transport stdio`.
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { storeKindOf } from '../cache/store-from-spec.js';
import { isS2SPError } from '../errors.js';
import { ABSTRACT_FORMATS, AbstractFormat } from '../protocol/abstract-format.js';
import { runConsumer } from './consumer-command.js';
import { runDemo } from './demo-command.js';
import { runServe } from './serve-command.js';
import { prepareOption, type PrepareOption } from '../data/body-preparation.js';
import { flushOnSignals, startTraceExport } from './trace-export.js';
import { DEFAULT_HTTP_PORT } from './transport-flags.js';

const USAGE = `Usage:
  s2sp serve [FILE] [--transport stdio|http] [--host H] [--port P] [--data-port P]
                    [--public-url URL] [--ttl SECONDS] [--tool NAME] [--abstract-limit N]
                    [--store memory|redis://[user:pass@]host:port[/db]|rediss://...
                             |redis-cluster://[user:pass@]host:port[,host:port...]|rediss-cluster://...]
                    [--lease-timeout SECONDS] [--store-timeout SECONDS] [--prepare auto|off|FORM,...]
                    [--no-metrics] [HTTP OPTIONS]
      Serve a table (JSON array, GeoJSON FeatureCollection, CSV, Arrow IPC) as the
      resource tool read_table. Default FILE: the bundled USGS earthquakes feed.
      --store (or S2SP_STORE): where bodies are cached; with Redis, every replica
      sharing it serves every token; a cluster URL names some of its nodes (seeds).
      Default: memory (this process only).
      --store-timeout: the deadline of each Redis command (default 5); past it a
      tool call or fetch fails with S2SP_ERR_STORE_UNAVAILABLE.
      --prepare: what idle workers encode after each put, while the LLM reads the
      abstract: auto (default: the forms the last fetches of the tool asked for),
      off, or a list of json, lz4, zstd.
      Optional packages, loaded when needed: vega-datasets (the bundled feed),
      parquet-wasm (Parquet files), gpt-tokenizer (demo token counts).
  s2sp consumer [--transport stdio|http] [--host H] [--port P]
                [--allow-origin URL]... [--max-body-bytes N] [--query-timeout-ms MS]
                [--no-metrics] [HTTP OPTIONS]
      Serve the consumer tool summarize_rows, and query_rows: SQL (DuckDB) over
      the bodies of one or more resource servers, answered as a body this
      server holds behind its own data plane (README, "query_rows"; needs the
      optional package @duckdb/node-api). --query-timeout-ms: the time limit of
      one query (default 30000).
  s2sp demo [--mode async|sync] [--min-mag M] [--abstract-format rows|columns] [--chart FILE]
      Run the servers as child processes and play the agent; the consumer's
      chart is saved to FILE (default: s2sp-demo-chart.png in the temp folder).
      Then join the earthquakes with a second serve's seismic regions through
      query_rows (needs @duckdb/node-api).

Over stdio the data plane listens on --data-port (default: any free port);
over http MCP (/mcp) and the data plane share --port (default ${DEFAULT_HTTP_PORT}).
--host 0.0.0.0 (or ::) needs --public-url for serve: the URL consumers reach it at.
Both commands serve Prometheus metrics at /metrics on that HTTP server (a
consumer over stdio listens for it alone); --no-metrics turns them off.
With OTEL_EXPORTER_OTLP_ENDPOINT set, both export spans (OTLP/HTTP, protobuf
or OTEL_EXPORTER_OTLP_PROTOCOL=http/json; the standard OTEL_* variables apply;
README, "Observability").

HTTP OPTIONS (README, "Security"):
  --mcp-allowed-host NAME...    Host names /mcp accepts besides loopback (DNS rebinding)
  --mcp-allowed-origin URL...   Origins /mcp accepts besides loopback
  --mcp-body-limit BYTES        Largest /mcp request (default 67108864, 64 MiB)
  --auth-issuer URL             /mcp accepts only OAuth access tokens from this issuer
                                (README, "Security > Authorization"; --transport http)
  --auth-audience URI           The resource tokens must name (default: the public /mcp URL)
  --auth-scope SCOPE...         Scopes a token needs for tools/call
  --request-timeout-ms MS       Whole request must arrive within (default 60000)
  --headers-timeout-ms MS       Headers must arrive within (default 15000)
  --keep-alive-timeout-ms MS    Idle keep-alive connections close after (default 5000)
  --idle-timeout-ms MS          Connections with no traffic close after (default 120000)`;

const TRANSPORT_OPTIONS = {
  transport: { type: 'string', default: 'stdio' },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string' },
  'data-port': { type: 'string' },
  'public-url': { type: 'string' },
  'mcp-allowed-host': { type: 'string', multiple: true, default: [] },
  'mcp-allowed-origin': { type: 'string', multiple: true, default: [] },
  'mcp-body-limit': { type: 'string' },
  'auth-issuer': { type: 'string' },
  'auth-audience': { type: 'string' },
  'auth-scope': { type: 'string', multiple: true, default: [] },
  'request-timeout-ms': { type: 'string' },
  'headers-timeout-ms': { type: 'string' },
  'keep-alive-timeout-ms': { type: 'string' },
  'idle-timeout-ms': { type: 'string' },
  'no-metrics': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} satisfies ParseArgsConfig['options'];

class UsageError extends Error {}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function integer(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  return n;
}

/** A positive number of seconds (fractions allowed: a short lease timeout for tests and demos). */
function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} must be a positive number of seconds, got ${JSON.stringify(value)}`);
  return n;
}

/** `--prepare auto|off|FORM[,FORM...]`. */
function prepareFlag(value: string | undefined): PrepareOption | undefined {
  if (value === undefined) return undefined;
  const option = value === 'off' || value === 'auto' ? value : value.split(',').map((form) => form.trim());
  try {
    return prepareOption(option);
  } catch {
    throw new UsageError(`--prepare must be auto, off or a list of json, lz4, zstd, got ${JSON.stringify(value)}`);
  }
}

function storeSpec(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    storeKindOf(value);
  } catch (error) {
    throw new UsageError(`--store (or S2SP_STORE): ${(error as Error).message}`);
  }
  return value;
}

function oneOf<T extends string>(value: string | undefined, flag: string, allowed: readonly T[]): T {
  if (allowed.includes(value as T)) return value as T;
  throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
}

function transportFlags(values: Record<string, string | boolean | string[] | undefined>) {
  const transport = oneOf(values.transport as string, 'transport', ['stdio', 'http'] as const);
  if (transport === 'http' && values['data-port'] !== undefined) {
    throw new UsageError('--data-port is for --transport stdio; over http MCP and the data plane share --port');
  }
  return {
    transport,
    host: values.host as string,
    port: transport === 'http' ? (integer(values.port as string | undefined, 'port') ?? DEFAULT_HTTP_PORT) : undefined,
    dataPort: integer(values['data-port'] as string | undefined, 'data-port'),
    publicUrl: values['public-url'] as string | undefined,
    mcpAllowedHosts: values['mcp-allowed-host'] as string[],
    mcpAllowedOrigins: values['mcp-allowed-origin'] as string[],
    mcpBodyLimit: integer(values['mcp-body-limit'] as string | undefined, 'mcp-body-limit', 1),
    auth: authFlags(values, transport),
    timeouts: {
      requestMs: integer(values['request-timeout-ms'] as string | undefined, 'request-timeout-ms'),
      headersMs: integer(values['headers-timeout-ms'] as string | undefined, 'headers-timeout-ms'),
      keepAliveMs: integer(values['keep-alive-timeout-ms'] as string | undefined, 'keep-alive-timeout-ms'),
      idleMs: integer(values['idle-timeout-ms'] as string | undefined, 'idle-timeout-ms'),
    },
    metrics: values['no-metrics'] !== true,
  };
}

/** `--auth-*`: OAuth on /mcp, or undefined without `--auth-issuer`. */
function authFlags(values: Record<string, string | boolean | string[] | undefined>, transport: 'stdio' | 'http') {
  const issuer = values['auth-issuer'] as string | undefined;
  const audience = values['auth-audience'] as string | undefined;
  const scopes = values['auth-scope'] as string[];
  if (issuer === undefined) {
    if (audience !== undefined || scopes.length > 0) throw new UsageError('--auth-audience and --auth-scope need --auth-issuer');
    return undefined;
  }
  if (transport !== 'http') throw new UsageError('--auth-issuer guards /mcp, which only --transport http serves');
  if (!URL.canParse(issuer) || !/^https?:$/.test(new URL(issuer).protocol)) {
    throw new UsageError(`--auth-issuer must be an http(s) URL, got ${JSON.stringify(issuer)}`);
  }
  if (audience !== undefined && !URL.canParse(audience)) throw new UsageError(`--auth-audience must be an absolute URI, got ${JSON.stringify(audience)}`);
  return { issuer, ...(audience === undefined ? {} : { audience }), scopes };
}

/** Span export, when the OTEL_* environment asks for it (README, Observability). */
async function exportTraces(serviceName: string): Promise<void> {
  const stop = await startTraceExport(serviceName);
  if (stop === undefined) return;
  flushOnSignals(stop);
  log(`s2sp: exporting spans to ${process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT}`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          ...TRANSPORT_OPTIONS,
          ttl: { type: 'string' },
          tool: { type: 'string', default: 'read_table' },
          'abstract-limit': { type: 'string' },
          store: { type: 'string' },
          'lease-timeout': { type: 'string' },
          'store-timeout': { type: 'string' },
          prepare: { type: 'string' },
        },
      });
      if (values.help) return log(USAGE);
      if (positionals.length > 1) throw new UsageError(`serve takes at most one FILE, got ${positionals.length}`);
      await exportTraces('s2sp-serve');
      await runServe(
        {
          ...transportFlags(values),
          file: positionals[0],
          tool: values.tool,
          ttlSeconds: integer(values.ttl, 'ttl', 1),
          abstractLimit: integer(values['abstract-limit'], 'abstract-limit', 1),
          store: storeSpec(values.store ?? process.env.S2SP_STORE),
          leaseTimeoutSeconds: seconds(values['lease-timeout'], 'lease-timeout'),
          storeTimeoutSeconds: seconds(values['store-timeout'], 'store-timeout'),
          prepare: prepareFlag(values.prepare),
        },
        log,
      );
      return;
    }
    case 'consumer': {
      const { values } = parseArgs({
        args: rest,
        options: {
          ...TRANSPORT_OPTIONS,
          'allow-origin': { type: 'string', multiple: true, default: [] },
          'max-body-bytes': { type: 'string' },
          'query-timeout-ms': { type: 'string' },
        },
      });
      if (values.help) return log(USAGE);
      await exportTraces('s2sp-consumer');
      await runConsumer(
        {
          ...transportFlags(values),
          allowOrigins: values['allow-origin'],
          maxBodyBytes: integer(values['max-body-bytes'], 'max-body-bytes', 1),
          queryTimeoutMs: integer(values['query-timeout-ms'], 'query-timeout-ms', 1),
        },
        log,
      );
      return;
    }
    case 'demo': {
      const { values } = parseArgs({
        args: rest,
        options: {
          mode: { type: 'string', default: 'async' },
          'min-mag': { type: 'string', default: '4' },
          'abstract-format': { type: 'string', default: AbstractFormat.columns },
          chart: { type: 'string', default: join(tmpdir(), 's2sp-demo-chart.png') },
          help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help) return log(USAGE);
      const minMagnitude = Number(values['min-mag']);
      if (!Number.isFinite(minMagnitude)) throw new UsageError(`--min-mag must be a number, got ${JSON.stringify(values['min-mag'])}`);
      const demoFlags = {
        mode: oneOf(values.mode, 'mode', ['async', 'sync'] as const),
        minMagnitude,
        abstractFormat: oneOf(values['abstract-format'], 'abstract-format', ABSTRACT_FORMATS),
        chartPath: resolve(values.chart),
      };
      await runDemo(demoFlags, (line) => process.stdout.write(`${line}\n`));
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      log(USAGE);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    log(`s2sp: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (isS2SPError(error)) {
    log(`s2sp: ${(error as Error).message} (${(error as { code: string }).code})`);
    process.exitCode = 1;
  } else {
    log(`s2sp: ${(error as Error)?.stack ?? String(error)}`);
    process.exitCode = 1;
  }
});
