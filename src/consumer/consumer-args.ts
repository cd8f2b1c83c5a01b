/**
 * The consumer tool's parameters (SPEC 2.2): four strings, as the Python
 * reference defines them, so any MCP agent can call a consumer tool. The
 * parsers here turn `abstract_data` and `body_data` into rows, and say which
 * parameter is wrong and how to fix it, since the reader is an LLM.
 */
import { S2SPError, type ErrorParams } from '../errors.js';
import { ROW_ID, isRowId } from '../protocol/row-id.js';
import { parseJsonExact } from '../table/exact-json.js';
import type { Row } from '../table/rows-from-table.js';

/** The consumer tool's arguments, exactly as the agent sends them. */
export interface ConsumerArgs {
  /** JSON array of the abstract rows the agent chose, or `"*"` for every row. */
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
 * @returns the rows, or `'*'` for every row of the resource (SPEC 2.4)
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` naming the parameter and the problem
 */
export function parseAbstractData(text: string): Row[] | '*' {
  if (typeof text === 'string' && text.trim() === '*') return '*';
  return parseRows(text, 'abstract_data');
}

/**
 * Parses `body_data`.
 *
 * @param text the parameter as passed
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` naming the parameter and the problem
 */
export function parseBodyData(text: string): Row[] {
  return parseRows(text, 'body_data');
}

/** True when an optional string parameter was given: not absent, not blank. */
export function isGiven(value: string | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function parseRows(text: string, param: 'abstract_data' | 'body_data'): Row[] {
  if (typeof text !== 'string') {
    throw invalid({ problem: 'rowsNotString', param, got: text });
  }
  if (text.trim() === '') throw invalid({ problem: 'rowsMissing', param });
  let parsed: unknown;
  try {
    // Exact: an int64 beyond 2^53 in sync-mode body rows keeps its digits.
    parsed = parseJsonExact(text);
  } catch {
    throw invalid({ problem: 'rowsNotJson', param });
  }
  if (!Array.isArray(parsed)) {
    throw invalid({ problem: 'rowsNotArray', param, got: parsed });
  }
  const tooDeep = firstTooDeep(parsed);
  if (tooDeep !== undefined) throw invalid({ problem: 'rowTooDeep', param, index: tooDeep, maxDepth: MAX_NESTING_DEPTH });
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
      if (typeof value !== 'object' || value === null) continue;
      if (depth > MAX_NESTING_DEPTH) return i;
      for (const child of Array.isArray(value) ? value : Object.values(value)) {
        if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

function invalid(params: ErrorParams<'S2SP_ERR_CONSUMER_ARG_INVALID'>): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', params);
}
