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
import { S2SPError, type ErrorParams } from '../errors.js';
import { ROW_ID, isRowId } from '../protocol/row-id.js';
import { parseJsonExact } from '../json/exact-json.js';
import { WholeFloat } from '../json/whole-float.js';
import type { Row } from '../table/rows-from-table.js';
import { parseColumnMapping } from './column-mapping.js';
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
 * Deepest nesting accepted in `abstract_data` and `body_data`: the array is
 * level 1, a row level 2, its values from level 3. Table values nest a few
 * levels; a value nested thousands deep only serves to overflow the stack of
 * whatever walks it later.
 */
export const MAX_NESTING_DEPTH = 64;

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
  const parsed = parseJsonArray(text, 'abstract_data');
  const first: unknown = parsed[0];
  if (typeof first === 'number') return rowsFromIds(parsed);
  if (Array.isArray(first)) return checkDepth(rowsFromColumnsLayout(parsed), 'abstract_data');
  return checkRowObjects(parsed, 'abstract_data');
}

/**
 * Parses `body_data`. Its whole floats (`2.0`, which the dispatcher keeps)
 * are WholeFloats (exact-json.ts): rows for tableFromRows, so a Float64
 * body column stays Float64, not rows for a handler.
 *
 * @param text the parameter as passed
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` naming the parameter and the problem
 */
export function parseBodyData(text: string): Row[] {
  return checkRowObjects(parseJsonArray(text, 'body_data', true), 'body_data');
}

/** A consumer tool's arguments, parsed and checked, before any request goes out. */
export interface CheckedConsumerArgs {
  /** The abstract's rows, or '*' for every row of the body. */
  readonly abstract: Row[] | '*';
  readonly mapping: Record<string, string> | undefined;
  /** The resource_url when one was given (then body_data was not). */
  readonly resourceUrl?: string;
  /** body_data, as text, when it was given (then resource_url was not). */
  readonly bodyData?: string;
}

/**
 * Parses and checks every argument: a bad one found after the fetch would
 * have spent the single-use token for nothing.
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` naming the parameter and the problem
 */
export function checkConsumerArgs(args: ConsumerArgs): CheckedConsumerArgs {
  const abstract = parseAbstractData(args.abstract_data);
  const mapping = parseColumnMapping(args.column_mapping);
  const hasUrl = isGiven(args.resource_url);
  const hasBody = isGiven(args.body_data);
  if (hasUrl && hasBody) throw invalid({ problem: 'urlAndBody' });
  return { abstract, mapping, ...(hasUrl ? { resourceUrl: args.resource_url } : {}), ...(hasBody ? { bodyData: args.body_data } : {}) };
}

/** True when an optional string parameter was given: not absent, not blank. */
export function isGiven(value: string | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function parseJsonArray(text: string, param: RowsParam, wholeFloats = false): unknown[] {
  if (typeof text !== 'string') {
    throw invalid({ problem: 'rowsNotString', param, got: text });
  }
  if (text.trim() === '') throw invalid({ problem: 'rowsMissing', param });
  let parsed: unknown;
  try {
    // Exact: an int64 beyond 2^53 in sync-mode body rows keeps its digits.
    parsed = parseJsonExact(text, { wholeFloats });
  } catch {
    throw invalid({ problem: 'rowsNotJson', param });
  }
  if (!Array.isArray(parsed)) {
    throw invalid({ problem: 'rowsNotArray', param, got: parsed });
  }
  return parsed;
}

function checkRowObjects(parsed: unknown[], param: RowsParam): Row[] {
  checkDepth(parsed, param);
  for (let i = 0; i < parsed.length; i++) {
    const row = parsed[i];
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw invalid({ problem: 'rowNotObject', param, index: i });
    }
    if (!Object.hasOwn(row, ROW_ID)) {
      throw invalid({ problem: 'rowNoRowId', param, index: i });
    }
    const id = (row as Row)[ROW_ID];
    if (!isRowId(id)) {
      throw invalid({ problem: 'rowBadRowId', param, index: i, id });
    }
  }
  return parsed as Row[];
}

/** Refuses rows nesting deeper than {@link MAX_NESTING_DEPTH}; returns them otherwise. */
function checkDepth<T>(rows: T[], param: RowsParam): T[] {
  const tooDeep = firstTooDeep(rows);
  if (tooDeep !== undefined) throw invalid({ problem: 'rowTooDeep', param, index: tooDeep, maxDepth: MAX_NESTING_DEPTH });
  return rows;
}

/**
 * The index of the first row nesting deeper than {@link MAX_NESTING_DEPTH},
 * or undefined. Iterative: JSON.parse accepts any depth, and a recursive walk
 * would overflow on the very input it is meant to refuse.
 */
function firstTooDeep(rows: readonly unknown[]): number | undefined {
  for (let i = 0; i < rows.length; i++) {
    const stack: Array<[unknown, number]> = [[rows[i], 2]];
    while (stack.length > 0) {
      const [value, depth] = stack.pop()!;
      if (typeof value !== 'object' || value === null || value instanceof WholeFloat) continue;
      if (depth > MAX_NESTING_DEPTH) return i;
      for (const child of Array.isArray(value) ? value : Object.values(value)) {
        if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

/** A bare id list: every item a `_row_id`. */
function rowsFromIds(parsed: unknown[]): Row[] {
  const rows: Row[] = new Array(parsed.length);
  for (let i = 0; i < parsed.length; i++) {
    const id = parsed[i];
    if (!isRowId(id)) throw invalid({ problem: 'idBad', index: i, id });
    rows[i] = { [ROW_ID]: id };
  }
  return rows;
}

/** The `columns` layout: a header of distinct column names holding `_row_id`, then one array per row. */
function rowsFromColumnsLayout(parsed: unknown[]): Row[] {
  const header = parsed[0] as unknown[];
  const named = new Set<string>();
  for (const name of header) {
    if (typeof name !== 'string') throw invalid({ problem: 'headerNotNames' });
    if (named.has(name)) throw invalid({ problem: 'headerDuplicate', name });
    named.add(name);
  }
  const idAt = header.indexOf(ROW_ID);
  if (idAt < 0) throw invalid({ problem: 'headerNoRowId' });
  const names = header as string[];
  const rows: Row[] = new Array(parsed.length - 1);
  for (let i = 1; i < parsed.length; i++) {
    const values = parsed[i];
    // Rows count from the first line after the header, as an LLM reads them.
    const index = i - 1;
    if (!Array.isArray(values)) throw invalid({ problem: 'lineNotArray', index });
    if (values.length !== names.length) throw invalid({ problem: 'lineLength', index, values: values.length, columns: names.length });
    const id: unknown = values[idAt];
    if (!isRowId(id)) throw invalid({ problem: 'rowBadRowId', param: 'abstract_data', index, id });
    const row: Row = { [ROW_ID]: id };
    for (let c = 0; c < names.length; c++) if (c !== idAt) setRowValue(row, names[c], values[c]);
    rows[index] = row;
  }
  return rows;
}

type RowsParam = 'abstract_data' | 'body_data';

function invalid(params: ErrorParams<'S2SP_ERR_CONSUMER_ARG_INVALID'>): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', params);
}
