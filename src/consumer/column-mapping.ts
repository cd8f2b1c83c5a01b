/**
 * `column_mapping` (SPEC 2.2): a JSON object renaming columns, source name ->
 * consumer name, e.g. `{"event": "alert_type"}`. It is applied to abstract and
 * body rows alike before they are merged, so both sides agree on names.
 *
 * Renames are simultaneous (looked up by the original name), so a swap
 * `{"a": "b", "b": "a"}` works. A renamed column replaces an unrenamed column
 * that already had the target name.
 */
import { RecordBatch, Schema, Struct, Table, makeData, type Field } from 'apache-arrow';
import { S2SPError, type ErrorParams } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';
import type { Row } from '../table/rows-from-table.js';
import { setRowValue } from './merge.js';

/**
 * Parses the `column_mapping` parameter.
 *
 * @param text the parameter as the agent passed it
 * @returns the mapping, or undefined when absent or empty
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for malformed JSON, a value that
 *   is not an object of non-empty strings, two columns mapped to one name, or `_row_id`
 *   on either side
 */
export function parseColumnMapping(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined || text === null) return undefined;
  if (typeof text !== 'string') throw invalid({ problem: 'mappingNotString' });
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid({ problem: 'mappingNotJson' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid({ problem: 'mappingNotObject' });
  }
  const mapping: Record<string, string> = {};
  const sourceOf = new Map<string, string>();
  for (const [source, target] of Object.entries(parsed)) {
    if (typeof target !== 'string' || target === '') {
      throw invalid({ problem: 'mappingBadTarget', source, target });
    }
    if (source === ROW_ID || target === ROW_ID) {
      throw invalid({ problem: 'mappingRowId' });
    }
    const earlier = sourceOf.get(target);
    if (earlier !== undefined) {
      throw invalid({ problem: 'mappingSameTarget', first: earlier, second: source, target });
    }
    sourceOf.set(target, source);
    setRowValue(mapping, source, target);
  }
  return mapping;
}

/**
 * Renames the keys of one row.
 *
 * @param row a row with `_row_id`
 * @param mapping from {@link parseColumnMapping}; undefined returns the row unchanged
 * @returns a new row (or `row` itself without a mapping), key order kept, `_row_id` first
 */
export function applyColumnMapping(row: Row, mapping: Record<string, string> | undefined): Row {
  if (mapping === undefined) return row;
  const out: Row = {};
  if (Object.hasOwn(row, ROW_ID)) out[ROW_ID] = row[ROW_ID];
  for (const key of Object.keys(row)) {
    if (key === ROW_ID) continue;
    const target = Object.hasOwn(mapping, key) ? mapping[key] : undefined;
    if (target !== undefined) {
      setRowValue(out, target, row[key]);
    } else if (!isShadowed(row, key, mapping)) {
      setRowValue(out, key, row[key]);
    }
  }
  return out;
}

/**
 * Renames the columns of a table the way {@link applyColumnMapping} renames
 * the keys of each of its rows (every row of a table has every column, so
 * the result is the same), without turning the table into rows: `_row_id`
 * first, renamed fields keep their place (and their type and metadata), a
 * shadowed column is dropped, and the column buffers are shared, not copied.
 *
 * @param table a table with `_row_id`
 * @param mapping from {@link parseColumnMapping}; undefined returns the table unchanged
 */
export function tableWithColumnMapping(table: Table, mapping: Record<string, string> | undefined): Table {
  if (mapping === undefined) return table;
  // A stand-in row with every column, for isShadowed.
  const probe: Row = Object.fromEntries(table.schema.fields.map((f) => [f.name, true]));
  const rowIdAt = table.schema.fields.findIndex((f) => f.name === ROW_ID);
  const keep: number[] = rowIdAt < 0 ? [] : [rowIdAt];
  const fields: Field[] = rowIdAt < 0 ? [] : [table.schema.fields[rowIdAt]];
  for (const [i, field] of table.schema.fields.entries()) {
    if (field.name === ROW_ID) continue;
    const target = Object.hasOwn(mapping, field.name) ? mapping[field.name] : undefined;
    if (target === undefined && isShadowed(probe, field.name, mapping)) continue;
    keep.push(i);
    fields.push(target === undefined ? field : field.clone({ name: target }));
  }
  const schema = new Schema(fields, table.schema.metadata);
  const batches = table.batches.map((batch) => {
    const children = keep.map((i) => batch.data.children[i]);
    return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children }));
  });
  return batches.length === 0 ? new Table(schema) : new Table(schema, batches);
}

/** True when some other column of `row` is renamed to `key`, which then wins. */
function isShadowed(row: Row, key: string, mapping: Record<string, string>): boolean {
  for (const source of Object.keys(mapping)) {
    if (mapping[source] === key && source !== key && Object.hasOwn(row, source)) return true;
  }
  return false;
}

function invalid(params: ErrorParams<'S2SP_ERR_CONSUMER_ARG_INVALID'>): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', params);
}
