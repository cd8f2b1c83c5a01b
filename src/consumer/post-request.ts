/**
 * Sends a consumer's POST to a resource_url, once more on a fresh connection
 * when a reused keep-alive connection turns out stale: the request fails
 * with ECONNRESET or EPIPE before any response byte (a server that answers
 * and then hangs up without `Connection: close` leaves such sockets in the
 * agent's pool). The server never answered that request, so it cannot have
 * served the token (a lease it took is released when the connection closes).
 * `fetchBody` and `fetchBodyBatches` both send through this.
 */
import http from 'node:http';
import https from 'node:https';

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
