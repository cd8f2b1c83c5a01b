/**
 * A consumer tool's resolution for handlers that ask for record batches
 * (SPEC 2.2, 2.4): the same four arguments as resolve.ts, but the body is
 * handed over as it arrives, never turned into rows, and never merged with
 * the abstract. The body's columns are the resource's own, typed as the
 * resource server holds them; the abstract rows (what the agent chose, as
 * JSON it wrote) come beside them, for a handler that needs a column the
 * agent added or changed.
 *
 *   resource_url -> the chosen rows' batches (every row for "*"), ascending _row_id
 *   body_data    -> its rows (the chosen ones), as batches, ascending _row_id
 *   neither      -> the abstract rows as batches, ascending _row_id
 *
 * column_mapping renames the columns of both. The rows flavour
 * (resolve.ts) is this, collected and merged.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import type { Registry } from 'prom-client';
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';
import type { Row } from '../table/rows-from-table.js';
import { tableFromRows } from '../table/table-from-rows.js';
import { applyColumnMapping, batchRenamer } from './column-mapping.js';
import { checkConsumerArgs, parseBodyData, type ConsumerArgs } from './consumer-args.js';
import { fetchBodyBatches, type FetchBodyOptions } from './fetch-body.js';

/** Options of {@link resolveConsumerBatches} and resolveConsumerRows. */
export interface ResolveOptions {
  /** Origins trusted besides loopback for resource_url. */
  allowedOrigins?: readonly string[];
  /** Largest body fetched, in bytes (the fetch's default when absent). */
  maxBodyBytes?: number;
  /** Time limit of each wait for the server in milliseconds (the fetch's default when absent). */
  timeoutMs?: number;
  /** A prom-client Registry that counts the fetches (the fetch's `registry`). */
  registry?: Registry;
  /** Progress of the fetch, as the fetch reports it. */
  observe?: FetchBodyOptions['observe'];
  /** Aborts the fetch (the tool call was cancelled): the transfer is cut, so the data plane keeps the token and releases its lease. */
  signal?: AbortSignal;
  /** The W3C trace context the fetch continues (the fetch's `traceparent`). */
  traceparent?: string;
}

/** Where a consumer's body came from; `abstract_only` when neither resource_url nor body_data was given. */
export type BodySource = 'resource_url' | 'body_data' | 'abstract_only';

/** What a consumer handler that asks for batches receives. */
export interface ResolvedBatches {
  /** The abstract rows the agent chose (column_mapping applied), or `'*'` for every row of the resource. */
  abstract: Row[] | '*';
  /** The body's schema, `_row_id` first (column_mapping applied). */
  schema: Schema;
  /** The body, batch by batch as it arrives, in ascending `_row_id`; read once. */
  batches: AsyncIterable<RecordBatch>;
  /** Where the body came from; `abstract_only` when neither resource_url nor body_data was given. */
  source: BodySource;
  /** Bytes received over the data plane so far (0 unless source is resource_url). */
  readonly bytesReceived: number;
  /** Stops a transfer still running (the token stays unconsumed). */
  cancel(): Promise<void>;
}

/**
 * Resolves a consumer tool's arguments to body batches. Resolves once the
 * body's schema is known; the batches follow.
 *
 * @param args the tool arguments as the agent sent them
 * @param options origin allow-list and fetch limits (`timeoutMs` bounds each wait for the server)
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for malformed arguments, and every
 *   error of {@link fetchBodyBatches} (the batches throw its transfer errors too)
 */
export async function resolveConsumerBatches(args: ConsumerArgs, options: ResolveOptions = {}): Promise<ResolvedBatches> {
  const { abstract, mapping, resourceUrl, bodyData } = checkConsumerArgs(args);
  const mapped = abstract === '*' ? '*' : abstract.map((row) => applyColumnMapping(row, mapping));

  if (resourceUrl !== undefined) {
    const ids = abstract === '*' ? undefined : uniqueIds(abstract);
    // An empty selection must not be fetched: empty row_ids means every row on the wire.
    if (ids === undefined || ids.length > 0) {
      const fetched = await fetchBodyBatches(resourceUrl, {
        allowedOrigins: options.allowedOrigins,
        maxBytes: options.maxBodyBytes,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        registry: options.registry,
        observe: options.observe,
        traceparent: options.traceparent,
        rowIds: ids,
      });
      const renamer = batchRenamer(fetched.schema, mapping);
      return {
        abstract: mapped,
        schema: renamer.schema,
        batches: renamed(fetched, renamer.rename),
        source: 'resource_url',
        get bytesReceived() {
          return fetched.bytesReceived;
        },
        cancel: () => fetched.cancel(),
      };
    }
    return fromRows(mapped, [], 'resource_url');
  }
  if (bodyData !== undefined) {
    const all = parseBodyData(bodyData);
    const wanted = abstract === '*' ? undefined : new Set(abstract.map((row) => row[ROW_ID]));
    const chosen = wanted === undefined ? all : all.filter((row) => wanted.has(row[ROW_ID]));
    return fromRows(
      mapped,
      chosen.map((row) => applyColumnMapping(row, mapping)),
      'body_data',
    );
  }
  if (abstract === '*') {
    throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'starWithoutBody' });
  }
  return fromRows(mapped, mapped as Row[], 'abstract_only');
}

/** A body already held as rows (sync mode's body_data, or the abstract alone), as batches. */
function fromRows(abstract: Row[] | '*', rows: Row[], source: BodySource): ResolvedBatches {
  const sorted = [...rows].sort((a, b) => (a[ROW_ID] as number) - (b[ROW_ID] as number));
  const table = tableFromRows(sorted, { preserveRowIds: true });
  return {
    abstract,
    schema: table.schema,
    batches: fromArray(table.batches),
    source,
    bytesReceived: 0,
    cancel: async () => {},
  };
}

async function* renamed(batches: AsyncIterable<RecordBatch>, rename: (batch: RecordBatch) => RecordBatch): AsyncGenerator<RecordBatch> {
  for await (const batch of batches) yield rename(batch);
}

async function* fromArray(batches: readonly RecordBatch[]): AsyncGenerator<RecordBatch> {
  yield* batches;
}

/** The abstract's ids, each once, in first-seen order. */
export function uniqueIds(rows: readonly Row[]): number[] {
  return [...new Set(rows.map((row) => row[ROW_ID] as number))];
}
