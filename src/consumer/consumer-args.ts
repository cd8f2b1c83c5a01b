/**
 * The consumer tool's parameters (SPEC 2.2): four strings, as the Python
 * reference defines them, so any MCP agent can call a consumer tool. The
 * parsers here turn `abstract_data` and `body_data` into rows, and say which
 * parameter is wrong and how to fix it, since the reader is an LLM.
 *
 * `abstract_data` comes in three shapes (SPEC 2.4): the reference's row
 * objects, the `columns` layout (a header array, then one array per row), or
 * a bare array of `_row_id` numbers. They are told apart by the first item:
 * an object, an array, a number.
 */
import { S2SPError } from '../errors.js';
import { ROW_ID, isRowId } from '../protocol/row-id.js';
import type { Row } from '../table/rows-from-table.js';
import { setRowValue } from './merge.js';

/** The consumer tool's arguments, exactly as the agent sends them. */
export interface ConsumerArgs {
  /**
   * JSON array of the abstract rows the agent chose (as objects, or in the
   * `columns` layout with its header first), a JSON array of their `_row_id`s,
   * or `"*"` for every row.
   */
  abstract_data: string;
  /** Async mode: the resource_url from the resource tool. */
  resource_url?: string;
  /** Sync mode: JSON array of body rows. */
  body_data?: string;
  /** JSON object renaming columns, e.g. `{"event": "alert_type"}`. */
  column_mapping?: string;
}


/**
 * Parses `abstract_data`.
 *
 * @param text the parameter as passed
 * @returns the rows as objects, `_row_id` first (just `{_row_id}` for a bare
 *   id), or `'*'` for every row of the resource (SPEC 2.4)
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` naming the parameter and the problem
 */
export function parseAbstractData(text: string): Row[] | '*' {
  if (typeof text === 'string' && text.trim() === '*') return '*';
  const param = 'abstract_data';
  const hint =
    'pass the abstract rows exactly as the resource tool returned them (for the "columns" format, its header array first), ' +
    'a JSON array of their _row_id numbers, or "*" for every row';
  const parsed = parseJsonArray(text, param, hint);
  const first: unknown = parsed[0];
  if (typeof first === 'number') return rowsFromIds(parsed, param, hint);
  if (Array.isArray(first)) return rowsFromColumnsLayout(parsed, param, hint);
  return checkRowObjects(parsed, param, hint);
}

/**
 * Parses `body_data`.
 *
 * @param text the parameter as passed
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` naming the parameter and the problem
 */
export function parseBodyData(text: string): Row[] {
  return parseRows(text, 'body_data', 'pass the body rows exactly as the resource tool returned them');
}

/** True when an optional string parameter was given: not absent, not blank. */
export function isGiven(value: string | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function parseRows(text: string, param: string, hint: string): Row[] {
  return checkRowObjects(parseJsonArray(text, param, hint), param, hint);
}

function parseJsonArray(text: string, param: string, hint: string): unknown[] {
  if (typeof text !== 'string') {
    throw invalid(`${param} must be a string holding a JSON array, got ${describe(text)}; ${hint}`);
  }
  if (text.trim() === '') throw invalid(`${param} is missing or empty; ${hint}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(`${param} is not valid JSON; ${hint} (a JSON array of objects)`);
  }
  if (!Array.isArray(parsed)) {
    throw invalid(`${param} must be a JSON array of row objects, got ${describe(parsed)}; ${hint}`);
  }
  return parsed;
}

function checkRowObjects(parsed: unknown[], param: string, hint: string): Row[] {
  for (let i = 0; i < parsed.length; i++) {
    const row = parsed[i];
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw invalid(`${param} row ${i} is not a JSON object; ${hint}`);
    }
    if (!Object.hasOwn(row, ROW_ID)) {
      throw invalid(`${param} row ${i} has no ${ROW_ID}; ${hint}`);
    }
    const id = (row as Row)[ROW_ID];
    if (!isRowId(id)) {
      throw invalid(`${param} row ${i} has ${ROW_ID} ${JSON.stringify(id)}, not a non-negative integer; ${hint}`);
    }
  }
  return parsed as Row[];
}

/** A bare id list: every item a `_row_id`. */
function rowsFromIds(parsed: unknown[], param: string, hint: string): Row[] {
  const rows: Row[] = new Array(parsed.length);
  for (let i = 0; i < parsed.length; i++) {
    const id = parsed[i];
    if (!isRowId(id)) {
      throw invalid(`${param} item ${i} is ${describe(id)} ${boundedJson(id)}, not a ${ROW_ID} (a non-negative integer); ${hint}`);
    }
    rows[i] = { [ROW_ID]: id };
  }
  return rows;
}

/** The `columns` layout: a header of distinct column names holding `_row_id`, then one array per row. */
function rowsFromColumnsLayout(parsed: unknown[], param: string, hint: string): Row[] {
  const header = parsed[0] as unknown[];
  const named = new Set<string>();
  for (const name of header) {
    if (typeof name !== 'string') {
      throw invalid(`${param} starts with an array but its first array is not the header of column names; ${hint}`);
    }
    if (named.has(name)) throw invalid(`${param} header names column ${boundedJson(name)} twice; ${hint}`);
    named.add(name);
  }
  const idAt = header.indexOf(ROW_ID);
  if (idAt < 0) throw invalid(`${param} header has no ${ROW_ID}; ${hint}`);
  const names = header as string[];
  const rows: Row[] = new Array(parsed.length - 1);
  for (let i = 1; i < parsed.length; i++) {
    const values = parsed[i];
    // Row numbers count from the first row after the header, as an LLM reads them.
    if (!Array.isArray(values)) throw invalid(`${param} row ${i - 1} is not an array like its header; ${hint}`);
    if (values.length !== names.length) {
      throw invalid(`${param} row ${i - 1} has ${values.length} values for ${names.length} header columns; ${hint}`);
    }
    const id: unknown = values[idAt];
    if (!isRowId(id)) {
      throw invalid(`${param} row ${i - 1} has ${ROW_ID} ${boundedJson(id)}, not a non-negative integer; ${hint}`);
    }
    const row: Row = { [ROW_ID]: id };
    for (let c = 0; c < names.length; c++) if (c !== idAt) setRowValue(row, names[c], values[c]);
    rows[i - 1] = row;
  }
  return rows;
}

/** At most 40 characters of a value's JSON, for messages (they echo input). */
function boundedJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function invalid(message: string): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', message);
}
