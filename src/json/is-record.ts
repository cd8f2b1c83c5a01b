/**
 * The test every reader of parsed JSON (tool arguments, tool outputs,
 * issuer metadata) makes before it reads a member: an object, not an array
 * and not null.
 */

/** True for a plain object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
