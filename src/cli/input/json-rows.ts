/**
 * JSON text -> rows. Two shapes are tables: an array of objects (one row
 * each) and a GeoJSON FeatureCollection (one row per feature, geojson.ts).
 * Anything else is refused with a message that says which shape was found,
 * since "not a table" alone does not help someone fix their file.
 *
 * Numbers are read exactly (exact-json.ts), as Python's `json` reads them: an
 * integer beyond 2^53 stays exact (an Int64 column), and a whole-valued float
 * (`2.0`) stays a float, in a column (Float64) or inside a nested cell
 * (WholeFloat). `NaN` and `Infinity`, which Python writes bare, are read too.
 */
import { S2SPError, type ErrorParams } from '../../errors.js';
import type { Row } from '../../table/rows-from-table.js';
import { parseJsonExact } from '../../json/exact-json.js';
import { isFeatureCollection, rowsFromFeatureCollection } from './geojson.js';
import { TableFileFormat } from './table-file-format.js';

/** Rows read from JSON text, and which of the two JSON shapes they came from. */
export interface JsonRows {
  rows: Row[];
  format: typeof TableFileFormat.Json | typeof TableFileFormat.GeoJson;
  /**
   * The columns in the file's first-seen order (SPEC 2.1), given when the
   * rows' own key order differs from it: a JS object lists keys that look
   * like array indexes (`"10"`) first.
   */
  columns?: string[];
}

/**
 * Parses JSON text into rows.
 *
 * @param text the file's text (a leading BOM is ignored)
 * @param expected `geojson` to accept only a FeatureCollection; `json`
 *   accepts either shape (a FeatureCollection is still read as GeoJSON)
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` for invalid JSON or a value
 *   that is neither an array of objects nor a FeatureCollection
 */
export function rowsFromJsonText(text: string, expected: JsonRows['format'] = TableFileFormat.Json): JsonRows {
  const keyOrders = new Map<object, string[]>();
  const value = parseJson(text, keyOrders);
  if (isFeatureCollection(value)) {
    return { rows: rowsFromFeatureCollection(value), format: TableFileFormat.GeoJson };
  }
  if (expected === TableFileFormat.GeoJson) {
    throw unreadable({ problem: 'notFeatureCollection', found: value });
  }
  if (!Array.isArray(value)) {
    throw unreadable({ problem: 'notTable', found: value, singleFeature: isFeature(value) });
  }
  for (let i = 0; i < value.length; i++) {
    const row = value[i];
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw unreadable({ problem: 'elementNotObject', index: i, found: row });
    }
  }
  const rows = value as Row[];
  return keyOrders.size === 0 ? { rows, format: TableFileFormat.Json } : { rows, format: TableFileFormat.Json, columns: documentColumns(rows, keyOrders) };
}

/** Every row key, first-seen, each row's keys in the order the text wrote them. */
function documentColumns(rows: readonly Row[], keyOrders: ReadonlyMap<object, string[]>): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of keyOrders.get(row) ?? Object.keys(row)) seen.add(key);
  return [...seen];
}

function parseJson(text: string, keyOrders: Map<object, string[]>): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return parseJsonExact(body, { wholeFloats: true, keyOrders });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // JSON Lines fails on its second line; say so instead of "unexpected token".
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'invalidJson', reason, jsonLines: looksLikeJsonLines(body) }, { cause: err });
  }
}

function looksLikeJsonLines(text: string): boolean {
  const lines = text
    .slice(0, 65536)
    .split('\n', 3)
    .map((l) => l.trim());
  return lines.length >= 2 && lines[0].startsWith('{') && lines[0].endsWith('}') && lines[1].startsWith('{');
}

function isFeature(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Feature';
}

function unreadable(params: ErrorParams<'S2SP_ERR_INPUT_UNREADABLE'>): S2SPError {
  return new S2SPError('S2SP_ERR_INPUT_UNREADABLE', params);
}
