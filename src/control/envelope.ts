/**
 * The resource tool's envelope (SPEC 2.1): what the LLM sees instead of the
 * table. Keys in a fixed order, `_row_id` first in every row.
 */
import type { Schema, Table } from 'apache-arrow';
import { AbstractFormat } from '../protocol/abstract-format.js';
import { ROW_ID } from '../protocol/row-id.js';
import { stringifyJsonExact } from '../json/exact-json.js';
import { jsonArrayRowFragment, jsonRowFragment } from '../json/body-writer.js';
import { rowsFromTable, type Row } from '../table/rows-from-table.js';
import { projectColumns } from '../table/select.js';

/** Default cap on abstract rows per envelope (SPEC 2.4). */
export const DEFAULT_ABSTRACT_ROW_LIMIT = 1000;

/** What every envelope holds, whatever the layout of its abstract. */
interface EnvelopeFields {
  total_rows: number;
  columns: string[];
  abstract_domains: string[];
  body_domains: string[];
  abstract_truncated?: true;
  resource_url?: string;
  /** When `resource_url` stops working, ISO 8601 (async only). */
  expires_at?: string;
  body?: Row[];
}

/** The envelope as sent on the control plane, in the default `rows` layout (the reference's). */
export interface Envelope extends EnvelopeFields {
  abstract_format?: undefined;
  /** One object per row, `_row_id` first. */
  abstract: Row[];
}

/** An envelope asked for with `abstract_format: "columns"` (SPEC 2.4). */
export interface ColumnsEnvelope extends EnvelopeFields {
  abstract_format: typeof AbstractFormat.columns;
  /** A header array of column names (`_row_id` first), then one value array per row. */
  abstract: unknown[][];
}

/** An envelope in either layout, told apart by `abstract_format`. */
export type AnyEnvelope = Envelope | ColumnsEnvelope;

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
 * @param format the layout of `abstract` (default `rows`, the reference's)
 */
export function buildEnvelope(
  table: Table,
  domains: readonly string[],
  placement: BodyPlacement,
  abstractRowLimit = DEFAULT_ABSTRACT_ROW_LIMIT,
  format: AbstractFormat = AbstractFormat.rows,
): AnyEnvelope {
  const columns = dataColumns(table);
  const abstractSet = new Set(domains);
  const bodyDomains = columns.filter((c) => !abstractSet.has(c));
  const truncated = table.numRows > abstractRowLimit;
  const head = truncated ? table.slice(0, abstractRowLimit) : table;
  const abstractRows = rowsFromTable(projectColumns(head, domains));
  const fields: EnvelopeFields = { total_rows: table.numRows, columns, abstract_domains: [...domains], body_domains: bodyDomains };
  // Only a non-default layout is named, so the default envelope stays the reference's byte for byte.
  const envelope: AnyEnvelope =
    format === AbstractFormat.columns
      ? { ...fields, abstract_format: format, abstract: columnsLayout([ROW_ID, ...domains], abstractRows) }
      : { ...fields, abstract: abstractRows };
  if (truncated) envelope.abstract_truncated = true;
  // A sync body is not made into row objects here: its text is written from the table (bodyText).
  if (placement.mode === 'async') {
    envelope.resource_url = placement.resourceUrl;
    envelope.expires_at = new Date(placement.expiresAt).toISOString();
  }
  return envelope;
}

/**
 * The envelope's JSON text, for the tool result the LLM and the Python
 * reference read. Its rows are written by the data plane's JSON encoder, not
 * by `JSON.stringify` of `envelope.abstract`, so every value reads exactly
 * as in a fetched body (README, "JSON encoding of Arrow types"): `2.0` stays
 * a float and an int64 beyond 2^53 keeps its digits. Other keys are written
 * in the envelope object's order. An `abstract` in the `columns` layout
 * (SPEC 2.4) is written as its header, then one value array per row, by the
 * same encoder.
 *
 * @param envelope what {@link buildEnvelope} made of `table`
 * @param table the body table it was built from
 */
export function envelopeText(envelope: AnyEnvelope, table: Table): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(envelope)) {
    if (value === undefined) continue;
    let text: string;
    if (key === 'abstract') {
      const columnsFormat = envelope.abstract_format === AbstractFormat.columns;
      // The columns layout holds its header line before the rows.
      const rowCount = (value as unknown[]).length - (columnsFormat ? 1 : 0);
      const head = projectColumns(table.slice(0, rowCount), envelope.abstract_domains);
      text = columnsFormat ? columnsText(head) : rowsText(head);
    } else {
      text = stringifyJsonExact(value);
    }
    parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

/** The sync-mode body of `envelope` as JSON text: every row, `_row_id` and the body domains. */
export function bodyText(envelope: AnyEnvelope, table: Table): string {
  return rowsText(projectColumns(table, envelope.body_domains.length > 0 ? envelope.body_domains : [ROW_ID]));
}

/** `[...]` holding every row of `table`, as the data plane's JSON encoder writes them. */
export function rowsText(table: Table): string {
  const fragment = jsonRowFragment(table);
  return `[${Buffer.from(fragment.buffer, fragment.byteOffset, fragment.byteLength).toString('utf8')}]`;
}

/** `[header, [...], ...]`: the `columns` layout of every row of `table`, values as the data plane's JSON encoder writes them. */
export function columnsText(table: Table): string {
  const header = JSON.stringify(table.schema.fields.map((f) => f.name));
  const fragment = jsonArrayRowFragment(table);
  if (fragment.byteLength === 0) return `[${header}]`;
  return `[${header},${Buffer.from(fragment.buffer, fragment.byteOffset, fragment.byteLength).toString('utf8')}]`;
}

/** The `columns` layout: the header once, then each row's values in header order. */
function columnsLayout(header: string[], rows: readonly Row[]): unknown[][] {
  const out: unknown[][] = [header];
  for (const row of rows) out.push(header.map((name) => row[name]));
  return out;
}
