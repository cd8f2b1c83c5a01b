/**
 * The one place the tool wrappers touch an MCP SDK. Both SDK lines are
 * served: v2 (`@modelcontextprotocol/server`, the stable line since
 * 2026-07-29) and v1 (`@modelcontextprotocol/sdk`, fixes only). Neither is
 * imported here, not even for types: a host installs one line, and s2sp's
 * declarations must type-check against whichever it is. So this file states
 * structurally what s2sp needs of each: `registerTool` on a server, and of a
 * tool call's context, its abort signal, its `_meta` and a way to send a
 * notification (v1 passes a `RequestHandlerExtra`, v2 a `ServerContext`
 * whose request-scoped parts sit under `mcpReq`).
 */

/**
 * An MCP server s2sp can register tools on: a v2 or a v1 `McpServer`
 * (anything with their `registerTool`). The parameters are `never` so that
 * both lines' overloaded, generic `registerTool` fit; s2sp calls it through
 * {@link registerToolOn}, in the one form both lines take.
 */
export interface McpToolHost {
  registerTool(name: string, config: never, callback: never): unknown;
}

/** What `registerTool` returns on the host's SDK line (`RegisteredTool` on both). */
export type RegisteredToolOf<Host extends McpToolHost> = ReturnType<Host['registerTool']>;

/** The `_meta` of a tool call's request, as far as s2sp reads it. */
export interface ToolCallMeta {
  progressToken?: string | number;
  [key: string]: unknown;
}

/** A notification a tool call sends on its own request's stream. */
export interface ToolNotification {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * Who called a tool over an authorized MCP endpoint (README, Security >
 * Authorization): from the access token's verified claims. The token itself
 * is not here.
 */
export interface CallerIdentity {
  /** `sub`: the user (or, for client credentials, the client) the token was issued for. */
  subject?: string;
  /** The OAuth client the caller used (`client_id`, `azp`). */
  clientId?: string;
  /** The authorization server that issued the token (`iss`). */
  issuer?: string;
  /** The token's scopes. */
  scopes: readonly string[];
  /** Every verified claim of the token (or of its introspection answer). */
  claims: Readonly<Record<string, unknown>>;
}

/**
 * The SDKs' `AuthInfo` (the same shape on both lines), as s2sp fills it in:
 * the verified identity under `extra.caller`.
 */
export interface ToolAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  resource?: URL;
  extra?: Record<string, unknown>;
}

/** SDK v1's `RequestHandlerExtra`, the parts s2sp uses (the SDK passes more). */
export interface V1ToolExtra {
  signal: AbortSignal;
  _meta?: ToolCallMeta;
  sendNotification(notification: never): Promise<void>;
  /** The verified token of an authorized HTTP request. */
  authInfo?: ToolAuthInfo;
  /** The HTTP request's headers (HTTP only). */
  requestInfo?: { headers: Record<string, string | string[] | undefined> };
}

/** SDK v2's `ServerContext`, the parts s2sp uses (the SDK passes more). */
export interface V2ToolContext {
  mcpReq: {
    signal: AbortSignal;
    _meta?: ToolCallMeta;
    /** The 2026-07-28 request envelope (absent on a 2025-era request). */
    envelope?: Record<string, unknown>;
    notify(notification: never): Promise<void>;
  };
  /** The HTTP request (HTTP only), and the verified token of an authorized one. */
  http?: { authInfo?: ToolAuthInfo; req?: { headers: { get(name: string): string | null } } };
}

/**
 * The second argument of a tool handler: the SDK's own context of the call,
 * passed through as it came (`'mcpReq' in extra` tells v2 from v1).
 */
export type ToolExtra = V1ToolExtra | V2ToolContext;

/** A tool call's context with the two SDK lines' differences taken out. */
export interface ToolCall {
  /** Aborted when the caller cancels (`notifications/cancelled`, or its HTTP stream closes). */
  signal: AbortSignal | undefined;
  /** The progress token the caller sent, if any. */
  progressToken: string | number | undefined;
  /** Sends a notification related to this call. */
  notify(notification: ToolNotification): Promise<void>;
  /**
   * `modern` for a protocol 2026-07-28 request (its `_meta` envelope names
   * the revision; SDK v2 only), `legacy` for a 2025-era one.
   */
  era: 'modern' | 'legacy';
  /** Who called, when the MCP endpoint checked an access token (README, Security > Authorization). */
  caller: CallerIdentity | undefined;
  /**
   * The W3C `traceparent` the call came with: `params._meta.traceparent`
   * (the only way over stdio), else the HTTP request's header.
   */
  traceparent: string | undefined;
}

/** The `_meta` key naming a request's protocol revision (2026-07-28). */
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

/** The {@link ToolCall} of a handler's `extra`, on either SDK line. */
export function toolCallOf(extra: ToolExtra | undefined): ToolCall {
  if (extra !== undefined && 'mcpReq' in extra) {
    const request = extra.mcpReq;
    const notify = request.notify.bind(request) as (notification: ToolNotification) => Promise<void>;
    const era = typeof request.envelope?.[PROTOCOL_VERSION_KEY] === 'string' ? 'modern' : 'legacy';
    const traceparent = stringOf(request._meta?.traceparent) ?? stringOf(extra.http?.req?.headers.get('traceparent'));
    return { signal: request.signal, progressToken: request._meta?.progressToken, notify, era, caller: callerOfAuth(extra.http?.authInfo), traceparent };
  }
  const v1 = extra as V1ToolExtra | undefined;
  const send = v1?.sendNotification?.bind(v1) as ((notification: ToolNotification) => Promise<void>) | undefined;
  return {
    signal: v1?.signal,
    progressToken: v1?._meta?.progressToken,
    notify: send ?? (async () => {}),
    era: 'legacy',
    caller: callerOfAuth(v1?.authInfo),
    traceparent: stringOf(v1?._meta?.traceparent) ?? stringOf(v1?.requestInfo?.headers.traceparent),
  };
}

/**
 * Who called the tool whose handler got `extra`: the identity the MCP
 * endpoint verified (README, Security > Authorization), or undefined on an
 * endpoint without authorization (and over stdio).
 */
export function callerOf(extra: ToolExtra | undefined): CallerIdentity | undefined {
  return toolCallOf(extra).caller;
}

/** The identity s2sp put in `authInfo`, or one read from an `authInfo` an embedder's own middleware filled in. */
function callerOfAuth(auth: ToolAuthInfo | undefined): CallerIdentity | undefined {
  if (auth === undefined) return undefined;
  const caller = auth.extra?.caller as CallerIdentity | undefined;
  if (caller !== undefined) return caller;
  return { ...(auth.clientId === '' ? {} : { clientId: auth.clientId }), scopes: [...auth.scopes], claims: {} };
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** One MCP content block of a tool result, as s2sp writes them (text). */
export interface TextContent {
  type: 'text';
  text: string;
  annotations?: { audience?: ('user' | 'assistant')[]; priority?: number };
  _meta?: Record<string, unknown>;
}

/** An image or audio block, base64 in `data` (s2sp's consumer CLI sends its chart so). */
export interface MediaContent {
  type: 'image' | 'audio';
  data: string;
  mimeType: string;
  annotations?: TextContent['annotations'];
  _meta?: Record<string, unknown>;
}

/** A resource or resource link block (s2sp passes these through untouched). */
export interface ResourceContent {
  type: 'resource' | 'resource_link';
  [key: string]: unknown;
}

/** A tool result, as s2sp answers and reads them; the same shape on both SDK lines (`CallToolResult`). */
export interface ToolResult {
  content: (TextContent | MediaContent | ResourceContent)[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Tool metadata both lines take in `registerTool`. */
export interface ToolRegistration {
  title?: string;
  description?: string;
  /** A raw zod shape: v1 takes one in zod 3 or zod 4, v2 in zod 4 (and wraps it in `z.object`). */
  inputSchema: Record<string, unknown>;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** Registers a tool on either SDK line: both take `(name, config, (args, extra) => result)` with a raw shape. */
export function registerToolOn<Host extends McpToolHost, Args extends object>(
  mcp: Host,
  name: string,
  config: ToolRegistration,
  callback: (args: Args, extra: ToolExtra) => Promise<ToolResult>,
): RegisteredToolOf<Host> {
  // The SDKs type the callback by the schema; ours is built at run time, in either zod flavour.
  const register = mcp.registerTool.bind(mcp) as unknown as (
    name: string,
    config: ToolRegistration,
    callback: (args: Args, extra: ToolExtra) => Promise<ToolResult>,
  ) => RegisteredToolOf<Host>;
  return register(name, config, callback);
}
