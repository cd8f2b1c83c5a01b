/**
 * The resource tool's envelope (SPEC 2.1): what the LLM sees instead of the
 * table. Keys in a fixed order, `_row_id` first in every row.
 */
import type { Schema, Table } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';
import { stringifyJsonExact } from '../table/exact-json.js';
import { jsonRowFragment } from '../table/json-encoding.js';
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
  abstract: Row[];
  abstract_truncated?: true;
  resource_url?: string;
  /** When `resource_url` stops working, ISO 8601 (async only). */
  expires_at?: string;
  body?: Row[];
}

/** Where the body goes: cached behind a URL until `expiresAt` (epoch ms; async) or inline (sync). */
export type BodyPlacement = { mode: 'async'; resourceUrl: string; expiresAt: number } | { mode: 'sync' };

/** The data columns of a body table or schema (every column but `_row_id`), in order. */
export function dataColumns(table: Table | Schema): string[] {
  const schema = 'schema' in table ? table.schema : table;
  return schema.fields.map((f) => f.name).filter((n) => n !== ROW_ID);
}

/**
 * Builds the envelope for `table` (with `_row_id` first).
 * @param domains checked abstract domains
 * @param abstractRowLimit rows kept in `abstract`; above it `abstract_truncated` is set
 */
export function buildEnvelope(
  table: Table,
  domains: readonly string[],
  placement: BodyPlacement,
  abstractRowLimit = DEFAULT_ABSTRACT_ROW_LIMIT,
): Envelope {
  const columns = dataColumns(table);
  const abstractSet = new Set(domains);
  const bodyDomains = columns.filter((c) => !abstractSet.has(c));
  const truncated = table.numRows > abstractRowLimit;
  const head = truncated ? table.slice(0, abstractRowLimit) : table;
  const envelope: Envelope = {
    total_rows: table.numRows,
    columns,
    abstract_domains: [...domains],
    body_domains: bodyDomains,
    abstract: rowsFromTable(projectColumns(head, domains)),
  };
  if (truncated) envelope.abstract_truncated = true;
  if (placement.mode === 'async') {
    envelope.resource_url = placement.resourceUrl;
    envelope.expires_at = new Date(placement.expiresAt).toISOString();
  } else envelope.body = rowsFromTable(projectColumns(table, bodyDomains.length > 0 ? bodyDomains : [ROW_ID]));
  return envelope;
}

/**
 * The envelope's JSON text, for the tool result the LLM and the Python
 * reference read. Its rows are written by the data plane's JSON encoder, not
 * by `JSON.stringify` of `envelope.abstract`, so every value reads exactly
 * as in a fetched body (README, "JSON encoding of Arrow types"): `2.0` stays
 * a float and an int64 beyond 2^53 keeps its digits. Other keys are written
 * in the envelope object's order.
 *
 * @param envelope what {@link buildEnvelope} made of `table`
 * @param table the body table it was built from
 */
export function envelopeText(envelope: Envelope, table: Table): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(envelope)) {
    if (value === undefined) continue;
    let text: string;
    if (key === 'abstract') {
      text = rowsText(projectColumns(table.slice(0, (value as Row[]).length), envelope.abstract_domains));
    } else if (key === 'body') {
      text = rowsText(projectColumns(table, envelope.body_domains.length > 0 ? envelope.body_domains : [ROW_ID]));
    } else {
      text = stringifyJsonExact(value);
    }
    parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

/** `[...]` holding every row of `table`, as the data plane's JSON encoder writes them. */
export function rowsText(table: Table): string {
  const fragment = jsonRowFragment(table);
  return `[${Buffer.from(fragment.buffer, fragment.byteOffset, fragment.byteLength).toString('utf8')}]`;
}
