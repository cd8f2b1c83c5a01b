/**
 * A consumer tool's resolution (SPEC 2.2, 2.4): from the four string
 * arguments to the merged rows its handler receives.
 *
 *   abstract_data -> ids -> body rows (fetched from resource_url, or taken
 *   from body_data) -> column_mapping on both sides -> merge by _row_id
 *
 * Only the rows the agent chose are fetched; `"*"` fetches every row. This
 * is resolveConsumerBatches (the same fetch, metrics and progress) with its
 * batches collected into a Table, column_mapping already applied. For `"*"`
 * that table is the answer, turned into rows once; otherwise the merge with
 * the abstract is row-based, so the body becomes rows once, and the result
 * table takes the body's columns, with their Arrow types, from the fetched
 * table (merged-table.ts).
 */
import { Table, type RecordBatch } from 'apache-arrow';
import { rowsFromTable, type Row } from '../table/rows-from-table.js';
import { tableFromRows } from '../table/table-from-rows.js';
import type { ConsumerArgs } from './consumer-args.js';
import { mergeByRowId } from './merge.js';
import { mergedTable } from './merged-table.js';
import { resolveConsumerBatches, type BodySource, type ResolveOptions } from './resolve-batches.js';

/** What a consumer handler receives. */
export interface ResolvedRows {
  /** Merged rows, in the abstract's order (the body's order for `"*"`), `_row_id` first. */
  rows: Row[];
  /** The same rows as an Arrow Table, `_row_id` first. */
  table: Table;
  /** Where the body came from; `abstract_only` when neither resource_url nor body_data was given. */
  source: BodySource;
  /** Bytes fetched over the data plane (0 unless source is resource_url). */
  bytesReceived: number;
}

/**
 * Resolves a consumer tool's arguments to merged rows.
 *
 * @param args the tool arguments as the agent sent them
 * @param options origin allow-list, fetch limits, metrics and progress
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for malformed arguments, and
 *   every error of fetchBodyBatches when the body is fetched
 */
export async function resolveConsumerRows(args: ConsumerArgs, options: ResolveOptions = {}): Promise<ResolvedRows> {
  const resolved = await resolveConsumerBatches(args, options);
  const batches: RecordBatch[] = [];
  for await (const batch of resolved.batches) batches.push(batch);
  const { abstract, source } = resolved;
  const bytesReceived = resolved.bytesReceived;
  // Without a body the abstract rows are the answer: nothing to merge them with.
  const bodyTable = source === 'abstract_only' ? undefined : batches.length === 0 ? new Table(resolved.schema) : new Table(resolved.schema, batches);
  if (abstract === '*') {
    const table = bodyTable as Table;
    return { rows: rowsFromTable(table), table, source, bytesReceived };
  }
  const body = bodyTable === undefined ? [] : rowsFromTable(bodyTable);
  const rows = mergeByRowId(abstract, body);
  const table = bodyTable === undefined || body.length === 0 ? tableFromRows(rows, { preserveRowIds: true }) : mergedTable(rows, bodyTable, body);
  return { rows, table, source, bytesReceived };
}
