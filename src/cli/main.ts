#!/usr/bin/env node
/**
 * The `s2sp` command: `serve`, `consumer`, `demo`. Logs go to stderr, so
 * stdout stays the MCP channel under `--transport stdio`.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { storeKindOf } from '../cache/store-from-spec.js';
import { isS2SPError } from '../errors.js';
import { runConsumer } from './consumer-command.js';
import { runDemo } from './demo-command.js';
import { runServe } from './serve-command.js';
import { DEFAULT_HTTP_PORT } from './transport-flags.js';

const USAGE = `Usage:
  s2sp serve [FILE] [--transport stdio|http] [--host H] [--port P] [--data-port P]
                    [--public-url URL] [--ttl SECONDS] [--tool NAME] [--abstract-limit N]
                    [--store memory|redis://[user:pass@]host:port[/db]|rediss://...]
                    [--lease-timeout SECONDS] [--no-metrics]
      Serve a table (JSON array, GeoJSON FeatureCollection, CSV, Arrow IPC) as the
      resource tool read_table. Default FILE: the bundled USGS earthquakes feed.
      --store (or S2SP_STORE): where bodies are cached; with Redis, every replica
      sharing it serves every token. Default: memory (this process only).
  s2sp consumer [--transport stdio|http] [--host H] [--port P]
                [--allow-origin URL]... [--max-body-bytes N] [--no-metrics]
      Serve the consumer tool summarize_rows.
  s2sp demo [--mode async|sync] [--min-mag M]
      Run both servers as child processes and play the agent.

Over stdio the data plane listens on --data-port (default: any free port);
over http MCP (/mcp) and the data plane share --port (default ${DEFAULT_HTTP_PORT}).
Both commands serve Prometheus metrics at /metrics on that HTTP server (a
consumer over stdio listens for it alone); --no-metrics turns them off.`;

const TRANSPORT_OPTIONS = {
  transport: { type: 'string', default: 'stdio' },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string' },
  'data-port': { type: 'string' },
  'public-url': { type: 'string' },
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
    metrics: values['no-metrics'] !== true,
  };
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
        },
      });
      if (values.help) return log(USAGE);
      if (positionals.length > 1) throw new UsageError(`serve takes at most one FILE, got ${positionals.length}`);
      await runServe(
        {
          ...transportFlags(values),
          file: positionals[0],
          tool: values.tool,
          ttlSeconds: integer(values.ttl, 'ttl', 1),
          abstractLimit: integer(values['abstract-limit'], 'abstract-limit', 1),
          store: storeSpec(values.store ?? process.env.S2SP_STORE),
          leaseTimeoutSeconds: seconds(values['lease-timeout'], 'lease-timeout'),
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
        },
      });
      if (values.help) return log(USAGE);
      await runConsumer(
        {
          ...transportFlags(values),
          allowOrigins: values['allow-origin'],
          maxBodyBytes: integer(values['max-body-bytes'], 'max-body-bytes', 1),
        },
        log,
      );
      return;
    }
    case 'demo': {
      const { values } = parseArgs({
        args: rest,
        options: { mode: { type: 'string', default: 'async' }, 'min-mag': { type: 'string', default: '4' }, help: { type: 'boolean', short: 'h' } },
      });
      if (values.help) return log(USAGE);
      const minMagnitude = Number(values['min-mag']);
      if (!Number.isFinite(minMagnitude)) throw new UsageError(`--min-mag must be a number, got ${JSON.stringify(values['min-mag'])}`);
      await runDemo({ mode: oneOf(values.mode, 'mode', ['async', 'sync'] as const), minMagnitude }, (line) => process.stdout.write(`${line}\n`));
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
