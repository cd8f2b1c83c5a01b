/**
 * The consumer's data-plane client, streaming: POST to a resource_url and
 * hand over the body's record batches as they arrive, so a consumer that
 * loads them somewhere (a database, a file, an aggregate) never holds the
 * whole body. fetch-body.ts is the whole-body twin; the request, the checks
 * and the errors are the same.
 *
 * Timing differs on purpose: `timeoutMs` bounds each wait for the server
 * (the answer's headers, then every piece of the body), not the whole
 * transfer, whose pace is the caller's: it reads the next batch when it is
 * ready, and the socket waits (TCP backpressure) meanwhile.
 *
 * A JSON answer (the Python reference's) arrives whole anyway: it is read
 * to its end, checked as fetchBody checks it, and handed over as the
 * batches of its table.
 */
import { AnswerCoverage } from './answer-coverage.js';
import type http from 'node:http';
import type { RecordBatch, Schema } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { ARROW_STREAM_TYPE, mediaTypeOf } from '../protocol/media-types.js';
import { openArrowBatches } from './arrow-batches.js';
import { BodyFormat, acceptFor, bodyFormatOption, codecsToAsk } from './body-format.js';
import { DEFAULT_FETCH_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, positive, requestBody, type FetchBodyOptions } from './fetch-body.js';
import { responseInvalid } from '../json/decoded-body.js';
import { fetchFailed, httpFailure } from './http-failure.js';
import { bodyFromJson } from '../json/body-reader.js';
import { exchangePost } from './post-request.js';
import { isLoopbackHost } from '../protocol/loopback.js';
import { checkResourceUrl } from './resource-url.js';

/** A body being fetched: its schema at once, its batches as they arrive. */
export interface StreamedBody extends AsyncIterable<RecordBatch> {
  /** The columns, `_row_id` first. */
  readonly schema: Schema;
  /** The wire format the server answered in. */
  readonly format: 'json' | 'arrow';
  /** True once any batch read so far used LZ4 buffer compression. */
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
 * @param options as {@link fetchBody}'s; `timeoutMs` bounds each wait for the server
 * @throws S2SPError as {@link fetchBody}: URL and origin, arguments, `_BODY_TOO_LARGE`,
 *   `_FETCH_FAILED`, `_RESPONSE_INVALID`, `S2SP_ERR_CODEC_UNAVAILABLE` (also from the batches)
 */
export async function fetchBodyBatches(resourceUrl: string, options: FetchBodyOptions = {}): Promise<StreamedBody> {
  const url = checkResourceUrl(resourceUrl, options.allowedOrigins);
  const maxBytes = positive(options.maxBytes ?? DEFAULT_MAX_BODY_BYTES, 'maxBytes');
  const timeoutMs = positive(options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS, 'timeoutMs');
  const format = bodyFormatOption(options.format);
  const codecs = format === BodyFormat.json ? [] : codecsToAsk(options.codec, isLoopbackHost(url.hostname));
  const payload = JSON.stringify(requestBody(options));
  const { request, response } = await openAnswer(url, payload, acceptFor(format, codecs), maxBytes, timeoutMs, options.signal);
  const contentType = response.headers['content-type'];
  const answered = mediaTypeOf(contentType) === ARROW_STREAM_TYPE ? 'arrow' : 'json';
  let received = 0;
  const stop = () => {
    request.destroy();
    response.destroy();
  };
  const chunks = bodyChunks(response, maxBytes, timeoutMs, options.signal, (n) => (received += n));
  const coverage = new AnswerCoverage(options.rowIds, options.columns);
  try {
    if (format !== BodyFormat.auto && answered !== format) {
      throw responseInvalid({ problem: 'wrongFormat', asked: format, contentType });
    }
    if (answered === 'arrow') {
      const opened = await openArrowBatches(chunks, maxBytes);
      coverage.checkColumns(opened.schema);
      const batches = withCleanup(covered(opened.batches, coverage), stop);
      return {
        schema: opened.schema,
        format: answered,
        get compressed() {
          return opened.compressed();
        },
        get bytesReceived() {
          return received;
        },
        cancel: async () => {
          // return() skips the cleanup of a loop never started: stop the transfer as well.
          await batches.return(undefined);
          stop();
        },
        [Symbol.asyncIterator]: () => batches,
      };
    }
    const parts: Uint8Array[] = [];
    for await (const chunk of chunks) parts.push(chunk);
    const { table, columns } = bodyFromJson(Buffer.concat(parts, received));
    coverage.checkColumns(table.schema, { columns, rows: table.numRows });
    const batches = withCleanup(covered(fromArray(table.batches), coverage), stop);
    return {
      schema: table.schema,
      format: answered,
      compressed: false,
      bytesReceived: received,
      cancel: async () => {
        await batches.return(undefined);
        stop();
      },
      [Symbol.asyncIterator]: () => batches,
    };
  } catch (error) {
    stop();
    throw error;
  }
}

/** A 2xx answer with its headers; its body not read yet. */
interface OpenAnswer {
  request: http.ClientRequest;
  response: http.IncomingMessage;
}

/**
 * Sends the POST (a stale keep-alive connection gets one retry, post-request.ts);
 * resolves at a 2xx answer's headers, rejects with an S2SPError otherwise.
 */
function openAnswer(
  url: URL,
  payload: string,
  accept: string,
  maxBytes: number,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<OpenAnswer> {
  return exchangePost<OpenAnswer>(url, payload, accept, { timeoutMs, signal }, (response, finish, request) => {
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) {
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) finish(new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'declared', maxBytes, declaredBytes: declared }));
      else finish(undefined, { request, response });
      return;
    }
    // An error document is small; do not let a hostile server make us buffer a lot of it.
    const limit = Math.min(maxBytes, 64 * 1024);
    const parts: Buffer[] = [];
    let received = 0;
    response.on('data', (chunk: Buffer) => {
      if (received + chunk.length > limit) finish(httpFailure(status, Buffer.concat(parts)));
      received += chunk.length;
      parts.push(chunk);
    });
    response.on('end', () => finish(httpFailure(status, Buffer.concat(parts))));
    response.on('error', () => finish(httpFailure(status, Buffer.concat(parts))));
  });
}

/**
 * The body's bytes as they arrive, counted against `maxBytes`, each wait
 * bounded by `timeoutMs`; throws unless the body arrived complete.
 */
async function* bodyChunks(
  response: http.IncomingMessage,
  maxBytes: number,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  count: (n: number) => number,
): AsyncGenerator<Uint8Array> {
  const iterator = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const aborted = () => response.destroy(fetchFailed({ problem: 'aborted' }, signal?.reason));
  signal?.addEventListener('abort', aborted, { once: true });
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(fetchFailed({ problem: 'timeout', timeoutMs })),
          timeoutMs,
        );
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
      if (count(next.value.length) > maxBytes) throw new S2SPError('S2SP_ERR_CONSUMER_BODY_TOO_LARGE', { problem: 'received', maxBytes });
      yield next.value;
    }
    if (!response.complete) throw fetchFailed({ problem: 'closedEarly' });
  } finally {
    signal?.removeEventListener('abort', aborted);
    response.destroy();
  }
}

/** `batches`, then `stop` however the iteration ends (done, error, or left early). */
/** The batches, each recorded by `coverage`, which checks at the end that every requested row came. */
async function* covered(batches: AsyncIterable<RecordBatch>, coverage: AnswerCoverage): AsyncGenerator<RecordBatch> {
  for await (const batch of batches) {
    coverage.see(batch);
    yield batch;
  }
  coverage.finish();
}

async function* withCleanup(batches: AsyncIterable<RecordBatch>, stop: () => void): AsyncGenerator<RecordBatch> {
  try {
    yield* batches;
  } finally {
    stop();
  }
}

async function* fromArray(batches: readonly RecordBatch[]): AsyncGenerator<RecordBatch> {
  yield* batches;
}
