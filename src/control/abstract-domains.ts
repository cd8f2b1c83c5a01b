/**
 * Parsing `abstract_domains` (SPEC 2.1): a comma-separated list of column
 * names or a JSON array string. Only an absent or empty value means "plain
 * MCP"; a value that names no column once parsed, or malformed JSON, is an
 * error, and so is a name that is not a column.
 */
import { S2SPError } from '../errors.js';
import { ROW_ID } from '../protocol/row-id.js';

/**
 * Parses `abstract_domains`.
 * @returns the requested columns (trimmed, unique, `_row_id` dropped), or
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
    names = trimmed.split(',');
  }
  const columns = [...new Set((names as string[]).map((n) => n.trim()).filter((n) => n !== '' && n !== ROW_ID))];
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
