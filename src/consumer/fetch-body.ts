/**
 * The consumer's data-plane client (SPEC 3.1): POST to a resource_url, get
 * the selected rows back as an Arrow Table.
 *
 * node:http rather than global fetch, so every byte is counted as it arrives
 * and a body over the limit is cut off at once instead of being buffered
 * first. Redirects are not followed: a 3xx could lead past the origin check.
 * Decoding lives in json-body.ts; this file is the HTTP part only.
 */
import http from 'node:http';
import https from 'node:https';
import type { Table } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { bodyFromJson } from './json-body.js';
import { checkResourceUrl } from './resource-url.js';
import { fetchFailed, httpFailure } from './http-failure.js';

/** Default limit of a response body: 256 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024;
/** Default time limit of a whole fetch: 60 s. */
export const DEFAULT_FETCH_TIMEOUT_MS = 60_000;

/** Options of {@link fetchBody}. */
export interface FetchBodyOptions {
  /** Rows to fetch by `_row_id`; undefined means every row. Must not be empty. */
  rowIds?: readonly number[];
  /** Columns to fetch; undefined or empty means every column. */
  columns?: readonly string[];
  /** Origins trusted besides loopback (see checkResourceUrl). */
  allowedOrigins?: readonly string[];
  /** Largest response body accepted, in bytes (default 256 MiB). */
  maxBytes?: number;
  /** Time limit of the whole fetch in milliseconds (default 60,000). */
  timeoutMs?: number;
  /** Aborts the fetch. */
  signal?: AbortSignal;
}

/** What {@link fetchBody} returns. */
export interface FetchedBody {
  /** The rows, `_row_id` first, ids as the server sent them. */
  table: Table;
  /** `total_rows` of the response. */
  totalRows: number;
  /** The columns returned, `_row_id` first. */
  columns: string[];
  /** Bytes of the response body. */
  bytesReceived: number;
  /** The wire format the server answered in. */
  format: 'json';
}

/**
 * Fetches rows of a cached body from its resource_url.
 *
 * @param resourceUrl the URL the resource tool returned
 * @param options rows, columns, limits
 * @throws S2SPError `S2SP_ERR_CONSUMER_URL_INVALID` / `_ORIGIN_REFUSED` (URL check),
 *   `_ARG_INVALID` (bad rowIds or options), `_BODY_TOO_LARGE`, `_FETCH_FAILED`
 *   (non-2xx, network, timeout, abort), `_RESPONSE_INVALID` (not an S2SP body)
 */
export async function fetchBody(resourceUrl: string, options: FetchBodyOptions = {}): Promise<FetchedBody> {
  const url = checkResourceUrl(resourceUrl, options.allowedOrigins);
  const maxBytes = positive(options.maxBytes ?? DEFAULT_MAX_BODY_BYTES, 'maxBytes');
  const timeoutMs = positive(options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, 'timeoutMs');
  const payload = JSON.stringify(requestBody(options));
  const { bytes } = await post(url, payload, maxBytes, timeoutMs, options.signal);
  const decoded = bodyFromJson(bytes);
  return { ...decoded, bytesReceived: bytes.byteLength, format: 'json' };
}

function requestBody(options: FetchBodyOptions): { row_ids?: number[]; columns?: string[] } {
  const out: { row_ids?: number[]; columns?: string[] } = {};
  if (options.rowIds !== undefined) {
    // On the wire an empty row_ids means every row (SPEC 3.1): a caller with
    // nothing selected must not silently receive the whole table.
    if (options.rowIds.length === 0) {
      throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', 'rowIds is empty; pass undefined to fetch every row');
    }
    if (!options.rowIds.every((id) => Number.isInteger(id) && id >= 0)) {
      throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', 'rowIds must be non-negative integers');
    }
    out.row_ids = [...options.rowIds];
  }
  if (options.columns !== undefined && options.columns.length > 0) out.columns = [...options.columns];
  return out;
}

/** One POST; resolves with the complete 2xx body, rejects with an S2SPError. */
function post(url: URL, payload: string, maxBytes: number, timeoutMs: number, signal?: AbortSignal): Promise<{ bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(fetchFailed('the fetch was aborted', signal.reason));
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (error: S2SPError | undefined, bytes?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        request.destroy();
        reject(error);
      } else {
        resolve({ bytes: bytes as Buffer });
      }
    };
    const onAbort = () => finish(fetchFailed('the fetch was aborted', signal?.reason));
    const timer = setTimeout(
      () => finish(fetchFailed(`the resource server did not answer in full within ${timeoutMs} ms; try again`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });

    const request = client.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'accept-encoding': 'identity',
        'content-length': Buffer.byteLength(payload),
      },
    });
    request.on('error', (error) => finish(fetchFailed(`could not reach the resource server at ${url.origin}: ${error.message}`, error)));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      // An error document is small; do not let a hostile server make us buffer a lot of it.
      const limit = ok ? maxBytes : Math.min(maxBytes, 64 * 1024);
      const declared = Number(response.headers['content-length']);
      if (ok && Number.isFinite(declared) && declared > maxBytes) {
        finish(tooLarge(maxBytes, `Content-Length says ${declared} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > limit) {
          if (ok) finish(tooLarge(maxBytes, `over ${maxBytes} bytes received`));
          else finish(httpFailure(status, Buffer.concat(chunks)));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => {
        const bytes = Buffer.concat(chunks, received);
        if (!response.complete) finish(fetchFailed('the resource server closed the connection before the body was complete'));
        else if (!ok) finish(httpFailure(status, bytes));
        else finish(undefined, bytes);
      });
      response.on('error', (error) =>
        finish(fetchFailed('the connection to the resource server broke before the body was complete; try again', error)),
      );
      response.on('close', () => {
        if (!response.complete) finish(fetchFailed('the resource server closed the connection before the body was complete; try again'));
      });
    });
    request.end(payload);
  });
}

function tooLarge(maxBytes: number, detail: string): S2SPError {
  return new S2SPError(
    'S2SP_ERR_CONSUMER_BODY_TOO_LARGE',
    `the resource body is over the consumer limit of ${maxBytes} bytes (${detail}); select fewer rows or columns`,
  );
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', `${name} must be a positive number, got ${value}`);
  }
  return value;
}
