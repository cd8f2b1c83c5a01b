/**
 * s2sp's spans, through `@opentelemetry/api` when the host installed it (an
 * optional peer; README, Observability). Without it every function here
 * returns undefined at once and nothing else changes: the import is tried
 * once, when this module loads, and never again. With it, spans go to
 * whatever tracer provider the host registered (none: the API's no-op).
 *
 * Trace context travels explicitly, as W3C `traceparent` strings and span
 * handles, not through a context manager: the MCP SDKs and the consumer's
 * fetch cross async boundaries no manager is guaranteed to follow, and the
 * API alone registers none. The ambient context is still the parent of a
 * span given none, so a host's own instrumentation nests as it expects.
 *
 * No secrets: attributes are counts, formats and outcomes, never a URL
 * (a resource_url holds its token), a header or an error message; a failed
 * span carries only its error code.
 */
import { optionalImport } from '../optional-import.js';

type OtelApi = typeof import('@opentelemetry/api');
type ApiSpan = import('@opentelemetry/api').Span;
type ApiContext = import('@opentelemetry/api').Context;
type ApiTracer = import('@opentelemetry/api').Tracer;

// Tried once: a host without the package pays one failed resolution, at load.
const API = await optionalImport<OtelApi>('@opentelemetry/api');

/** The tracer's name (instrumentation scope). */
const TRACER_NAME = 's2sp';

/** Attribute values s2sp records: counts, names and flags. */
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What a span's parent may be: a span of ours, or a W3C `traceparent` from the wire. */
export type SpanParent = TraceSpan | string | undefined;

/** The kinds of span s2sp starts (OpenTelemetry's SpanKind, by name). */
export type SpanRole = 'server' | 'client' | 'internal';

/** One of s2sp's spans. */
export interface TraceSpan {
  /** Adds attributes (undefined values are left out). */
  set(attributes: SpanAttributes): void;
  /** The `traceparent` header naming this span as the parent of what it calls. */
  traceparent(): string;
  /** Runs `fn` with this span as the ambient context (seen by a host's own instrumentation). */
  run<T>(fn: () => T): T;
  /** Ends the span; with an error, marked failed with the error's code only. */
  end(error?: unknown): void;
}

/** True when `@opentelemetry/api` is installed: spans can be made. */
export const tracingAvailable = API !== undefined;

/**
 * Starts a span, or returns undefined without `@opentelemetry/api` or when
 * the span would record nothing (no tracer provider, or not sampled).
 * @param parent a span of ours, a `traceparent` (malformed ones are ignored), or undefined for the ambient context
 */
export function startSpan(name: string, role: SpanRole, parent: SpanParent, attributes: SpanAttributes = {}): TraceSpan | undefined {
  if (API === undefined) return undefined;
  // No tracer provider registered (the API installed for someone else's sake): nothing would be
  // recorded, so nothing is made per request, not even the no-op span the API would hand out.
  const tracer = registeredTracer(API);
  if (tracer === undefined) return undefined;
  const parentContext = contextOf(API, parent);
  const kind = role === 'server' ? API.SpanKind.SERVER : role === 'client' ? API.SpanKind.CLIENT : API.SpanKind.INTERNAL;
  const span = tracer.startSpan(name, { kind, attributes: defined(attributes) }, parentContext);
  // A sampler that dropped it: nothing is kept per request either (the small-requests bench paid
  // hooks, a wrapped body stream and context objects for no-op spans).
  if (!span.isRecording()) return undefined;
  return handleOf(API, span, API.trace.setSpan(parentContext, span));
}

/**
 * The tracer of the registered provider, or undefined while none is. The
 * global provider is the API's proxy, whose delegate is the one registered;
 * asked for a tracer without one, the proxy makes a new proxy tracer, whose
 * spans are no-ops. Looked up per span, not kept: a host may register its
 * provider after s2sp loaded, or replace it (`trace.disable()`, then another).
 */
function registeredTracer(api: OtelApi): ApiTracer | undefined {
  const provider = api.trace.getTracerProvider();
  // A provider of another copy of the API (a different version) is asked the ordinary way.
  if (!(provider instanceof api.ProxyTracerProvider)) return provider.getTracer(TRACER_NAME);
  return provider.getDelegateTracer(TRACER_NAME);
}

/** The `traceparent` to send onwards: `span`'s when there is one, else the one received (passed through unchanged). */
export function traceparentOnwards(span: TraceSpan | undefined, received: string | undefined): string | undefined {
  return span?.traceparent() ?? (received !== undefined && parseTraceparent(received) !== undefined ? received : undefined);
}

/** The context each of our spans runs in (its parent's, with it). */
const CONTEXTS = new WeakMap<TraceSpan, ApiContext>();

function handleOf(api: OtelApi, span: ApiSpan, context: ApiContext): TraceSpan {
  let ended = false;
  const handle: TraceSpan = {
    set: (attributes) => void span.setAttributes(defined(attributes)),
    traceparent: () => {
      const { traceId, spanId, traceFlags } = span.spanContext();
      return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    },
    run: (fn) => api.context.with(context, fn),
    end(error) {
      if (ended) return;
      ended = true;
      if (error !== undefined) {
        const code = errorCodeOf(error);
        span.setAttribute('error.type', code);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: code });
      }
      span.end();
    },
  };
  CONTEXTS.set(handle, context);
  return handle;
}

/** An error's stable code (`S2SP_ERR_...`, node's `E...`) or class name: never its message, which may quote input. */
function errorCodeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(name) ? name : 'Error';
}

function contextOf(api: OtelApi, parent: SpanParent): ApiContext {
  if (parent === undefined) return api.context.active();
  if (typeof parent !== 'string') return CONTEXTS.get(parent) ?? api.context.active();
  const remote = parseTraceparent(parent);
  if (remote === undefined) return api.context.active();
  return api.trace.setSpanContext(api.ROOT_CONTEXT, { ...remote, isRemote: true });
}

/**
 * A W3C `traceparent` (Trace Context, section 3.2): version 00 (a later
 * version is read by its first four fields), 32 hex trace id, 16 hex parent
 * id, both not all zeros, and flags.
 */
export function parseTraceparent(value: string): { traceId: string; spanId: string; traceFlags: number } | undefined {
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(value.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16) };
}

function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
