/**
 * The consumer's merge (SPEC 2.2): body rows joined onto the abstract rows
 * the agent chose, by `_row_id`.
 *
 * Key order of a merged row is `_row_id`, then the body's columns, then any
 * abstract-only columns. The body holds every column of the resource in the
 * tool's own order, so merged rows look like the rows the tool returned.
 */
import type { Row } from '../table/rows-from-table.js';
import { ROW_ID } from '../protocol/row-id.js';

/**
 * Sets `row[key] = value` as an own data property, even for `__proto__`
 * (which plain assignment would treat as the prototype). Rows come from
 * JSON.parse, which does create an own `__proto__` key.
 */
export function setRowValue(row: Row, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true });
  else row[key] = value;
}

/**
 * Merges body rows into abstract rows by `_row_id`.
 *
 * @param abstractRows the rows the agent chose, in the order it chose them
 * @param bodyRows fetched (or inline) body rows, any order
 * @returns one row per abstract row, in the abstract's order, `_row_id` first;
 *   abstract values win on a clash; an abstract row whose id has no body row
 *   keeps just its abstract values
 */
export function mergeByRowId(abstractRows: readonly Row[], bodyRows: readonly Row[]): Row[] {
  const byId = new Map<unknown, Row>();
  for (const row of bodyRows) byId.set(row[ROW_ID], row);
  return abstractRows.map((abstract) => {
    const id = abstract[ROW_ID];
    const out: Row = { [ROW_ID]: id };
    const body = byId.get(id);
    if (body !== undefined) {
      for (const key of Object.keys(body)) {
        if (key !== ROW_ID) setRowValue(out, key, body[key]);
      }
    }
    // Assignment to an existing key keeps that key's position: a clashing
    // column stays where the body had it, with the abstract's value.
    for (const key of Object.keys(abstract)) {
      if (key !== ROW_ID) setRowValue(out, key, abstract[key]);
    }
    return out;
  });
}
