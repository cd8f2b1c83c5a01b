/**
 * Whether an MCP POST asks for progress: a JSON-RPC request (or a batch
 * holding one) whose `params._meta.progressToken` is set. The Streamable
 * HTTP endpoint answers plain JSON by default, which cannot carry the
 * notifications sent while a tool runs; such a request is answered as an
 * event stream instead, so its progress reaches the caller.
 */

/** True when `body` (a parsed JSON-RPC message or batch) carries a progress token. */
export function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined && meta?.progressToken !== null;
  });
}
