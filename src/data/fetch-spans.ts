/**
 * The data plane's span of a fetch (README, Observability):
 * `s2sp.data_plane.fetch`, a server span that continues the `traceparent`
 * the consumer sent, from the request to the response's close, with the
 * negotiated format and codec, the rows asked for, the bytes sent and the
 * lease's outcome (`committed`: the transfer completed and used the token
 * up; `released`: leased, but not completed, so the token stays; `none`:
 * refused before any lease). Route hooks, as for the metrics, so the
 * handler only notes what it alone knows ({@link noteFetch}). The route is
 * named by its template: the URL holds the token.
 *
 * Without `@opentelemetry/api` the route options are returned unchanged.
 */
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyRequest, onErrorHookHandler, onRequestHookHandler, onSendHookHandler } from 'fastify';
import { DATA_ROUTE } from '../protocol/data-path.js';
import { startSpan, tracingAvailable, type TraceSpan } from '../telemetry/tracing.js';
import { ReadyParts } from './last-bytes-gate.js';
import { counted } from './metrics.js';

/** One fetch being traced. */
interface Traced {
  readonly span: TraceSpan;
  bytes: number;
  leased: boolean;
  error?: unknown;
}

const FETCHES = new WeakMap<FastifyRequest, Traced>();

type Hook<H> = H | H[] | undefined;

/** Route options with the hooks of the fetch span added (after any already there). */
export function withFetchSpans<O extends { onRequest?: Hook<onRequestHookHandler>; onSend?: Hook<onSendHookHandler>; onError?: Hook<onErrorHookHandler> }>(
  options: O,
): O {
  if (!tracingAvailable) return options;
  const list = <H>(hook: Hook<H>): H[] => (hook === undefined ? [] : Array.isArray(hook) ? hook : [hook]);
  return {
    ...options,
    onRequest: [...list(options.onRequest), onRequest],
    onSend: [...list(options.onSend), onSend],
    onError: [...list(options.onError), onError],
  };
}

/** The handler took the lease and knows the answer's shape: the rows it will send, in which format. */
export function noteFetch(request: FastifyRequest, format: { kind: string; codec?: string }, rows: number): void {
  const traced = FETCHES.get(request);
  if (traced === undefined) return;
  traced.leased = true;
  traced.span.set({ 's2sp.format': format.kind, 's2sp.codec': format.codec ?? 'none', 's2sp.rows': rows });
}

const onRequest: onRequestHookHandler = (request, reply, done) => {
  const header = request.headers.traceparent;
  const span = startSpan('s2sp.data_plane.fetch', 'server', typeof header === 'string' ? header : undefined, {
    'http.request.method': request.method,
    'http.route': DATA_ROUTE,
  });
  if (span !== undefined) {
    const traced: Traced = { span, bytes: 0, leased: false };
    FETCHES.set(request, traced);
    const res = reply.raw;
    // Taken now: after 'close' the response may no longer point at its socket.
    const socket: Socket | null = request.raw.socket;
    res.once('close', () => closed(traced, res.headersSent ? res.statusCode : undefined, res.writableFinished && !socket?.errored));
  }
  done();
};

const onSend: onSendHookHandler = (request, _reply, payload, done) => {
  const traced = FETCHES.get(request);
  if (traced === undefined) return done(null, payload);
  const count = (bytes: number) => void (traced.bytes += bytes);
  // Ready parts know their length, and must reach the response itself: their pipe() sets its Content-Length.
  if (payload instanceof ReadyParts) count(payload.byteLength);
  else if (payload instanceof Readable) return done(null, counted(payload, count));
  if (typeof payload === 'string') count(Buffer.byteLength(payload));
  else if (payload instanceof Uint8Array) count(payload.byteLength);
  done(null, payload);
};

const onError: onErrorHookHandler = (request, _reply, error, done) => {
  const traced = FETCHES.get(request);
  if (traced !== undefined) traced.error = error;
  done();
};

function closed(traced: Traced, status: number | undefined, complete: boolean): void {
  const ok = status !== undefined && status >= 200 && status < 300 && complete;
  const outcome = !traced.leased ? 'none' : ok ? 'committed' : 'released';
  traced.span.set({ 'http.response.status_code': status, 's2sp.bytes': traced.bytes, 's2sp.lease.outcome': outcome });
  traced.span.end(ok ? undefined : (traced.error ?? { code: status === undefined ? 'client_gone' : complete ? `http_${status}` : 'transfer_cut' }));
}
