/**
 * The resource tool's envelope (SPEC 2.1): what the LLM sees instead of the
 * table. Keys in a fixed order, `_row_id` first in every row.
 */
import type { Table } from 'apache-arrow';
import { AbstractFormat } from '../protocol/abstract-format.js';
import { ROW_ID } from '../protocol/row-id.js';
import { rowsFromTable, type Row } from '../table/rows-from-table.js';
import { projectColumns } from '../table/select.js';

/** Default cap on abstract rows per envelope (SPEC 2.4). */
export const DEFAULT_ABSTRACT_ROW_LIMIT = 1000;

/** The envelope as sent on the control plane. */
export interface Envelope {
  total_rows: number;
  columns: string[];
  abstract_domains: string[];
  body_domains: string[];
  /** Present only for a layout other than the default `rows` (SPEC 2.4). */
  abstract_format?: AbstractFormat;
  /** `rows`: one object per row; `columns`: a header array, then one value array per row. */
  abstract: Row[] | unknown[][];
  abstract_truncated?: true;
  resource_url?: string;
  body?: Row[];
}

/** Where the body goes: cached behind a URL (async) or inline (sync). */
export type BodyPlacement = { mode: 'async'; resourceUrl: string } | { mode: 'sync' };

/** The data columns of a body table (every column but `_row_id`), in order. */
export function dataColumns(table: Table): string[] {
  return table.schema.fields.map((f) => f.name).filter((n) => n !== ROW_ID);
}

/**
 * Builds the envelope for `table` (with `_row_id` first).
 * @param domains checked abstract domains
 * @param abstractRowLimit rows kept in `abstract`; above it `abstract_truncated` is set
 * @param format the layout of `abstract` (default `rows`, the reference's)
 */
export function buildEnvelope(
  table: Table,
  domains: readonly string[],
  placement: BodyPlacement,
  abstractRowLimit = DEFAULT_ABSTRACT_ROW_LIMIT,
  format: AbstractFormat = AbstractFormat.rows,
): Envelope {
  const columns = dataColumns(table);
  const abstractSet = new Set(domains);
  const bodyDomains = columns.filter((c) => !abstractSet.has(c));
  const truncated = table.numRows > abstractRowLimit;
  const head = truncated ? table.slice(0, abstractRowLimit) : table;
  const abstractRows = rowsFromTable(projectColumns(head, domains));
  const envelope: Envelope = {
    total_rows: table.numRows,
    columns,
    abstract_domains: [...domains],
    body_domains: bodyDomains,
    // Only a non-default layout is named, so the default envelope stays the reference's byte for byte.
    ...(format === AbstractFormat.columns ? { abstract_format: format } : {}),
    abstract: format === AbstractFormat.columns ? columnsLayout([ROW_ID, ...domains], abstractRows) : abstractRows,
  };
  if (truncated) envelope.abstract_truncated = true;
  if (placement.mode === 'async') envelope.resource_url = placement.resourceUrl;
  else envelope.body = rowsFromTable(projectColumns(table, bodyDomains.length > 0 ? bodyDomains : [ROW_ID]));
  return envelope;
}

/** The `columns` layout: the header once, then each row's values in header order. */
function columnsLayout(header: string[], rows: readonly Row[]): unknown[][] {
  const out: unknown[][] = [header];
  for (const row of rows) out.push(header.map((name) => row[name]));
  return out;
}
