/**
 * The span of a tool call (README, Observability): `tools/call <name>`, a
 * child of the `traceparent` the call came with (`params._meta.traceparent`,
 * the only way over stdio, else the HTTP header), and the parent of what the
 * tool does (the put, the consumer's fetch). Without OpenTelemetry the
 * callback is registered as it is.
 */
import type { PutResult, StreamedPutResult } from '../cache/body-store.js';
import type { Listener, ProgressEvent } from '../observe.js';
import { startSpan, traceparentOnwards, tracingAvailable, type TraceSpan } from '../telemetry/tracing.js';
import { toolCallOf, type ToolExtra, type ToolResult } from './tool-host.js';
import { ERROR_CODE_META_KEY } from './tool-results.js';

/** The span of each tool call being served, by its `extra`. */
const TOOL_SPANS = new WeakMap<object, TraceSpan>();

/** The span of the tool call whose handler got `extra`, if it has one. */
export function toolSpanOf(extra: ToolExtra | undefined): TraceSpan | undefined {
  return extra === undefined ? undefined : TOOL_SPANS.get(extra);
}

/** The `traceparent` a tool's outgoing fetch continues: its call's span, else the one the call came with. */
export function onwardTraceparent(extra: ToolExtra): string | undefined {
  return traceparentOnwards(toolSpanOf(extra), toolCallOf(extra).traceparent);
}

/** `callback` run inside its call's span; a tool error marks the span failed with the error's code. */
export function tracedTool<Args>(
  name: string,
  callback: (args: Args, extra: ToolExtra) => Promise<ToolResult>,
): (args: Args, extra: ToolExtra) => Promise<ToolResult> {
  if (!tracingAvailable) return callback;
  const attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': name, 'gen_ai.operation.name': 'execute_tool' };
  return async (args, extra) => {
    const span = startSpan(`tools/call ${name}`, 'server', toolCallOf(extra).traceparent, attributes);
    if (span === undefined) return callback(args, extra);
    TOOL_SPANS.set(extra, span);
    try {
      const result = await span.run(() => callback(args, extra));
      span.end(result.isError === true ? { code: result._meta?.[ERROR_CODE_META_KEY] ?? 'tool_error' } : undefined);
      return result;
    } catch (error) {
      span.end(error);
      throw error;
    }
  };
}

/**
 * A put inside an `s2sp.put` span under the call's span: rows (known before,
 * or from the cached table of a streamed put) and bytes stored (from the
 * put's progress, which the span listens to as well as `observe`).
 */
export async function tracedPut<T extends PutResult>(
  extra: ToolExtra,
  rows: number | undefined,
  observe: Listener<ProgressEvent> | undefined,
  put: (observe: Listener<ProgressEvent> | undefined) => Promise<T>,
): Promise<T> {
  const span = startSpan('s2sp.put', 'internal', toolSpanOf(extra), { 's2sp.rows': rows });
  if (span === undefined) return put(observe);
  let bytes: number | undefined;
  try {
    const result = await put((event) => {
      bytes = event.bytes;
      observe?.(event);
    });
    span.set({ 's2sp.rows': rows ?? (result as Partial<StreamedPutResult>).table?.numRows, 's2sp.bytes': bytes });
    span.end();
    return result;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
