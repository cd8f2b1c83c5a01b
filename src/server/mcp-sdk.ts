/**
 * The MCP SDK lines a server can run on, loaded from what the host
 * installed: v2 (`@modelcontextprotocol/server`: protocol 2026-07-28 through
 * its `createMcpHandler`, 2025-era clients through a stateless leg of ours
 * that answers JSON unless progress was asked for) and v1
 * (`@modelcontextprotocol/sdk`: 2025-11-25 and older). Both are optional
 * peers; a host installs one, and s2sp never imports the other. This is the
 * only file of server/ that touches the SDK itself: it makes McpServers and
 * serves them over HTTP and stdio, one way per line.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { S2SPError } from '../errors.js';
import type { McpToolHost, ToolAuthInfo } from '../control/tool-host.js';
import { asksForProgress } from './asks-for-progress.js';
import { jsonRpcErrorOf } from './json-rpc-error.js';
import { optionalImport } from '../optional-import.js';

/** `v2` or `v1`. */
export type McpSdkLine = 'v2' | 'v1';

/** An McpServer of either line, as s2sp drives it. */
export interface McpServerLike extends McpToolHost {
  connect(transport: never): Promise<void>;
  close(): Promise<void>;
}

/** A connection (stdio, or a transport passed in) being served; `close` ends it. */
export interface McpConnection {
  close(): Promise<void>;
}

/** Serves one HTTP request of the MCP endpoint; the SDK writes the reply. */
export type McpHttpRoute = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** How {@link McpSdk.httpRoute} serves. */
export interface McpHttpRouteOptions {
  bodyLimit: number;
  onError(error: unknown): void;
  /** The verified access token of a request, handed to the SDK, which passes it to tool handlers. */
  authInfoOf?(request: FastifyRequest): ToolAuthInfo | undefined;
}

/** One SDK line: how to make a server and serve it. */
export interface McpSdk {
  readonly line: McpSdkLine;
  /** A fresh McpServer. */
  createServer(info: { name: string; version: string }, instructions: string | undefined): McpServerLike;
  /** True when `server` is an McpServer of this line. */
  owns(server: unknown): boolean;
  /**
   * The route answering MCP over Streamable HTTP, statelessly: each request
   * gets a fresh server from `factory`.
   */
  httpRoute(factory: () => McpServerLike, options: McpHttpRouteOptions): McpHttpRoute;
  /** Serves `factory`'s servers over `transport` (default: this process's stdio). */
  serveTransport(factory: () => McpServerLike, transport: unknown): Promise<McpConnection>;
}

type V2Server = typeof import('@modelcontextprotocol/server');
type V1Mcp = typeof import('@modelcontextprotocol/sdk/server/mcp.js');
type V2Transport = import('@modelcontextprotocol/server').Transport;
type V1Transport = import('@modelcontextprotocol/sdk/shared/transport.js').Transport;

// Loaded once, when server/ is first imported: construction stays synchronous.
const V2 = await optionalImport<V2Server>('@modelcontextprotocol/server');
const V1 = await optionalImport<V1Mcp>('@modelcontextprotocol/sdk/server/mcp.js');

function v2Sdk(sdk: V2Server): McpSdk {
  return {
    line: 'v2',
    createServer: (info, instructions) => new sdk.McpServer(info, instructions === undefined ? undefined : { instructions }) as unknown as McpServerLike,
    owns: (server) => server instanceof sdk.McpServer,
    httpRoute(factory, { bodyLimit, onError, authInfoOf }) {
      const create = () => factory() as unknown as InstanceType<V2Server['McpServer']>;
      // 2026-07-28 requests (the per-request `_meta` envelope) go to the SDK's handler.
      const modern = sdk.createMcpHandler(create, { legacy: 'reject', maxRequestBodySize: bodyLimit, onerror: onError });
      return async (request, reply) => {
        const abort = new AbortController();
        // A caller that hangs up cancels its request (and whatever the tool is doing for it).
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) abort.abort();
        });
        const web = webRequestOf(request, abort.signal);
        const parsedBody = request.body;
        const authInfo = authInfoOf?.(request);
        if (!(await sdk.isLegacyRequest(web, parsedBody, { maxRequestBodySize: bodyLimit }))) {
          return reply.send(await modern.fetch(web, { parsedBody, authInfo }));
        }
        // 2025-era requests: a fresh server and transport each, answered as JSON unless the
        // caller asked for progress (as on v1), which only an event stream carries.
        const server = create();
        const transport = new sdk.WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: !asksForProgress(parsedBody),
        });
        reply.raw.once('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        return reply.send(await transport.handleRequest(web, { parsedBody, authInfo }));
      };
    },
    async serveTransport(factory, transport) {
      const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
      return serveStdio(() => factory() as unknown as InstanceType<V2Server['McpServer']>, {
        ...(transport === undefined ? {} : { transport: transport as V2Transport }),
      });
    },
  };
}

function v1Sdk(sdk: V1Mcp): McpSdk {
  return {
    line: 'v1',
    createServer: (info, instructions) => new sdk.McpServer(info, instructions === undefined ? undefined : { instructions }) as unknown as McpServerLike,
    owns: (server) => server instanceof sdk.McpServer,
    httpRoute(factory, { onError, authInfoOf }) {
      return async (request, reply) => {
        // v1's transport hands `req.auth` to tool handlers as `extra.authInfo`.
        const authInfo = authInfoOf?.(request);
        if (authInfo !== undefined) (request.raw as { auth?: ToolAuthInfo }).auth = authInfo;
        const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
        const server = factory() as unknown as InstanceType<V1Mcp['McpServer']>;
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
          onError(error);
          if (!reply.raw.headersSent) {
            const failure = new S2SPError('S2SP_ERR_INTERNAL');
            reply.raw.writeHead(failure.status, { 'content-type': 'application/json' });
            reply.raw.end(JSON.stringify(jsonRpcErrorOf(failure)));
          }
        }
      };
    },
    async serveTransport(factory, transport) {
      const server = factory() as unknown as InstanceType<V1Mcp['McpServer']>;
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      await server.connect((transport as V1Transport | undefined) ?? new StdioServerTransport());
      return { close: () => server.close() };
    },
  };
}

/** The installed lines, v2 first. */
const INSTALLED: readonly McpSdk[] = [...(V2 === undefined ? [] : [v2Sdk(V2)]), ...(V1 === undefined ? [] : [v1Sdk(V1)])];

/**
 * The SDK line to run on: the one asked for, else v2 when installed, else v1.
 * @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` when that line (or any) is not installed
 */
export function mcpSdk(line?: McpSdkLine): McpSdk {
  const sdk = line === undefined ? INSTALLED[0] : INSTALLED.find((candidate) => candidate.line === line);
  if (sdk === undefined) {
    const pkg = line === 'v1' ? '@modelcontextprotocol/sdk' : '@modelcontextprotocol/server';
    throw new S2SPError('S2SP_ERR_CLI_PACKAGE_MISSING', { pkg, purpose: 'an MCP server', install: pkg });
  }
  return sdk;
}

/** The line `server` belongs to, or undefined for an object of neither. */
export function mcpSdkOf(server: unknown): McpSdk | undefined {
  return INSTALLED.find((sdk) => sdk.owns(server));
}

/**
 * The web-standard Request of a fastify request whose JSON body fastify has
 * parsed already (it goes to the SDK as `parsedBody`).
 */
function webRequestOf(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'connection') continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const url = `http://${request.headers.host ?? '127.0.0.1'}${request.url}`;
  return new Request(url, { method: request.method, headers, signal });
}
