/**
 * MCP Streamable HTTP as a fastify plugin, stateless: every POST gets a fresh
 * McpServer from `createServer` and a fresh transport, so concurrent clients
 * never share protocol state. The data plane can live on the same app.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync } from 'fastify';
import { asksForProgress } from './asks-for-progress.js';

/** Options of {@link mcpHttpPlugin}. */
export interface McpHttpOptions {
  /** Builds the McpServer that answers one request (tools registered). */
  createServer: () => McpServer;
  /** Route path (default `/mcp`). */
  path?: string;
}

/** Serves MCP over Streamable HTTP (stateless, JSON responses; an event stream for a request with a progress token) at `path`. */
export const mcpHttpPlugin: FastifyPluginAsync<McpHttpOptions> = async (app, options) => {
  const path = options.path ?? '/mcp';

  app.post(path, async (request, reply) => {
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
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  });

  // Stateless: there is no session stream to open (GET) or to end (DELETE).
  const notAllowed = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, use POST' }, id: null });
  app.get(path, notAllowed);
  app.delete(path, notAllowed);
};
