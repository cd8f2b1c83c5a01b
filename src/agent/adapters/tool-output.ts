/**
 * Tool outputs in the shapes agent frameworks hand them to their hooks,
 * run through the S2SP dispatcher (SPEC 2.3). The MCP client inside a
 * framework has already unwrapped the `CallToolResult`: one framework passes
 * the text of a single text block, another the content-block array, a third
 * the result itself. Each shape goes back to the framework as it came, so the
 * model sees the same kind of output with the body replaced by a handle.
 */
import type { ToolResult as CallToolResult } from '../../control/tool-host.js';
import type { S2SPDispatcher } from '../dispatcher.js';
import { isRecord } from '../../json/is-record.js';

type ContentBlock = CallToolResult['content'][number];

/** True for an object shaped like an MCP tool result (a `content` array). */
export function isCallToolResult(value: unknown): value is CallToolResult {
  return isRecord(value) && Array.isArray(value.content);
}

/**
 * Withholds sync-mode bodies from a tool output in any of the shapes above.
 * @param dispatcher parks each body and mints its `ddi://` handle
 * @param output a text string, an array of content blocks, or a CallToolResult
 * @returns the output in the same shape with each envelope's `body` replaced
 *   by a `ddi://` resource_url, or undefined when it held no envelope
 */
export function withholdBodies(dispatcher: S2SPDispatcher, output: unknown): unknown {
  if (typeof output === 'string') {
    const input: CallToolResult = { content: [{ type: 'text', text: output }] };
    const result = dispatcher.afterToolResult(input);
    return result === input ? undefined : textOf(result.content[0]);
  }
  if (Array.isArray(output) && output.every(isRecord)) {
    // Framework content blocks share MCP's text-block shape ({type, text}); others pass through untouched.
    const input: CallToolResult = { content: output as ContentBlock[] };
    const result = dispatcher.afterToolResult(input);
    return result === input ? undefined : result.content;
  }
  if (isCallToolResult(output)) {
    const result = dispatcher.afterToolResult(output);
    return result === output ? undefined : result;
  }
  return undefined;
}

function textOf(block: ContentBlock | undefined): string {
  return block?.type === 'text' ? block.text : '';
}
