/**
 * MCP Streamable HTTP as a fastify plugin, stateless: every POST gets a fresh
 * McpServer from `createServer` and a fresh transport, so concurrent clients
 * never share protocol state. The data plane can live on the same app.
 *
 * Before the SDK sees a request, the plugin checks `Host` and `Origin`
 * (DNS rebinding, host-guard.ts) and the body size. Every refusal is a
 * JSON-RPC error document (what an MCP client shows), with the S2SP error
 * code in `error.data.code`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { S2SPError, type ErrorCode } from '../errors.js';
import { errorForReply } from '../data/error-reply.js';
import { integerOption, invalidOption, stringListOption } from '../option-checks.js';
import { createHostGuard } from './host-guard.js';

/**
 * Default limit of an MCP request body: 64 MiB. Sync mode carries a whole
 * table's body as `body_data`, a JSON string inside the JSON-RPC request
 * (escaping adds a fifth or so); the bundled earthquakes table is 1.1 MB of
 * it. 64 MiB takes tables some fifty times that size, while bounding what
 * one request can make the server buffer and parse; bigger tables belong in
 * async mode, where the body never crosses the MCP endpoint.
 */
export const DEFAULT_MCP_BODY_LIMIT = 64 * 1024 * 1024;
import { asksForProgress } from './asks-for-progress.js';

/** Options of {@link mcpHttpPlugin}. */
export interface McpHttpOptions {
  /** Builds the McpServer that answers one request (tools registered). */
  createServer: () => McpServer;
  /** Route path (default `/mcp`). */
  path?: string;
  /** Largest request body in bytes (default 64 MiB); larger gets a JSON-RPC error with HTTP 413. */
  bodyLimit?: number;
  /**
   * Host names accepted in `Host` besides loopback ones (any port). Add the
   * names clients use to reach a server bound beyond loopback.
   */
  allowedHosts?: readonly string[];
  /** Origins accepted in `Origin` besides loopback ones; requests without `Origin` are judged by `Host` alone. */
  allowedOrigins?: readonly string[];
}

/** JSON-RPC error codes: the SDK's own -32000 for transport-level refusals, -32600/-32700/-32603 from the spec. */
const JSON_RPC_CODES: Partial<Record<ErrorCode, number>> = {
  S2SP_ERR_MCP_BODY_TOO_LARGE: -32600,
  S2SP_ERR_REQUEST_BODY_INVALID: -32700,
  S2SP_ERR_INTERNAL: -32603,
};

/** A JSON-RPC error document for a refused request (the request's id is unknown). */
export function jsonRpcErrorOf(error: S2SPError): { jsonrpc: '2.0'; error: { code: number; message: string; data: { code: ErrorCode } }; id: null } {
  return { jsonrpc: '2.0', error: { code: JSON_RPC_CODES[error.code] ?? -32000, message: error.message, data: { code: error.code } }, id: null };
}

/**
 * Serves MCP over Streamable HTTP (stateless, JSON responses; an event
 * stream for a request with a progress token) at `path`.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` at registration for a bad limit, host or origin
 */
export const mcpHttpPlugin: FastifyPluginAsync<McpHttpOptions> = async (app, options) => {
  if (typeof options.createServer !== 'function') throw invalidOption('createServer', 'a function returning an McpServer', options.createServer);
  const path = options.path ?? '/mcp';
  const bodyLimit = integerOption(options.bodyLimit, 'bodyLimit', 1) ?? DEFAULT_MCP_BODY_LIMIT;
  const guard = createHostGuard({
    allowedHosts: stringListOption(options.allowedHosts, 'allowedHosts'),
    allowedOrigins: stringListOption(options.allowedOrigins, 'allowedOrigins'),
  });

  // Before the body is read: a refused request costs no parsing.
  app.addHook('onRequest', async (request, reply) => {
    const refusal = guard(request.headers);
    if (refusal !== undefined) return sendJsonRpcError(reply, refusal);
  });

  app.setErrorHandler((error, request, reply) => {
    const s2sp = mcpErrorOf(error, bodyLimit);
    if (s2sp.status >= 500) request.log.error({ err: error }, 'MCP request failed');
    return sendJsonRpcError(reply, s2sp);
  });

  app.post(path, { bodyLimit }, async (request, reply) => {
    const server = options.createServer();
    // JSON answers, except where the caller wants progress notifications, which only an event stream carries.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(request.body) });
    // The SDK writes the response itself; fastify must not send one too.
    reply.hijack();
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify(jsonRpcErrorOf(new S2SPError('S2SP_ERR_INTERNAL'))));
      }
    }
  });

  // Stateless: there is no session stream to open (GET) or to end (DELETE).
  const notAllowed = async (_request: unknown, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, use POST' }, id: null });
  app.get(path, notAllowed);
  app.delete(path, notAllowed);
};

function sendJsonRpcError(reply: FastifyReply, error: S2SPError): FastifyReply {
  return reply.code(error.status).type('application/json; charset=utf-8').send(jsonRpcErrorOf(error));
}

/** The S2SPError a failure before the SDK stands for: body size, media type, JSON, or internal. */
function mcpErrorOf(error: unknown, bodyLimit: number): S2SPError {
  const wire = errorForReply(error);
  if (wire.code === 'S2SP_ERR_REQUEST_TOO_LARGE') {
    return new S2SPError('S2SP_ERR_MCP_BODY_TOO_LARGE', { limitBytes: bodyLimit });
  }
  return wire;
}
