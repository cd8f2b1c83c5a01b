/**
 * MCP tool results the wrappers return: compact JSON text for the LLM, and
 * tool errors (`isError: true`) whose text says what to do next and whose
 * `_meta` carries the stable code for programs.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPError, isS2SPError } from '../errors.js';

/** `_meta` key holding an error's stable code. */
export const ERROR_CODE_META_KEY = 's2sp/error-code';

/** A tool result holding `value` as one compact JSON text block. */
export function jsonToolResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

/**
 * A tool error for `error`. S2SP errors keep their message (written for an
 * LLM to act on); anything else becomes a generic internal error, because a
 * stack trace in the LLM's context helps nobody.
 */
export function errorToolResult(error: unknown): CallToolResult {
  const s2sp = isS2SPError(error) ? (error as S2SPError) : new S2SPError('S2SP_ERR_INTERNAL');
  return {
    isError: true,
    content: [{ type: 'text', text: `Error ${s2sp.code}: ${s2sp.message}` }],
    _meta: { [ERROR_CODE_META_KEY]: s2sp.code },
  };
}
