/**
 * A consumer tool's resolution (SPEC 2.2, 2.4): from the four string
 * arguments to the merged rows its handler receives.
 *
 *   abstract_data -> ids -> body rows (fetched from resource_url, or taken
 *   from body_data) -> column_mapping on both sides -> merge by _row_id
 *
 * Only the rows the agent chose are fetched; `"*"` fetches every row.
 *
 * The fetched body arrives as an Arrow Table and column_mapping renames its
 * columns there. For `"*"` that table is the answer, turned into rows once;
 * otherwise the merge with the abstract is row-based, so the body becomes
 * rows once, and the result table takes the body's columns, with their
 * Arrow types, from the fetched table (merged-table.ts).
 */
import type { Table } from 'apache-arrow';
import type { Registry } from 'prom-client';
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';
import { rowsFromTable, type Row } from '../table/rows-from-table.js';
import { tableFromRows } from '../table/table-from-rows.js';
import { applyColumnMapping, tableWithColumnMapping } from './column-mapping.js';
import { checkConsumerArgs, parseBodyData, type ConsumerArgs } from './consumer-args.js';
import { fetchBody, type FetchBodyOptions } from './fetch-body.js';
import { mergeByRowId } from './merge.js';
import { mergedTable } from './merged-table.js';

/** Options of {@link resolveConsumerRows}. */
export interface ResolveOptions {
  /** Origins trusted besides loopback for resource_url. */
  allowedOrigins?: readonly string[];
  /** Largest body fetched, in bytes (fetchBody's default when absent). */
  maxBodyBytes?: number;
  /** Time limit of the fetch in milliseconds (fetchBody's default when absent). */
  timeoutMs?: number;
  /** A prom-client Registry that counts the fetches (fetchBody's `registry`). */
  registry?: Registry;
  /** Progress of the fetch, as fetchBody reports it. */
  observe?: FetchBodyOptions['observe'];
  /** Aborts the fetch (the tool call was cancelled): the transfer is cut, so the data plane keeps the token and releases its lease. */
  signal?: AbortSignal;
}

/** What a consumer handler receives. */
export interface ResolvedRows {
  /** Merged rows, in the abstract's order (the body's order for `"*"`), `_row_id` first. */
  rows: Row[];
  /** The same rows as an Arrow Table, `_row_id` first. */
  table: Table;
  /** Where the body came from; `abstract_only` when neither resource_url nor body_data was given. */
  source: 'resource_url' | 'body_data' | 'abstract_only';
  /** Bytes fetched over the data plane (0 unless source is resource_url). */
  bytesReceived: number;
}

/**
 * Resolves a consumer tool's arguments to merged rows.
 *
 * @param args the tool arguments as the agent sent them
 * @param options origin allow-list and fetch limits
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for malformed arguments, and
 *   every error of {@link fetchBody} when the body is fetched
 */
export async function resolveConsumerRows(args: ConsumerArgs, options: ResolveOptions = {}): Promise<ResolvedRows> {
  const { abstract, mapping, resourceUrl, bodyData } = checkConsumerArgs(args);
  const bodyRows = bodyData === undefined ? undefined : parseBodyData(bodyData);
  const fetchOptions = {
    allowedOrigins: options.allowedOrigins,
    maxBytes: options.maxBodyBytes,
    timeoutMs: options.timeoutMs,
    registry: options.registry,
    observe: options.observe,
    signal: options.signal,
  };

  if (abstract === '*') {
    if (resourceUrl !== undefined) {
      const fetched = await fetchBody(resourceUrl, fetchOptions);
      const table = tableWithColumnMapping(fetched.table, mapping);
      return { rows: rowsFromTable(table), table, source: 'resource_url', bytesReceived: fetched.bytesReceived };
    }
    if (bodyRows !== undefined) {
      const table = tableWithColumnMapping(tableFromRows(bodyRows, { preserveRowIds: true }), mapping);
      return { rows: rowsFromTable(table), table, source: 'body_data', bytesReceived: 0 };
    }
    throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'starWithoutBody' });
  }

  // Body rows with the mapping already applied.
  let body: Row[] = [];
  let bodyTable: Table | undefined;
  let source: ResolvedRows['source'] = 'abstract_only';
  let bytesReceived = 0;
  if (resourceUrl !== undefined) {
    source = 'resource_url';
    const ids = uniqueIds(abstract);
    // An empty selection must not be fetched: empty row_ids means every row on the wire.
    if (ids.length > 0) {
      const fetched = await fetchBody(resourceUrl, { ...fetchOptions, rowIds: ids });
      bodyTable = tableWithColumnMapping(fetched.table, mapping);
      body = rowsFromTable(bodyTable);
      bytesReceived = fetched.bytesReceived;
    }
  } else if (bodyRows !== undefined) {
    source = 'body_data';
    // Typed as the rows were written (2.0 a float), then read back as plain values for the merge.
    bodyTable = tableWithColumnMapping(tableFromRows(bodyRows, { preserveRowIds: true }), mapping);
    body = rowsFromTable(bodyTable);
  }
  const rows = mergeByRowId(
    abstract.map((row) => applyColumnMapping(row, mapping)),
    body,
  );
  const table = bodyTable === undefined ? tableFromRows(rows, { preserveRowIds: true }) : mergedTable(rows, bodyTable, body);
  return { rows, table, source, bytesReceived };
}

/** The abstract's ids, each once, in first-seen order. */
export function uniqueIds(rows: readonly Row[]): number[] {
  return [...new Set(rows.map((row) => row[ROW_ID] as number))];
}
