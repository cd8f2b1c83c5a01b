/**
 * Span export for `s2sp serve` and `s2sp consumer` (README, Observability):
 * on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set,
 * configured by the standard `OTEL_*` variables: OTLP over HTTP, protobuf
 * (the default) or JSON by `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`; the
 * exporter reads its own endpoint, headers, timeout and compression; the
 * resource `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; sampling
 * `OTEL_TRACES_SAMPLER[_ARG]`; batching `OTEL_BSP_*`. `OTEL_SDK_DISABLED`
 * and `OTEL_TRACES_EXPORTER=none` turn it off.
 *
 * The OpenTelemetry packages are optional peers, loaded only then; a missing
 * one is an error that says what to install.
 */
import { invalidOption } from '../option-checks.js';
import { importOptional } from '../optional-package.js';

type Api = typeof import('@opentelemetry/api');
type SdkTrace = typeof import('@opentelemetry/sdk-trace');
type Resources = typeof import('@opentelemetry/resources');
type HttpExporter = typeof import('@opentelemetry/exporter-trace-otlp-http');
type ProtoExporter = typeof import('@opentelemetry/exporter-trace-otlp-proto');

/** The OTLP transports the CLI speaks (gRPC is not one). */
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/**
 * Starts exporting spans when the environment asks for it.
 * @param serviceName `service.name` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) names one
 * @returns the function that flushes and stops the export, or undefined when it is off
 * @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` for a missing OpenTelemetry package,
 *   `S2SP_ERR_OPTION_INVALID` for a protocol or sampler the CLI does not know
 */
export async function startTraceExport(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<(() => Promise<void>) | undefined> {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || endpoint === '' || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if ((env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').every((name) => name.trim() === 'none')) return undefined;
  const protocolName = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolName] ?? 'http/protobuf';
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) throw invalidOption(protocolName, `one of ${PROTOCOLS.join(', ')}`, protocol);

  const api = await importOptional<Api>('@opentelemetry/api');
  const sdk = await importOptional<SdkTrace>('@opentelemetry/sdk-trace');
  const resources = await importOptional<Resources>('@opentelemetry/resources');
  const { OTLPTraceExporter } =
    protocol === 'http/json'
      ? await importOptional<HttpExporter>('@opentelemetry/exporter-trace-otlp-http')
      : await importOptional<ProtoExporter>('@opentelemetry/exporter-trace-otlp-proto');

  // Detected attributes (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) win over the default name.
  const resource = resources.resourceFromAttributes({ 'service.name': serviceName }).merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const processor = new sdk.BatchSpanProcessor({
    exporter: new OTLPTraceExporter(),
    scheduledDelayMillis: envInteger(env, 'OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: envInteger(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: envInteger(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: envInteger(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  });
  const provider = new sdk.TracerProvider({ resource, sampler: samplerOf(sdk, env), spanProcessors: [processor] });
  api.trace.setGlobalTracerProvider(provider);
  return () => provider.shutdown();
}

/** A non-negative integer variable, or undefined (unset or empty: the SDK's default). */
function envInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw invalidOption(name, 'an integer >= 0', text);
  return value;
}

/** The sampler `OTEL_TRACES_SAMPLER` names (default `parentbased_always_on`), its ratio from `OTEL_TRACES_SAMPLER_ARG`. */
function samplerOf(sdk: SdkTrace, env: NodeJS.ProcessEnv): import('@opentelemetry/sdk-trace').Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const ratio = () => {
    const text = env.OTEL_TRACES_SAMPLER_ARG;
    const value = text === undefined || text.trim() === '' ? 1 : Number(text);
    if (!(value >= 0 && value <= 1)) throw invalidOption('OTEL_TRACES_SAMPLER_ARG', 'a ratio in [0, 1]', text);
    return new sdk.TraceIdRatioBasedSampler(value);
  };
  switch (name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio() });
    default:
      throw invalidOption('OTEL_TRACES_SAMPLER', 'always_on, always_off, traceidratio or their parentbased_ forms', env.OTEL_TRACES_SAMPLER);
  }
}

/**
 * Flushes the spans still queued before the process ends on SIGINT or
 * SIGTERM (a server's usual end), then exits as the signal would have.
 */
export function flushOnSignals(stop: () => Promise<void>): void {
  for (const [signal, number] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
  ] as const) {
    process.once(signal, () => {
      void stop()
        .catch(() => {})
        .finally(() => process.exit(128 + number));
    });
  }
}
