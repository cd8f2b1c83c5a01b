/**
 * The optional packages: the demo dataset (vega-datasets), the
 * tokenizer (gpt-tokenizer), the Parquet reader (parquet-wasm), the chart
 * renderer (vega, vega-lite, @resvg/resvg-js), span export
 * (OpenTelemetry's API, SDK and OTLP exporters) and query_rows' SQL engine
 * (DuckDB) are large and not every user needs them, so they are optional
 * peer dependencies,
 * loaded on first use. A missing one is an error that says what to install,
 * with the version range this package declares for it.
 */
import { createRequire } from 'node:module';
import { S2SPError } from './errors.js';

const require = createRequire(import.meta.url);

/** The optional packages and what each one is for, completing "NAME is needed for ...". */
export const OPTIONAL_PACKAGES = {
  '@modelcontextprotocol/client': 'the agent side of s2sp demo (MCP SDK v2 client)',
  'vega-datasets': 'the bundled demo dataset (s2sp demo, s2sp serve without FILE)',
  'gpt-tokenizer': 'counting tokens in s2sp demo',
  'parquet-wasm': 'reading Parquet files',
  vega: 'the chart summarize_rows draws',
  'vega-lite': 'the chart summarize_rows draws',
  '@resvg/resvg-js': 'the chart summarize_rows draws (SVG to PNG)',
  '@opentelemetry/api': 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT is set)',
  '@opentelemetry/sdk-trace': 'exporting spans (OTEL_EXPORTER_OTLP_ENDPOINT is set)',
  '@opentelemetry/resources': 'exporting spans (OTEL_EXPORTER_OTLP_ENDPOINT is set)',
  '@opentelemetry/exporter-trace-otlp-proto': 'exporting spans as OTLP/HTTP protobuf (the default OTEL_EXPORTER_OTLP_PROTOCOL)',
  '@opentelemetry/exporter-trace-otlp-http': 'exporting spans as OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)',
  '@duckdb/node-api': 'the SQL engine of query_rows',
} as const;
/** The name of one of {@link OPTIONAL_PACKAGES}. */
export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** Imports an optional package. @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` when it is not installed */
export async function importOptional<T>(name: OptionalPackage): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    throw isMissing(error, name) ? missing(name, error) : error;
  }
}

/** Resolves an optional package's entry file. @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` when it is not installed */
export function resolveOptional(name: OptionalPackage): string {
  try {
    return require.resolve(name);
  } catch (error) {
    throw isMissing(error, name) ? missing(name, error) : error;
  }
}

/** Not installed (as opposed to installed and failing while it loads). */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${name}'`);
}

function missing(name: OptionalPackage, cause: unknown): S2SPError {
  const range = declaredRange(name);
  return new S2SPError(
    'S2SP_ERR_CLI_PACKAGE_MISSING',
    { pkg: name, purpose: OPTIONAL_PACKAGES[name], install: range === undefined ? name : `'${name}@${range}'` },
    { cause },
  );
}

/** The range package.json declares for an optional peer (dist/src -> the package root). */
function declaredRange(name: string): string | undefined {
  try {
    const pkg = require('../../package.json') as { peerDependencies?: Record<string, string> };
    return pkg.peerDependencies?.[name];
  } catch {
    return undefined;
  }
}
