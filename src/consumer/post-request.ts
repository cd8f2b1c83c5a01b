/**
 * Sends a consumer's POST to a resource_url, once more on a fresh connection
 * when a reused keep-alive connection turns out stale: the request fails
 * with ECONNRESET or EPIPE before any response byte (a server that answers
 * and then hangs up without `Connection: close` leaves such sockets in the
 * agent's pool). The server never answered that request, so it cannot have
 * served the token (a lease it took is released when the connection closes).
 * `fetchBody` and `fetchBodyBatches` both send through this, and wait for
 * the answer through {@link exchangePost}.
 */
import http from 'node:http';
import https from 'node:https';
import type { S2SPError } from '../errors.js';
import { fetchFailed } from './http-failure.js';

const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** A POST under way: the request that is current (the retry's, once there was one). */
export interface SentPost {
  readonly request: http.ClientRequest;
}

/**
 * POSTs `payload` (JSON) to `url` asking for `accept`, uncompressed on the wire.
 * @param onResponse called once, with the response of the request that got one
 * @param onError called once, with the error of a request that got none (after the one retry)
 */
export function sendPost(
  url: URL,
  payload: string,
  accept: string,
  onResponse: (response: http.IncomingMessage) => void,
  onError: (error: NodeJS.ErrnoException) => void,
): SentPost {
  const client = url.protocol === 'https:' ? https : http;
  let retried = false;
  let responded = false;
  let request!: http.ClientRequest;
  const send = (fresh: boolean) => {
    const current = client.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept,
        'accept-encoding': 'identity',
        'content-length': Buffer.byteLength(payload),
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

/** Settles an exchange once: with an error (the request is then destroyed) or with its value. */
export type FinishExchange<T> = (error: S2SPError | undefined, value?: T) => void;

/** How long an exchange may take, and what cancels it. */
export interface ExchangeBounds {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * One POST whose answer `onResponse` reads and settles through `finish`:
 * rejects with S2SP_ERR_CONSUMER_FETCH_FAILED when `signal` aborts, when `timeoutMs`
 * passes before `finish`, or when the server cannot be reached; whatever
 * settles first wins, later calls are ignored.
 * @param onResponse given the response, `finish`, and the request that got the response
 */
export function exchangePost<T>(
  url: URL,
  payload: string,
  accept: string,
  { timeoutMs, signal }: ExchangeBounds,
  onResponse: (response: http.IncomingMessage, finish: FinishExchange<T>, request: http.ClientRequest) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(fetchFailed({ problem: 'aborted' }, signal.reason));
      return;
    }
    let settled = false;
    const finish: FinishExchange<T> = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        sent.request.destroy();
        reject(error);
      } else {
        resolve(value as T);
      }
    };
    const onAbort = () => finish(fetchFailed({ problem: 'aborted' }, signal?.reason));
    const timer = setTimeout(() => finish(fetchFailed({ problem: 'timeout', timeoutMs })), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const sent = sendPost(
      url,
      payload,
      accept,
      (response) => onResponse(response, finish, sent.request),
      (error) => finish(fetchFailed({ problem: 'unreachable', origin: url.origin, reason: error.message }, error)),
    );
  });
}
