/**
 * The fetch request body (SPEC 3.1), checked in two steps: its shape before
 * the token is leased, its ids and columns against the body after. Both steps
 * throw 400s, and a 400 never consumes the token.
 */
import type { Table } from 'apache-arrow';
import type { CachedBody } from '../cache/body-store.js';
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';
import { sortedUniqueIds } from '../table/select.js';

/** A fetch request whose shape is valid. */
export interface FetchRequest {
  /** Requested row ids as sent; undefined means every row. */
  readonly rowIds?: readonly number[];
  /** Requested columns as sent; undefined means every column. */
  readonly columns?: readonly string[];
}

/** A fetch request checked against the body: ids ascending and unique, columns existing. */
export interface ResolvedFetch {
  readonly sortedIds?: number[];
  readonly columns?: readonly string[];
}

/**
 * Checks the shape of a parsed request body.
 * @throws S2SPError 400 codes for a body that is not an object, or ids/columns of the wrong type
 */
export function parseFetchRequest(body: unknown): FetchRequest {
  // undefined: no request body at all. JSON `null` is a body that is not an object.
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new S2SPError('S2SP_ERR_REQUEST_BODY_INVALID', { problem: 'notObject', got: body });
  }
  const { row_ids: rowIds, columns } = body as { row_ids?: unknown; columns?: unknown };
  const out: { rowIds?: number[]; columns?: string[] } = {};
  if (rowIds !== undefined && rowIds !== null) {
    if (!Array.isArray(rowIds)) {
      throw new S2SPError('S2SP_ERR_REQUEST_ROW_IDS_INVALID', { problem: 'notArray', got: rowIds });
    }
    // The list is built only when something is wrong: every fetch passes here.
    const bad = rowIds.every(isIdLike) ? [] : rowIds.filter((id) => !isIdLike(id));
    if (bad.length > 0) {
      throw new S2SPError('S2SP_ERR_REQUEST_ROW_IDS_INVALID', { problem: 'notIntegers', bad });
    }
    if (rowIds.length > 0) out.rowIds = rowIds as number[];
  }
  if (columns !== undefined && columns !== null) {
    if (!Array.isArray(columns)) {
      throw new S2SPError('S2SP_ERR_REQUEST_COLUMNS_INVALID', { problem: 'notArray', got: columns });
    }
    const bad = columns.every(isString) ? [] : columns.filter((c) => !isString(c));
    if (bad.length > 0) {
      throw new S2SPError('S2SP_ERR_REQUEST_COLUMNS_INVALID', { problem: 'notStrings', bad });
    }
    if (columns.length > 0) out.columns = columns as string[];
  }
  return out;
}

/**
 * Checks a request against the cached body. Every fetch passes here, so the
 * checks are plain loops over the body's row count and its column names
 * (worked out once per table): no closure, set or copy per request.
 * @throws S2SPError 400 codes for ids out of range or unknown columns
 */
export function resolveFetch(request: FetchRequest, body: Pick<CachedBody, 'table' | 'totalRows'>): ResolvedFetch {
  const { table, totalRows } = body;
  let sortedIds: number[] | undefined;
  if (request.rowIds !== undefined) {
    if (!allBelow(request.rowIds, totalRows)) {
      const bad = request.rowIds.filter((id) => id >= totalRows);
      throw new S2SPError('S2SP_ERR_REQUEST_ROW_IDS_INVALID', { problem: 'outOfRange', totalRows, bad });
    }
    sortedIds = sortedUniqueIds(request.rowIds);
  }
  const columns = request.columns;
  if (columns !== undefined) {
    const names = namesOf(table);
    if (!allKnown(columns, names)) {
      const unknown = columns.filter((c) => !names.has(c));
      const available = table.schema.fields.map((f) => f.name).filter((n) => n !== ROW_ID);
      throw new S2SPError('S2SP_ERR_REQUEST_COLUMNS_INVALID', { problem: 'unknown', unknown, available });
    }
  }
  return { sortedIds, columns };
}

function allBelow(ids: readonly number[], limit: number): boolean {
  for (let i = 0; i < ids.length; i++) if (ids[i] >= limit) return false;
  return true;
}

function allKnown(columns: readonly string[], names: ReadonlySet<string>): boolean {
  for (let i = 0; i < columns.length; i++) if (!names.has(columns[i])) return false;
  return true;
}

function isString(value: unknown): boolean {
  return typeof value === 'string';
}

function isIdLike(id: unknown): boolean {
  return Number.isInteger(id) && (id as number) >= 0;
}

/** Column names per body (every fetch with columns asks; the schema never changes). */
const namesByTable = new WeakMap<Table, ReadonlySet<string>>();

function namesOf(table: Table): ReadonlySet<string> {
  let names = namesByTable.get(table);
  if (names === undefined) namesByTable.set(table, (names = new Set(table.schema.fields.map((f) => f.name))));
  return names;
}
