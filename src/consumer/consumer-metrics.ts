/**
 * The consumer side's Prometheus metrics: fetches from resource servers,
 * the bytes they brought, and the fetches that failed, recorded into a
 * prom-client Registry passed to fetchBody (or to the consumer tools).
 *
 * prom-client is loaded only when a registry is given; one registry holds
 * one set of these metrics, however many fetches record into it.
 */
import type { Counter, Registry } from 'prom-client';
import { isS2SPError } from '../errors.js';

/** The `code` label of a failure that is not an S2SPError (a bug, or a failure outside our catalogue). */
export const UNKNOWN_CODE = 'unknown';

/** What a fetch brought, as {@link ConsumerMetrics.fetched} reads it. */
export interface FetchOutcome {
  readonly format: 'json' | 'arrow';
  readonly compressed: boolean;
  /** The buffer codec of compressed Arrow. */
  readonly codec?: string;
  readonly bytesReceived: number;
}

/** The consumer's counters; made by {@link consumerMetricsFor}. */
export class ConsumerMetrics {
  readonly #fetches: Counter<'format'>;
  readonly #bytes: Counter<'format'>;
  readonly #failures: Counter<'code'>;

  constructor(prom: typeof import('prom-client'), registry: Registry) {
    const registers = [registry];
    this.#fetches = new prom.Counter({
      name: 's2sp_consumer_fetches_total',
      help: 'Bodies fetched from resource_urls, by the format the server answered in.',
      labelNames: ['format'],
      registers,
    });
    this.#bytes = new prom.Counter({
      name: 's2sp_consumer_bytes_received_total',
      help: 'Response body bytes of the fetched bodies (compressed bytes for compressed Arrow).',
      labelNames: ['format'],
      registers,
    });
    this.#failures = new prom.Counter({
      name: 's2sp_consumer_fetch_failures_total',
      help: 'Fetches that failed, by error code (refused URL, HTTP error, timeout, invalid or oversized body...).',
      labelNames: ['code'],
      registers,
    });
  }

  /** Counts a fetch that succeeded. */
  fetched(outcome: FetchOutcome): void {
    // Labelled like the data plane's fetches: json, arrow, arrow-<codec>.
    const format = outcome.format === 'arrow' && outcome.compressed ? `arrow-${outcome.codec ?? 'unknown'}` : outcome.format;
    this.#fetches.inc({ format });
    this.#bytes.inc({ format }, outcome.bytesReceived);
  }

  /** Counts a fetch that failed with `error`. */
  failed(error: unknown): void {
    this.#failures.inc({ code: isS2SPError(error) ? error.code : UNKNOWN_CODE });
  }
}

const byRegistry = new WeakMap<Registry, Promise<ConsumerMetrics>>();

/**
 * The consumer metrics of `registry`, registered on first use (prom-client
 * loaded then), the same object for every later call.
 */
export function consumerMetricsFor(registry: Registry): Promise<ConsumerMetrics> {
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) {
    metrics = import('prom-client').then((prom) => new ConsumerMetrics(prom, registry));
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
