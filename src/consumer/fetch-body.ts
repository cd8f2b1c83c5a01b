/**
 * The consumer's data-plane client (SPEC 3.1, 3.2): POST to a resource_url
 * and read the selected rows. One reader: {@link fetchBodyBatches} hands
 * over the body's record batches as they arrive, and {@link fetchBody} is
 * those batches collected into a Table. Both go through one HTTP exchange
 * (http-exchange.ts: limits, timeouts, retry, abort), are counted by the
 * same metrics and report the same progress.
 *
 * An Arrow answer is decoded batch by batch (arrow-batches.ts). A JSON
 * answer (the Python reference's) is decoded as it arrives by the streaming
 * JSON decoder and handed over as the batches of its table. The Accept and
 * the answer's format live in body-format.ts.
 */
import { Table, type RecordBatch, type Schema } from 'apache-arrow';
import type { Registry } from 'prom-client';
import { S2SPError } from '../errors.js';
import { JsonBodyStream } from '../json/body-stream.js';
import type { DecodedBody } from '../json/decoded-body.js';
import { responseInvalid } from '../json/decoded-body.js';
import { positiveOption } from '../option-checks.js';
import { isLoopbackHost } from '../protocol/loopback.js';
import type { IpcCodec } from '../protocol/media-types.js';
import { rowsFromTable, type Row } from '../table/rows-from-table.js';
import { AnswerCoverage } from './answer-coverage.js';
import { openArrowBatches } from './arrow-batches.js';
import { BodyFormat, acceptFor, answeredFormat, bodyFormatOption, codecsToAsk, type BodyCodec } from './body-format.js';
import { consumerMetricsFor, type ConsumerMetrics } from './consumer-metrics.js';
import { openExchange, type OpenAnswer } from './http-exchange.js';
import { FetchSpans } from './fetch-spans.js';
import type { Listener, ProgressEvent } from '../observe.js';
import { checkResourceUrl } from './resource-url.js';

export { BodyFormat, type BodyCodec } from './body-format.js';

/** Default limit of a response body: 256 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024;
/** Default time limit of each wait for the server: 60 s. */
export const DEFAULT_FETCH_TIMEOUT_MS = 60_000;

/** Options of {@link fetchBody} and {@link fetchBodyBatches}. */
export interface FetchBodyOptions {
  /** Rows to fetch by `_row_id`; undefined means every row. Must not be empty. */
  rowIds?: readonly number[];
  /** Columns to fetch; undefined or empty means every column. */
  columns?: readonly string[];
  /** Origins trusted besides loopback (see checkResourceUrl). */
  allowedOrigins?: readonly string[];
  /** Largest response body accepted, in bytes (default 256 MiB). */
  maxBytes?: number;
  /**
   * Time limit of each wait for the server in milliseconds (default
   * 60,000): the answer's headers, then every piece of the body. Not of the
   * whole transfer, whose pace a batch reader sets.
   */
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
   * Told as the body arrives: the bytes received so far, and the
   * Content-Length as `totalBytes` when the server declared one (a streamed
   * body has none); then once more at the end with the total.
   */
  observe?: Listener<ProgressEvent>;
  /**
   * The W3C trace context this fetch continues (README, Observability): the
   * fetch's span is its child, and the data-plane request carries the
   * `traceparent` header so the resource server's span joins the trace.
   */
  traceparent?: string;
}

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

/** A body being fetched: its schema at once, its batches as they arrive. */
export interface StreamedBody extends AsyncIterable<RecordBatch> {
  /** The columns, `_row_id` first. */
  readonly schema: Schema;
  /** The wire format the server answered in. */
  readonly format: 'json' | 'arrow';
  /** True once any batch read so far used buffer compression. */
  readonly compressed: boolean;
  /** Response bytes received so far (compressed bytes for compressed Arrow). */
  readonly bytesReceived: number;
  /**
   * Stops the transfer. An unfinished transfer does not consume the token
   * (SPEC 3.4). Iterating to the end, or leaving a `for await` early, needs no call.
   */
  cancel(): Promise<void>;
}

/**
 * Fetches rows of a cached body from its resource_url, batch by batch.
 * Resolves once the schema is known; the batches, read once, follow as the
 * server sends them, in ascending `_row_id`. A transfer that breaks throws
 * from the batch where it broke, never ends early as if complete.
 *
 * @param resourceUrl the URL the resource tool returned
 * @param options rows, columns, limits, wire format, metrics and progress
 * @throws S2SPError `S2SP_ERR_CONSUMER_URL_INVALID` / `_ORIGIN_REFUSED` (URL check),
 *   `_ARG_INVALID` (bad rowIds or options), `S2SP_ERR_OPTION_INVALID` (maxBytes, timeoutMs),
 *   `_BODY_TOO_LARGE`, `_FETCH_FAILED` (non-2xx, network, timeout, abort), `_RESPONSE_INVALID`
 *   (not an S2SP body, cut short, or not the forced format), `S2SP_ERR_CODEC_UNAVAILABLE`
 *   (a codec asked for, or compressed Arrow received, that this platform cannot
 *   decompress); the batches throw the transfer's errors too
 */
export async function fetchBodyBatches(resourceUrl: string, options: FetchBodyOptions = {}): Promise<StreamedBody> {
  const body = await openBody(resourceUrl, options);
  return {
    schema: body.schema,
    format: body.format,
    get compressed() {
      return body.compressed();
    },
    get bytesReceived() {
      return body.answer.received();
    },
    cancel: body.cancel,
    [Symbol.asyncIterator]: () => body.batches,
  };
}

/**
 * Fetches rows of a cached body from its resource_url: {@link fetchBodyBatches}
 * collected into one Table.
 *
 * @param resourceUrl the URL the resource tool returned
 * @param options rows, columns, limits, wire format, metrics and progress
 * @throws S2SPError as {@link fetchBodyBatches}
 */
export async function fetchBody(resourceUrl: string, options: FetchBodyOptions = {}): Promise<FetchedBody> {
  const body = await openBody(resourceUrl, options);
  const batches: RecordBatch[] = [];
  for await (const batch of body.batches) batches.push(batch);
  const table = body.json?.table ?? (batches.length === 0 ? new Table(body.schema) : new Table(body.schema, batches));
  return {
    table,
    totalRows: body.json?.totalRows ?? table.numRows,
    columns: body.json?.columns ?? table.schema.fields.map((f) => f.name),
    bytesReceived: body.answer.received(),
    format: body.format,
    compressed: body.compressed(),
    ...(body.codec() === undefined ? {} : { codec: body.codec() }),
    rows: () => rowsFromTable(table),
  };
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

/** A body opened for reading: what both fetches are made of. */
interface OpenedBody {
  readonly schema: Schema;
  readonly format: 'json' | 'arrow';
  readonly answer: OpenAnswer;
  /** The batches, each checked against the request, counted by the metrics at the end; read once. */
  readonly batches: AsyncGenerator<RecordBatch>;
  /** A JSON answer, decoded whole (its `total_rows` and `columns_returned` with it). */
  readonly json?: DecodedBody;
  compressed(): boolean;
  codec(): IpcCodec | undefined;
  cancel(): Promise<void>;
}

/** Opens the exchange and the decoder of the answer's format; counts a fetch that fails here. */
async function openBody(resourceUrl: string, options: FetchBodyOptions): Promise<OpenedBody> {
  const metrics = options.registry === undefined ? undefined : await consumerMetricsFor(options.registry);
  const spans = new FetchSpans(options.traceparent);
  try {
    const url = checkResourceUrl(resourceUrl, options.allowedOrigins);
    const maxBytes = positiveOption(options.maxBytes, 'maxBytes') ?? DEFAULT_MAX_BODY_BYTES;
    const timeoutMs = positiveOption(options.timeoutMs, 'timeoutMs') ?? DEFAULT_FETCH_TIMEOUT_MS;
    const format = bodyFormatOption(options.format);
    const codecs = format === BodyFormat.json ? [] : codecsToAsk(options.codec, isLoopbackHost(url.hostname));
    const payload = JSON.stringify(requestBody(options));
    const answer = await openExchange(url, payload, acceptFor(format, codecs), {
      maxBytes,
      timeoutMs,
      signal: options.signal,
      observe: options.observe,
      traceparent: spans.traceparent,
    });
    spans.answered();
    try {
      const answered = answeredFormat(answer.contentType);
      if (format !== BodyFormat.auto && answered !== format) {
        throw responseInvalid({ problem: 'wrongFormat', asked: format, contentType: answer.contentType });
      }
      const coverage = new AnswerCoverage(options.rowIds, options.columns);
      const decoded = answered === 'arrow' ? await arrowAnswer(answer, maxBytes, coverage) : await jsonAnswer(answer, coverage);
      const body: OpenedBody = {
        ...decoded,
        format: answered,
        answer,
        batches: counted(covered(decoded.batches, coverage), answer, metrics, spans, () => body),
        cancel: async () => {
          // return() skips the cleanup of a loop never started: stop the transfer as well.
          await body.batches.return(undefined);
          answer.stop();
          spans.failed({ code: 'cancelled' });
        },
      };
      return body;
    } catch (error) {
      answer.stop();
      throw error;
    }
  } catch (error) {
    metrics?.failed(error);
    spans.failed(error);
    throw error;
  }
}

type Decoded = Pick<OpenedBody, 'schema' | 'json' | 'compressed' | 'codec'> & { batches: AsyncIterable<RecordBatch> };

async function arrowAnswer(answer: OpenAnswer, maxBytes: number, coverage: AnswerCoverage): Promise<Decoded> {
  const opened = await openArrowBatches(answer.chunks, maxBytes);
  coverage.checkColumns(opened.schema);
  return { schema: opened.schema, batches: opened.batches, compressed: opened.compressed, codec: opened.codec };
}

/** A JSON answer arrives whole anyway: decoded as it comes, then handed over as its table's batches. */
async function jsonAnswer(answer: OpenAnswer, coverage: AnswerCoverage): Promise<Decoded> {
  const stream = new JsonBodyStream();
  for await (const chunk of answer.chunks) stream.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  const json = stream.end();
  coverage.checkColumns(json.table.schema, { columns: json.columns, rows: json.table.numRows });
  return { schema: json.table.schema, json, batches: fromArray(json.table.batches), compressed: () => false, codec: () => undefined };
}

/** The batches, each recorded by `coverage`, which checks at the end that every requested row came. */
async function* covered(batches: AsyncIterable<RecordBatch>, coverage: AnswerCoverage): AsyncGenerator<RecordBatch> {
  for await (const batch of batches) {
    coverage.see(batch);
    yield batch;
  }
  coverage.finish();
}

/** The batches, then the fetch counted (done or failed); the transfer is stopped however the iteration ends early. */
async function* counted(
  batches: AsyncIterable<RecordBatch>,
  answer: OpenAnswer,
  metrics: ConsumerMetrics | undefined,
  spans: FetchSpans,
  body: () => OpenedBody,
): AsyncGenerator<RecordBatch> {
  let complete = false;
  let rows = 0;
  try {
    for await (const batch of batches) {
      rows += batch.numRows;
      yield batch;
    }
    complete = true;
    const { format, compressed, codec } = body();
    metrics?.fetched({ format, compressed: compressed(), codec: codec(), bytesReceived: answer.received() });
    spans.done({ format, codec: codec(), rows, bytes: answer.received() });
  } catch (error) {
    metrics?.failed(error);
    spans.failed(error);
    throw error;
  } finally {
    // A complete answer leaves its keep-alive connection to the pool.
    if (!complete) answer.stop();
    spans.failed({ code: 'cancelled' });
  }
}

async function* fromArray(batches: readonly RecordBatch[]): AsyncGenerator<RecordBatch> {
  yield* batches;
}
