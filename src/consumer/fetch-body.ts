/**
 * The consumer's data-plane client (SPEC 3.1, 3.2): POST to a resource_url,
 * get the selected rows back as an Arrow Table.
 *
 * node:http rather than global fetch, so every byte is counted as it arrives
 * and a body over the limit is cut off at once instead of being buffered
 * first. Redirects are not followed: a 3xx could lead past the origin check.
 * The Accept and the choice of decoder live in body-format.ts, decoding in
 * json-body.ts and arrow-body.ts; this file is the HTTP part.
 */
import { AnswerCoverage } from './answer-coverage.js';
import type { Table } from 'apache-arrow';
import type { Registry } from 'prom-client';
import { S2SPError } from '../errors.js';
import type { IpcCodec } from '../protocol/media-types.js';
import { rowsFromTable, type Row } from '../table/rows-from-table.js';
import { acceptFor, bodyFormatOption, codecsToAsk, decodeAnswer, jsonStreamFor, type BodyCodec, type BodyFormat } from './body-format.js';
import type { DecodedBody } from '../json/decoded-body.js';
import type { JsonBodyStream } from '../json/body-stream.js';
import { isLoopbackHost } from '../protocol/loopback.js';
import { checkResourceUrl } from './resource-url.js';
import { fetchFailed, httpFailure } from './http-failure.js';
import { consumerMetricsFor } from './consumer-metrics.js';
import { exchangePost } from './post-request.js';

export { BodyFormat, type BodyCodec } from './body-format.js';

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
  /**
   * Wire format to ask for (default `auto`: Arrow, JSON at q=0.5). `json` or
   * `arrow` asks for that one only and refuses an answer in the other format
   * with `S2SP_ERR_CONSUMER_RESPONSE_INVALID`.
   */
  format?: BodyFormat;
  /**
   * Arrow buffer compression to ask for: `none`, `zstd`, `lz4`, or `auto`
   * (default): none when the resource server is on loopback, where
   * compressing and decompressing cost more time than the bytes they save,
   * otherwise every codec available here, ZSTD first. A codec asked for by
   * name must load here (`S2SP_ERR_CODEC_UNAVAILABLE` otherwise); the server
   * may still answer uncompressed, or in JSON under `format: 'auto'`.
   */
  codec?: BodyCodec;
  /** A prom-client Registry that counts this fetch (README "Metrics"); default: not counted. */
  registry?: Registry;
  /**
   * Called as the body arrives with the bytes received so far and the
   * Content-Length, or undefined when the server declared none (a streamed
   * body); then once more at the end with `total` equal to `received`.
   */
  onProgress?: FetchProgress;
}

/** Progress of a fetch: body bytes received, of `total` when known. */
export type FetchProgress = (received: number, total: number | undefined) => void;

/** What {@link fetchBody} returns. */
export interface FetchedBody {
  /** The rows, `_row_id` first, ids as the server sent them. */
  table: Table;
  /** `total_rows` of a JSON response; the row count of an Arrow one (Arrow carries no total). */
  totalRows: number;
  /** The columns returned, `_row_id` first. */
  columns: string[];
  /** Bytes of the response body (compressed bytes for compressed Arrow). */
  bytesReceived: number;
  /** The wire format the server answered in (its Content-Type). */
  format: 'json' | 'arrow';
  /** True when the Arrow stream used buffer compression (LZ4 or ZSTD); always false for JSON. */
  compressed: boolean;
  /** The buffer codec of compressed Arrow (lz4, zstd). */
  codec?: IpcCodec;
  /**
   * The rows as plain objects (`_row_id` first), converted from `table` on
   * each call: nothing is converted unless asked, so keep the result rather
   * than calling twice.
   */
  rows(): Row[];
}

/**
 * Fetches rows of a cached body from its resource_url.
 *
 * @param resourceUrl the URL the resource tool returned
 * @param options rows, columns, limits, wire format
 * @throws S2SPError `S2SP_ERR_CONSUMER_URL_INVALID` / `_ORIGIN_REFUSED` (URL check),
 *   `_ARG_INVALID` (bad rowIds or options), `_BODY_TOO_LARGE`, `_FETCH_FAILED`
 *   (non-2xx, network, timeout, abort), `_RESPONSE_INVALID` (not an S2SP body, cut
 *   short, or not the forced format), `S2SP_ERR_CODEC_UNAVAILABLE` (a codec asked for,
 *   or compressed Arrow received, that this platform cannot decompress)
 */
export async function fetchBody(resourceUrl: string, options: FetchBodyOptions = {}): Promise<FetchedBody> {
  if (options.registry === undefined) return fetchUncounted(resourceUrl, options);
  const metrics = await consumerMetricsFor(options.registry);
  try {
    const fetched = await fetchUncounted(resourceUrl, options);
    metrics.fetched(fetched);
    return fetched;
  } catch (error) {
    metrics.failed(error);
    throw error;
  }
}

async function fetchUncounted(resourceUrl: string, options: FetchBodyOptions): Promise<FetchedBody> {
  const url = checkResourceUrl(resourceUrl, options.allowedOrigins);
  const maxBytes = positive(options.maxBytes ?? DEFAULT_MAX_BODY_BYTES, 'maxBytes');
  const timeoutMs = positive(options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, 'timeoutMs');
  const format = bodyFormatOption(options.format);
  const codecs = format === 'json' ? [] : codecsToAsk(options.codec, isLoopbackHost(url.hostname));
  const payload = JSON.stringify(requestBody(options));
  const answer = await post(url, payload, acceptFor(format, codecs), {
    maxBytes,
    timeoutMs,
    signal: options.signal,
    onProgress: options.onProgress,
    streamFor: (type) => jsonStreamFor(type, format),
  });
  const decoded = answer.decoded !== undefined ? { ...answer.decoded, format: 'json' as const, compressed: false } : decodeAnswer(answer.bytes as Buffer, answer.contentType, format, maxBytes);
  const { table } = decoded;
  const coverage = new AnswerCoverage(options.rowIds, options.columns);
  coverage.checkColumns(table.schema, decoded.format === 'json' ? { columns: decoded.columns, rows: table.numRows } : undefined);
  for (const batch of table.batches) coverage.see(batch);
  coverage.finish();
  return { ...decoded, bytesReceived: answer.received, rows: () => rowsFromTable(table) };
}

/**
 * The fetch request document (SPEC 3.1) for these options.
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for empty or non-integer rowIds
 */
export function requestBody(options: FetchBodyOptions): { row_ids?: number[]; columns?: string[] } {
  const out: { row_ids?: number[]; columns?: string[] } = {};
  if (options.rowIds !== undefined) {
    // On the wire an empty row_ids means every row (SPEC 3.1): a caller with
    // nothing selected must not silently receive the whole table.
    if (options.rowIds.length === 0) {
      throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'rowIdsEmpty' });
    }
    if (!options.rowIds.every((id) => Number.isInteger(id) && id >= 0)) {
      throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'rowIdsNotIntegers' });
    }
    out.row_ids = [...options.rowIds];
  }
  if (options.columns !== undefined && options.columns.length > 0) out.columns = [...options.columns];
  return out;
}

/** What a 2xx answer brought: the whole body (or, for JSON, the body decoded as it came) and its Content-Type. */
/** How one POST is bounded, watched and decoded. */
interface PostOptions {
  maxBytes: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  onProgress: FetchProgress | undefined;
  /** A decoder to feed the body to as it arrives (a JSON answer), or undefined to keep its bytes. */
  streamFor: (contentType: string | undefined) => JsonBodyStream | undefined;
}

interface Answer {
  bytes?: Buffer;
  decoded?: DecodedBody;
  received: number;
  contentType: string | undefined;
}

/**
 * One POST; resolves with the complete 2xx body, rejects with an S2SPError.
 * A stale keep-alive connection gets one retry on a fresh one (post-request.ts).
 *
 * A 2xx body that `streamFor` gives a decoder for (JSON) is decoded as it
 * arrives instead of being kept. A decoding error is only reported once the
 * transfer is over, so a transfer that fails still fails as before.
 */
function post(
  url: URL,
  payload: string,
  accept: string,
  { maxBytes, timeoutMs, signal, onProgress, streamFor }: PostOptions,
): Promise<Answer> {
  return exchangePost<Answer>(url, payload, accept, { timeoutMs, signal }, (response, finish) => {
    const status = response.statusCode ?? 0;
    const contentType = response.headers['content-type'];
    const ok = status >= 200 && status < 300;
    // An error document is small; do not let a hostile server make us buffer a lot of it.
    const limit = ok ? maxBytes : Math.min(maxBytes, 64 * 1024);
    const declared = Number(response.headers['content-length']);
    if (ok && Number.isFinite(declared) && declared > maxBytes) {
      finish(new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'declared', maxBytes, declaredBytes: declared }));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const stream = ok ? streamFor(contentType) : undefined;
    let streamError: unknown;
    response.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        if (ok) finish(new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'received', maxBytes }));
        else finish(httpFailure(status, Buffer.concat(chunks)));
        return;
      }
      if (stream === undefined) chunks.push(chunk);
      else if (streamError === undefined) {
        try {
          stream.write(chunk);
        } catch (error) {
          streamError = error;
        }
      }
      if (ok) onProgress?.(received, Number.isFinite(declared) ? declared : undefined);
    });
    response.on('end', () => {
      if (!response.complete) finish(fetchFailed({ problem: 'closedEarly' }));
      else if (!ok) finish(httpFailure(status, Buffer.concat(chunks, received)));
      else {
        let decoded: DecodedBody | undefined;
        try {
          if (streamError !== undefined) throw streamError;
          decoded = stream?.end();
        } catch (error) {
          finish(error as S2SPError);
          return;
        }
        // The total is reached only by a fetch that succeeds.
        if (!Number.isFinite(declared)) onProgress?.(received, received);
        finish(undefined, decoded === undefined ? { bytes: Buffer.concat(chunks, received), received, contentType } : { decoded, received, contentType });
      }
    });
    response.on('error', (error) =>
      finish(fetchFailed({ problem: 'broken' }, error)),
    );
    response.on('close', () => {
      if (!response.complete) finish(fetchFailed({ problem: 'closedEarly' }));
    });
  });
}

/** `value` when it is a positive number. @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` otherwise */
export function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'notPositive', option: name, value });
  }
  return value;
}
