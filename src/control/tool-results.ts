/**
 * MCP tool results the wrappers return: compact JSON text for the LLM, and
 * tool errors (`isError: true`) whose text says what to do next and whose
 * `_meta` carries the stable code for programs.
 */
import type { ToolResult as CallToolResult } from './tool-host.js';
import { S2SPError, isS2SPError } from '../errors.js';
import type { Listener, ToolFailedEvent } from '../observe.js';
import { redactedError } from '../protocol/log-redaction.js';
import { stringifyJsonExact } from '../json/exact-json.js';

/** `_meta` key holding an error's stable code. */
export const ERROR_CODE_META_KEY = 's2sp/error-code';

/** Longest error text a tool result carries; every input quoted in it is bounded already, this bounds the sum. */
const MAX_ERROR_TEXT = 2000;

/** Where a tool's unexpected failures go when nobody else listens: one line on stderr (stdout may be the MCP channel), tokens redacted. */
export const logToolFailure: Listener<ToolFailedEvent> = ({ error, tool }) => {
  const safe = redactedError(error);
  process.stderr.write(`s2sp: tool ${tool} failed: ${safe.stack ?? `${safe.type}: ${safe.message}`}\n`);
};

/** A tool result holding `value` as one compact JSON text block (bigints as their exact digits). */
export function jsonToolResult(value: unknown): CallToolResult {
  return textToolResult(stringifyJsonExact(value));
}

/** A tool result holding `text` (JSON already) as one text block. */
export function textToolResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

/**
 * A tool error for `error`. S2SP errors keep their message (written for an
 * LLM to act on); anything else becomes a generic internal error, because a
 * stack trace in the LLM's context helps nobody.
 */
export function errorToolResult(error: unknown): CallToolResult {
  const s2sp = isS2SPError(error) ? (error as S2SPError) : new S2SPError('S2SP_ERR_TOOL_FAILED');
  const text = `Error ${s2sp.code}: ${s2sp.message}`;
  return {
    isError: true,
    content: [{ type: 'text', text: text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text }],
    _meta: { [ERROR_CODE_META_KEY]: s2sp.code },
  };
}

/**
 * The tool result for anything a tool call threw: an S2SP error as is (its
 * message is written for the LLM); anything else goes to `observe` in full (by default logged,
 * tokens redacted) and becomes `S2SP_ERR_TOOL_FAILED`, whose message names no
 * internals (a driver's error can hold a connection string).
 */
export function toolFailureResult(error: unknown, tool: string, observe: Listener<ToolFailedEvent> = logToolFailure): CallToolResult {
  if (isS2SPError(error)) return errorToolResult(error);
  try {
    observe({ type: 'tool-failed', tool, error });
  } catch {
    // A broken listener must not turn a tool error into a protocol error.
  }
  return errorToolResult(new S2SPError('S2SP_ERR_TOOL_FAILED'));
}
