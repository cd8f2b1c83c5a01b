/**
 * MCP Streamable HTTP as a fastify plugin, stateless: every POST gets a fresh
 * McpServer from `createServer` and a fresh transport, so concurrent clients
 * never share protocol state. The data plane can live on the same app. With
 * SDK v2 servers the endpoint speaks protocol 2026-07-28 (stateless
 * requests, `server/discover`) and 2025-era clients alike; with v1 servers,
 * the 2025 revisions.
 *
 * Before the SDK sees a request, the plugin checks `Host` and `Origin`
 * (DNS rebinding, host-guard.ts) and the body size. Every refusal is a
 * JSON-RPC error document (what an MCP client shows), with the S2SP error
 * code in `error.data.code`.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { S2SPError } from '../errors.js';
import { errorForReply } from '../data/error-reply.js';
import { functionOption, httpUrlOption, integerOption, invalidOption, stringListOption } from '../option-checks.js';
import { createHostGuard } from './host-guard.js';
import { listeningOrigin } from '../data/data-plane-handle.js';
import { checkMcpAuthOptions, mountMcpAuthorization, type McpAuthOptions } from './mcp-authorization.js';

/**
 * Default limit of an MCP request body: 64 MiB. Sync mode carries a whole
 * table's body as `body_data`, a JSON string inside the JSON-RPC request
 * (escaping adds a fifth or so); the bundled earthquakes table is 1.1 MB of
 * it. 64 MiB takes tables some fifty times that size, while bounding what
 * one request can make the server buffer and parse; bigger tables belong in
 * async mode, where the body never crosses the MCP endpoint.
 */
export const DEFAULT_MCP_BODY_LIMIT = 64 * 1024 * 1024;
import { jsonRpcErrorOf } from './json-rpc-error.js';
import { mcpSdkOf, type McpServerLike } from './mcp-sdk.js';

/** Options of {@link mcpHttpPlugin}. */
export interface McpHttpOptions {
  /** Builds the McpServer (SDK v2 or v1) that answers one request, tools registered. */
  createServer: () => McpServerLike;
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
  /**
   * OAuth 2.1 on the endpoint (README, Security > Authorization): every
   * request needs an access token from `auth.issuer`. Default: none.
   */
  auth?: McpAuthOptions;
  /** Base URL clients reach the app at (the endpoint's public URL is it plus `path`); default: where the app listens. */
  publicUrl?: string;
}

/**
 * Serves MCP over Streamable HTTP (stateless; JSON responses, or an event
 * stream for a request whose tool sends progress) at `path`.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` at registration for a bad limit, host or origin
 */
export const mcpHttpPlugin: FastifyPluginAsync<McpHttpOptions> = async (app, options) => {
  functionOption(options.createServer, 'createServer', 'a function returning an McpServer');
  const path = options.path ?? '/mcp';
  const bodyLimit = integerOption(options.bodyLimit, 'bodyLimit', 1) ?? DEFAULT_MCP_BODY_LIMIT;
  const guard = createHostGuard({
    allowedHosts: stringListOption(options.allowedHosts, 'allowedHosts'),
    allowedOrigins: stringListOption(options.allowedOrigins, 'allowedOrigins'),
  });

  if (options.auth !== undefined) checkMcpAuthOptions(options.auth, 'auth');
  const publicUrl = httpUrlOption(options.publicUrl, 'publicUrl');

  // Before the body is read: a refused request costs no parsing.
  app.addHook('onRequest', async (request, reply) => {
    const refusal = guard(request.headers);
    if (refusal !== undefined) return sendJsonRpcError(reply, refusal);
  });

  // Known once the app listens, unless a public URL was given.
  const endpointUrl = () => `${(publicUrl?.href ?? listeningOrigin(app) ?? 'http://127.0.0.1').replace(/\/+$/, '')}${path}`;
  const auth = options.auth === undefined ? undefined : mountMcpAuthorization(app, options.auth, path, endpointUrl);

  app.setErrorHandler((error, request, reply) => {
    const s2sp = mcpErrorOf(error, bodyLimit);
    if (s2sp.status >= 500) request.log.error({ err: error }, 'MCP request failed');
    return sendJsonRpcError(reply, s2sp);
  });

  // The line the servers belong to decides how requests are served (v2: both protocol eras; v1: 2025 only).
  const probe = options.createServer();
  const sdk = mcpSdkOf(probe);
  await probe.close();
  if (sdk === undefined) throw invalidOption('createServer', 'a function returning an McpServer of SDK v2 or v1', probe);
  const route = sdk.httpRoute(options.createServer, {
    bodyLimit,
    onError: (error) => app.log.error({ err: error }, 'MCP request failed'),
    authInfoOf: auth?.authInfoOf,
  });
  app.post(path, { bodyLimit, ...(auth === undefined ? {} : { onRequest: auth.authenticate, preHandler: auth.authorize }) }, route);

  // Stateless: there is no session stream to open (GET) or to end (DELETE); protocol 2026-07-28 uses POST alone.
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
