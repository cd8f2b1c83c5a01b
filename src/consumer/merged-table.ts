/**
 * The table a consumer handler receives beside its merged rows (SPEC 2.2).
 * Rebuilt from the rows alone, its types were guessed again from the chosen
 * values: a Float64 body column whose chosen values happened to be whole
 * arrived as Int32, a timestamp as text. So the body's own columns keep the
 * body's Arrow types, gathered from the fetched batches in the merged rows'
 * order; a column the abstract added, or changed (abstract values win on a
 * clash, as in the rows), is inferred from the merged values.
 *
 * Gathering covers the flat layouts take-rows.ts copies (numbers, decimals,
 * dates and times, Bool, Utf8, Binary, Null); a nested body column (a list,
 * a struct) is inferred from the merged values, as JSON text.
 */
import { RecordBatch, Schema, Struct, Table, makeData, type Data, type Field } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';
import { stringifyJsonExact } from '../json/exact-json.js';
import type { Row } from '../table/rows-from-table.js';
import { projectColumns } from '../table/select.js';
import { canTakeField, takeRows } from '../table/take-rows.js';
import { tableFromRows } from '../table/table-from-rows.js';
import { setRowValue } from './merge.js';

/**
 * The merged rows as a Table, `_row_id` first, columns in the rows' order.
 *
 * @param rows the merged rows (mergeByRowId's answer)
 * @param body the body the rows were merged from, column_mapping applied
 * @param bodyRows `body` as rows (what the merge read), in the table's order
 */
export function mergedTable(rows: readonly Row[], body: Table, bodyRows: readonly Row[]): Table {
  const inferAll = () => tableFromRows(rows, { preserveRowIds: true });
  const at = new Map<unknown, number>();
  for (let i = 0; i < bodyRows.length; i++) at.set(bodyRows[i][ROW_ID], i);
  const positions = new Int32Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const p = at.get(rows[i][ROW_ID]);
    // A chosen row the body lacks (sync mode's body_data may): nothing to gather it from.
    if (p === undefined) return inferAll();
    positions[i] = p;
  }
  const kept = new Set<string>();
  for (const field of body.schema.fields) {
    if (field.name !== ROW_ID && canTakeField(field) && unchanged(field.name, rows, bodyRows, positions)) kept.add(field.name);
  }
  if (kept.size === 0) return inferAll();

  const names = columnNames(rows);
  const inferredNames = names.filter((n) => !kept.has(n));
  const inferred = tableFromRows(
    rows.map((row) => pick(row, inferredNames)),
    { preserveRowIds: true, columns: inferredNames },
  );
  const gathered = takeRows(projectColumns(body, [...kept]), positions);
  const childOf = new Map<string, { field: Field; data: Data }>();
  const addFrom = (schema: Schema, children: readonly Data[]) => schema.fields.forEach((field, c) => childOf.set(field.name, { field, data: children[c] }));
  addFrom(gathered.schema, gathered.data.children);
  // The inferred table's _row_id (the merged rows' ids, in their order) wins over the gathered one: the same values.
  addFrom(inferred.schema, inferred.batches[0].data.children);
  const ordered = [ROW_ID, ...names].map((n) => childOf.get(n)!);
  const schema = new Schema(ordered.map((o) => o.field));
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children: ordered.map((o) => o.data) });
  return new Table(schema, [new RecordBatch(schema, data)]);
}

/** True when every merged row holds the body's value in column `name` (the abstract did not change it). */
function unchanged(name: string, rows: readonly Row[], bodyRows: readonly Row[], positions: Int32Array): boolean {
  for (let i = 0; i < rows.length; i++) {
    const a = Object.hasOwn(rows[i], name) ? rows[i][name] : undefined;
    const b = bodyRows[positions[i]][name];
    if (a === b || (a === null && b === undefined)) continue;
    if (typeof a !== 'object' || typeof b !== 'object' || stringifyJsonExact(a) !== stringifyJsonExact(b)) return false;
  }
  return true;
}

/** Every column of the rows but `_row_id`, first-seen. */
function columnNames(rows: readonly Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) if (key !== ROW_ID) seen.add(key);
  return [...seen];
}

function pick(row: Row, names: readonly string[]): Row {
  const out: Row = { [ROW_ID]: row[ROW_ID] };
  for (const name of names) if (Object.hasOwn(row, name)) setRowValue(out, name, row[name]);
  return out;
}
