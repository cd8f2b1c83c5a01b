/**
 * Parsing `abstract_domains` (SPEC 2.1): a comma-separated list of column
 * names or a JSON array string. Only an absent or empty value means "plain
 * MCP"; a value that names no column once parsed, or malformed JSON, is an
 * error, and so is a name that is not a column.
 *
 * The comma form trims each name (`mag, place`); the JSON-array form takes
 * each name exactly as written, since a column name is data and may start
 * or end with a space (a CSV header `id, name` has a column `" name"`):
 * the JSON form is how any column is named.
 */
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';

/**
 * Parses `abstract_domains`.
 * @returns the requested columns (comma form trimmed; unique, `_row_id` dropped), or
 *   `undefined` for an absent or empty value (plain MCP)
 * @throws S2SPError `S2SP_ERR_DOMAINS_INVALID`
 */
export function parseAbstractDomains(value: string | undefined): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  const trimmed = value.trim();
  let names: unknown[];
  if (trimmed.startsWith('{')) {
    throw new S2SPError('S2SP_ERR_DOMAINS_INVALID', { problem: 'jsonObject' });
  }
  if (trimmed.startsWith('[')) {
    try {
      names = JSON.parse(trimmed);
    } catch {
      throw new S2SPError('S2SP_ERR_DOMAINS_INVALID', { problem: 'badJson' });
    }
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) {
      throw new S2SPError('S2SP_ERR_DOMAINS_INVALID', { problem: 'notStrings' });
    }
  } else {
    names = trimmed.split(',').map((n) => n.trim());
  }
  const columns = [...new Set((names as string[]).filter((n) => n !== '' && n !== ROW_ID))];
  if (columns.length === 0) {
    throw new S2SPError('S2SP_ERR_DOMAINS_INVALID', { problem: 'noColumn', value });
  }
  return columns;
}

/**
 * Checks that every requested domain is a column.
 * @throws S2SPError `S2SP_ERR_DOMAINS_UNKNOWN` naming the unknown ones and listing the available ones
 */
export function checkDomainsExist(domains: readonly string[], columns: readonly string[]): void {
  const known = new Set(columns);
  const unknown = domains.filter((d) => !known.has(d));
  if (unknown.length === 0) return;
  throw new S2SPError('S2SP_ERR_DOMAINS_UNKNOWN', { unknown, columns });
}
