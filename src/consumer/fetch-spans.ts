/**
 * The consumer's spans (README, Observability): `s2sp.consumer.fetch`
 * (a client span from the request to the body's last batch: format, codec,
 * rows, bytes) and, inside it, `s2sp.consumer.decode` (from the answer's
 * headers to the last batch decoded). The fetch sends its own span as the
 * `traceparent` of the data-plane request, so the resource server's fetch
 * span joins the same trace; without OpenTelemetry the `traceparent` the
 * caller gave is sent on unchanged.
 */
import { startSpan, traceparentOnwards, type TraceSpan } from '../telemetry/tracing.js';

/** What a finished fetch tells its span. */
export interface FetchOutcome {
  format: 'json' | 'arrow';
  codec: string | undefined;
  rows: number;
  bytes: number;
}

/** The spans of one fetch; every method is safe to call more than once, and cheap without OpenTelemetry. */
export class FetchSpans {
  readonly #fetch: TraceSpan | undefined;
  #decode: TraceSpan | undefined;
  /** The `traceparent` to send with the request. */
  readonly traceparent: string | undefined;

  constructor(parent: string | undefined) {
    this.#fetch = startSpan('s2sp.consumer.fetch', 'client', parent, { 'http.request.method': 'POST' });
    this.traceparent = traceparentOnwards(this.#fetch, parent);
  }

  /** The answer's headers came: decoding starts. */
  answered(): void {
    if (this.#fetch !== undefined) this.#decode ??= startSpan('s2sp.consumer.decode', 'internal', this.#fetch);
  }

  /** The body arrived whole. */
  done(outcome: FetchOutcome): void {
    const attributes = { 's2sp.format': outcome.format, 's2sp.codec': outcome.codec ?? 'none', 's2sp.rows': outcome.rows, 's2sp.bytes': outcome.bytes };
    this.#decode?.set({ 's2sp.rows': outcome.rows });
    this.#decode?.end();
    this.#fetch?.set(attributes);
    this.#fetch?.end();
  }

  /** The fetch failed (or was stopped before its end). */
  failed(error: unknown): void {
    this.#decode?.end(error);
    this.#fetch?.end(error);
  }
}
