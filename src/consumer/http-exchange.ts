/**
 * The consumer's one HTTP exchange with a data plane (SPEC 3.1, 3.2): POST
 * to a resource_url, wait for a 2xx answer's headers, then hand over its
 * body as it arrives. Every fetch, whole or batch by batch, goes through
 * here, so both have the same limits, timeouts, retry and abort:
 *
 *   - `maxBytes` bounds the body (a declared Content-Length over it fails
 *     before any byte is read); an error document is read to 64 KiB at most
 *   - `timeoutMs` bounds each wait for the server: the answer's headers,
 *     then every piece of the body. The transfer's pace is the reader's: it
 *     takes the next piece when it is ready, and the socket waits (TCP
 *     backpressure) meanwhile
 *   - `signal` aborts the exchange, before or during the body
 *   - a reused keep-alive connection that turns out stale (ECONNRESET or
 *     EPIPE before any response byte: a server that answered and then hung
 *     up without `Connection: close`) gets one retry on a fresh connection.
 *     The server never answered that request, so it cannot have served the
 *     token (a lease it took is released when the connection closes)
 *
 * node:http rather than global fetch, so every byte is counted as it
 * arrives and a body over the limit is cut off at once. Redirects are not
 * followed: a 3xx could lead past the origin check.
 */
import http from 'node:http';
import https from 'node:https';
import { S2SPError } from '../errors.js';
import type { Listener, ProgressEvent } from '../observe.js';
import { fetchFailed, httpFailure } from './http-failure.js';

const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
/** An error document is small; a hostile server must not make us buffer a lot of it. */
const ERROR_DOCUMENT_BYTES = 64 * 1024;

/** How one exchange is bounded, watched and cancelled. */
export interface ExchangeOptions {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /**
   * Told as the body arrives: the bytes received so far, and the
   * Content-Length as `totalBytes` when the server declared one; then once
   * more at a complete body's end with the total.
   */
  readonly observe?: Listener<ProgressEvent>;
  /** The W3C `traceparent` header to send (README, Observability). */
  readonly traceparent?: string;
}

/** A 2xx answer whose body is not read yet. */
export interface OpenAnswer {
  readonly contentType: string | undefined;
  /** The body as it arrives, read once; throws unless it arrived complete. */
  readonly chunks: AsyncGenerator<Uint8Array>;
  /** Body bytes received so far. */
  received(): number;
  /** Stops the transfer (the token stays unconsumed when it was not complete). */
  stop(): void;
}

/**
 * POSTs `payload` (JSON) to `url` asking for `accept`; resolves at a 2xx
 * answer's headers.
 * @throws S2SPError `S2SP_ERR_CONSUMER_FETCH_FAILED` (non-2xx, unreachable, timeout,
 *   abort), `S2SP_ERR_CONSUMER_BODY_TOO_LARGE` (declared too large)
 */
export async function openExchange(url: URL, payload: string, accept: string, options: ExchangeOptions): Promise<OpenAnswer> {
  const { request, response } = await answerHeaders(url, payload, accept, options);
  let received = 0;
  const stop = (): void => {
    request.destroy();
    response.destroy();
  };
  const declared = Number(response.headers['content-length']);
  const chunks = bodyChunks(response, options, Number.isFinite(declared) ? declared : undefined, (n) => (received += n));
  return { contentType: response.headers['content-type'], chunks, received: () => received, stop };
}

/** The request that got a 2xx answer, and that answer. */
interface Answered {
  request: http.ClientRequest;
  response: http.IncomingMessage;
}

/** Waits (bounded, abortable) for a 2xx answer's headers; reads a non-2xx answer's error document. */
function answerHeaders(url: URL, payload: string, accept: string, { maxBytes, timeoutMs, signal, traceparent }: ExchangeOptions): Promise<Answered> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(fetchFailed({ problem: 'aborted' }, signal.reason));
      return;
    }
    let settled = false;
    const finish = (error: S2SPError | undefined, value?: Answered): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) resolve(value as Answered);
      else {
        sent.request.destroy();
        reject(error);
      }
    };
    const onAbort = (): void => finish(fetchFailed({ problem: 'aborted' }, signal?.reason));
    const timer = setTimeout(() => finish(fetchFailed({ problem: 'timeout', timeoutMs })), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const sent = sendPost(
      url,
      payload,
      accept,
      traceparent,
      (response) => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          readErrorDocument(response, Math.min(maxBytes, ERROR_DOCUMENT_BYTES), (bytes) => finish(httpFailure(status, bytes)));
          return;
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          finish(new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'declared', maxBytes, declaredBytes: declared }));
        } else finish(undefined, { request: sent.request, response });
      },
      (error) => finish(fetchFailed({ problem: 'unreachable', origin: url.origin, reason: error.message }, error)),
    );
  });
}

/** Reads up to `limit` bytes of an error answer, then hands them over (once, however it ends). */
function readErrorDocument(response: http.IncomingMessage, limit: number, done: (bytes: Buffer) => void): void {
  const parts: Buffer[] = [];
  let received = 0;
  const end = (): void => done(Buffer.concat(parts));
  response.on('data', (chunk: Buffer) => {
    if (received + chunk.length > limit) end();
    received += chunk.length;
    parts.push(chunk);
  });
  response.on('end', end);
  response.on('error', end);
}

/** A POST under way: the request that is current (the retry's, once there was one). */
interface SentPost {
  readonly request: http.ClientRequest;
}

/**
 * POSTs `payload`, uncompressed on the wire, retrying once on a fresh
 * connection when a reused one turns out stale.
 * @param onResponse called once, with the response of the request that got one
 * @param onError called once, with the error of a request that got none (after the one retry)
 */
function sendPost(
  url: URL,
  payload: string,
  accept: string,
  traceparent: string | undefined,
  onResponse: (response: http.IncomingMessage) => void,
  onError: (error: NodeJS.ErrnoException) => void,
): SentPost {
  const client = url.protocol === 'https:' ? https : http;
  let retried = false;
  let responded = false;
  let request!: http.ClientRequest;
  const send = (fresh: boolean): void => {
    const current = client.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept,
        'accept-encoding': 'identity',
        'content-length': Buffer.byteLength(payload),
        ...(traceparent === undefined ? {} : { traceparent }),
      },
      // A one-off agent: a fresh connection, not another pooled one that may be stale too.
      ...(fresh ? { agent: false } : {}),
    });
    request = current;
    current.on('error', (error: NodeJS.ErrnoException) => {
      if (current !== request) return; // superseded by the retry
      if (!retried && !responded && current.reusedSocket && STALE_SOCKET_CODES.has(error.code ?? '')) {
        retried = true;
        send(true);
        return;
      }
      onError(error);
    });
    current.on('response', (response) => {
      responded = true;
      onResponse(response);
    });
    current.end(payload);
  };
  send(false);
  return {
    get request() {
      return request;
    },
  };
}

/**
 * The body's bytes as they arrive, counted against `maxBytes` and reported
 * to `observe`, each wait bounded by `timeoutMs`; throws unless the body
 * arrived complete.
 */
async function* bodyChunks(
  response: http.IncomingMessage,
  { maxBytes, timeoutMs, signal, observe }: ExchangeOptions,
  declared: number | undefined,
  count: (n: number) => number,
): AsyncGenerator<Uint8Array> {
  const iterator = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const aborted = (): void => {
    response.destroy(fetchFailed({ problem: 'aborted' }, signal?.reason));
  };
  signal?.addEventListener('abort', aborted, { once: true });
  let received = 0;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(fetchFailed({ problem: 'timeout', timeoutMs })), timeoutMs);
      });
      let next: IteratorResult<Buffer>;
      try {
        next = await Promise.race([iterator.next(), late]);
      } catch (error) {
        if (error instanceof S2SPError) throw error;
        throw fetchFailed({ problem: 'broken' }, error);
      } finally {
        clearTimeout(timer);
      }
      if (next.done === true) break;
      received = count(next.value.length);
      if (received > maxBytes) throw new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'received', maxBytes });
      observe?.({ type: 'progress', bytes: received, ...(declared === undefined ? {} : { totalBytes: declared }) });
      yield next.value;
    }
    if (!response.complete) throw fetchFailed({ problem: 'closedEarly' });
    // The total is reached only by a body that arrived whole.
    if (declared === undefined) observe?.({ type: 'progress', bytes: received, totalBytes: received });
  } finally {
    signal?.removeEventListener('abort', aborted);
    response.destroy();
  }
}
