/**
 * S2SPServer: the convenience that owns everything an S2SP resource or
 * consumer server needs: an McpServer (`.mcp`), a body store, and a fastify
 * app serving the data plane (and, if asked, MCP over Streamable HTTP).
 *
 * Over HTTP each request gets its own McpServer (stateless transport), so
 * every registration is kept as an installer and replayed; register custom
 * tools, resources and prompts with `configure` to have them on every
 * transport (`.mcp` itself is the instance stdio and in-memory transports use).
 */
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Registry } from 'prom-client';
import type { ZodRawShape } from 'zod';
import type { BodyStore } from '../cache/body-store.js';
import type { FullGc } from '../cache/gc-nudge.js';
import { MemoryStore } from '../cache/memory-store.js';
import type { ResolveOptions } from '../consumer/resolve.js';
import { s2spDataPlane, type DataPlaneOptions } from '../data/data-plane-plugin.js';
import { serveMetrics } from '../data/metrics.js';
import { consumerMetricsFor } from '../consumer/consumer-metrics.js';
import { dataPlaneLogSerializers } from '../protocol/log-redaction.js';
import { S2SPError } from '../errors.js';
import { METRICS_PATH, resourceUrlOf } from '../protocol/data-path.js';
import { errorDocumentOf } from '../protocol/error-document.js';
import { registerConsumerTool, type ConsumerToolConfig, type ConsumerToolHandler } from '../control/consumer-tool.js';
import { mcpHttpPlugin } from './mcp-http-plugin.js';
import { registerResourceTool, type ResourceToolHandler, type ToolConfig } from '../control/resource-tool.js';

/** Options of {@link S2SPServer}. */
export interface S2SPServerOptions {
  /** MCP server name and version, as clients see them. */
  name: string;
  version?: string;
  /** MCP `instructions` sent at initialisation. */
  instructions?: string;
  /**
   * Body store shared by the resource tools and the data plane (default: a
   * MemoryStore). Pass a RedisStore to let several replicas serve every token.
   */
  store?: BodyStore;
  /** TTL of cached bodies in seconds, for the default MemoryStore (default 600). */
  ttlSeconds?: number;
  /** Byte budget of the default MemoryStore (default 1 GiB). */
  maxCacheBytes?: number;
  /** Lease timeout of the default MemoryStore in seconds (default 30). */
  leaseTimeoutSeconds?: number;
  /** A full garbage collection the default MemoryStore may ask for (`globalThis.gc` under `--expose-gc`). */
  fullGc?: FullGc;
  /** Interface the HTTP server binds to (default 127.0.0.1). */
  host?: string;
  /** Port of the HTTP server (default 0: any free port). */
  port?: number;
  /**
   * Base URL clients reach the data plane at, for proxies and containers
   * (default: `http://<host>:<port>` of the listening server).
   */
  publicUrl?: string;
  /** Abstract rows per envelope (default 1,000). */
  abstractRowLimit?: number;
  /** Largest data-plane request body in bytes. */
  requestBodyLimit?: number;
  /** Where the data plane encodes response chunks: a shared pool, a thread count, or 0 for the main thread. */
  workers?: DataPlaneOptions['workers'];
  /** What consumer tools may fetch (origins beyond loopback, size and time limits). */
  consumer?: ResolveOptions;
  /** fastify logger options (default: off). With stdio, log to stderr, never stdout. */
  logger?: FastifyServerOptions['logger'];
  /**
   * A prom-client Registry for this server's metrics (data plane, store,
   * consumer fetches), served as Prometheus text at `GET /metrics` on the
   * HTTP server. Default: none, no metrics (the CLI turns them on).
   */
  registry?: Registry;
}

/** Options of {@link S2SPServer.listen}. */
export interface ListenOptions {
  /** Also serve MCP over Streamable HTTP at this path (e.g. `/mcp`); default: data plane only. */
  mcpPath?: string;
}

type Installer = (mcp: McpServer) => void;

/** An MCP server with S2SP resource and consumer tools and its own data plane. */
export class S2SPServer {
  /** The primary McpServer (stdio and in-memory transports). */
  readonly mcp: McpServer;
  readonly #options: S2SPServerOptions;
  readonly #installers: Installer[] = [];
  #store?: BodyStore;
  #app?: FastifyInstance;
  #baseUrl?: string;

  constructor(options: S2SPServerOptions) {
    this.#options = options;
    this.#store = options.store;
    this.mcp = this.#newMcpServer();
    if (options.publicUrl !== undefined) this.#baseUrl = trimSlash(options.publicUrl);
  }

  /**
   * Where resource tools cache bodies: the store passed in, or a MemoryStore
   * made on first use, so a server with only consumer tools holds none.
   */
  get store(): BodyStore {
    this.#store ??= new MemoryStore({
      ttlMs: this.#options.ttlSeconds === undefined ? undefined : this.#options.ttlSeconds * 1000,
      maxBytes: this.#options.maxCacheBytes,
      leaseTimeoutMs: this.#options.leaseTimeoutSeconds === undefined ? undefined : this.#options.leaseTimeoutSeconds * 1000,
      fullGc: this.#options.fullGc,
    });
    return this.#store;
  }

  /** Registers a resource tool (SPEC 2.1): the handler returns rows or an Arrow Table. */
  resourceTool<Shape extends ZodRawShape>(name: string, config: ToolConfig<Shape>, handler: ResourceToolHandler<Shape>): this {
    const context = {
      store: this.store,
      resourceUrlFor: (token: string) => this.resourceUrlFor(token),
      abstractRowLimit: this.#options.abstractRowLimit,
    };
    return this.configure((mcp) => registerResourceTool(mcp, name, config, handler, context));
  }

  /** Registers a consumer tool (SPEC 2.2): the handler receives merged rows and an Arrow Table. */
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerToolHandler): this {
    const { registry } = this.#options;
    // Registered now, so a scrape shows the consumer's counters (at zero) before its first fetch.
    if (registry !== undefined) consumerMetricsFor(registry).catch(() => {}); // a failure shows at the first fetch
    const options = registry === undefined ? this.#options.consumer : { ...this.#options.consumer, registry };
    return this.configure((mcp) => registerConsumerTool(mcp, name, config, handler, options));
  }

  /** Applies `install` to `.mcp` now and to every McpServer made for HTTP requests later. */
  configure(install: Installer): this {
    install(this.mcp);
    this.#installers.push(install);
    return this;
  }

  /** A fresh McpServer carrying every registration so far. */
  createMcpServer(): McpServer {
    const mcp = this.#newMcpServer();
    for (const install of this.#installers) install(mcp);
    return mcp;
  }

  /** The presigned URL of a cached body. */
  resourceUrlFor(token: string): string {
    if (this.#baseUrl === undefined) throw new S2SPError('S2SP_ERR_DATA_PLANE_DOWN');
    return resourceUrlOf(this.#baseUrl, token);
  }

  /** The fastify app once listening (to add routes or hooks before `listen`, mount the plugins on your own app). */
  get http(): FastifyInstance | undefined {
    return this.#app;
  }

  /**
   * Starts the HTTP server: the data plane (when this server has a store:
   * resource tools, or one passed in), and MCP at `mcpPath` if given.
   * @returns the URL it listens on
   */
  async listen(options: ListenOptions = {}): Promise<string> {
    if (this.#app !== undefined) throw new Error('S2SPServer is already listening');
    const app = Fastify({ logger: redactingLogger(this.#options.logger ?? false) });
    // fastify's default 404 logs "Route POST:<url> not found": a mistyped
    // resource_url would put its token in the log.
    app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorDocumentOf(new S2SPError('S2SP_ERR_ROUTE_NOT_FOUND'))));
    const { registry } = this.#options;
    if (this.#store !== undefined) {
      await app.register(s2spDataPlane, {
        store: this.#store,
        bodyLimit: this.#options.requestBodyLimit,
        workers: this.#options.workers,
        // Served below, once, whether or not this server has a data plane.
        ...(registry === undefined ? {} : { registry, metricsPath: false as const }),
      });
    }
    if (registry !== undefined) serveMetrics(app, registry, METRICS_PATH);
    if (options.mcpPath !== undefined) {
      await app.register(mcpHttpPlugin, { path: options.mcpPath, createServer: () => this.createMcpServer() });
    }
    await app.listen({ host: this.#options.host ?? '127.0.0.1', port: this.#options.port ?? 0 });
    this.#app = app;
    const address = app.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;
    this.#baseUrl ??= url;
    return url;
  }

  /** Connects `.mcp` to a transport (stdio, in-memory...). */
  async connect(transport: Transport): Promise<void> {
    await this.mcp.connect(transport);
  }

  /**
   * Serves MCP over this process's stdin/stdout, starting the data plane
   * first unless `dataPlane` is false (a server with only consumer tools).
   */
  async serveStdio(options: { dataPlane?: boolean } = {}): Promise<void> {
    if (options.dataPlane !== false && this.#app === undefined) await this.listen();
    await this.connect(new StdioServerTransport());
  }

  /** Stops the HTTP server and the MCP server, and empties the store. */
  async close(): Promise<void> {
    await this.#app?.close();
    this.#app = undefined;
    await this.mcp.close();
    await this.#store?.close();
  }

  #newMcpServer(): McpServer {
    const { name, version = '0.0.0', instructions } = this.#options;
    return new McpServer({ name, version }, instructions === undefined ? undefined : { instructions });
  }
}

/** Logger options whose request serializer redacts tokens in every URL this server logs. */
function redactingLogger(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false;
  const base = logger === true ? {} : logger;
  return { ...base, serializers: { ...base.serializers, req: dataPlaneLogSerializers.req } };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
