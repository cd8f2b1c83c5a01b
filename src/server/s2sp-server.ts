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
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { BodyStore } from '../cache/body-store.js';
import type { FullGc } from '../cache/gc-nudge.js';
import { MemoryStore } from '../cache/memory-store.js';
import type { ResolveOptions } from '../consumer/resolve.js';
import type { DataPlaneOptions } from '../data/data-plane-plugin.js';
import { createDataPlane, listeningOrigin, type DataPlane } from '../data/data-plane-handle.js';
import { dataPlaneLogSerializers } from '../protocol/log-redaction.js';
import { S2SPError } from '../errors.js';
import { resourceUrlOf } from '../protocol/data-path.js';
import { errorDocumentOf } from '../protocol/error-document.js';
import {
  registerConsumerTool,
  type ConsumerBatchToolHandler,
  type ConsumerToolConfig,
  type ConsumerToolHandler,
} from '../control/consumer-tool.js';
import { mcpHttpPlugin } from './mcp-http-plugin.js';
import { registerResourceTool, type ResourceToolHandler, type ToolConfig } from '../control/resource-tool.js';

/** Options of {@link S2SPServer}. */
export interface S2SPServerOptions {
  /** MCP server name and version, as clients see them. */
  name: string;
  version?: string;
  /** MCP `instructions` sent at initialisation. */
  instructions?: string;
  /** Body store shared by the resource tools and the data plane (default: a MemoryStore). */
  store?: BodyStore;
  /** TTL of cached bodies in seconds, for the default MemoryStore (default 600). */
  ttlSeconds?: number;
  /** Byte budget of the default MemoryStore (default 1 GiB). */
  maxCacheBytes?: number;
  /** A full garbage collection the default MemoryStore may ask for (`globalThis.gc` under `--expose-gc`). */
  fullGc?: FullGc;
  /** Interface the HTTP server binds to (default 127.0.0.1). */
  host?: string;
  /** Port of the HTTP server (default 0: any free port). */
  port?: number;
  /**
   * A fastify app of your own to mount the data plane (and MCP, with
   * `mcpPath`) on, instead of one this server makes. `mount()` registers the
   * plugins on it (before it is ready); you listen and close it.
   */
  app?: FastifyInstance;
  /** Prefix the data plane is mounted under on the app, e.g. `/internal` (default: none). */
  prefix?: string;
  /**
   * Base URL clients reach the app at, for proxies and containers; the
   * data plane's prefix is appended (default: `http://<host>:<port>` of the
   * listening server).
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
}

/** Options of {@link S2SPServer.listen} and {@link S2SPServer.mount}. */
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
  /** The app the plugins go on: the one passed in, or `#ownApp`. */
  #app?: FastifyInstance;
  /** The app this server made, listens on and closes. */
  #ownApp?: FastifyInstance;
  #plane?: DataPlane;
  #mounted = false;

  constructor(options: S2SPServerOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#app = options.app;
    this.mcp = this.#newMcpServer();
  }

  /**
   * Where resource tools cache bodies: the store passed in, or a MemoryStore
   * made on first use, so a server with only consumer tools holds none.
   */
  get store(): BodyStore {
    this.#store ??= new MemoryStore({
      ttlMs: this.#options.ttlSeconds === undefined ? undefined : this.#options.ttlSeconds * 1000,
      maxBytes: this.#options.maxCacheBytes,
      fullGc: this.#options.fullGc,
    });
    return this.#store;
  }

  /** Registers a resource tool (SPEC 2.1): the handler returns rows or an Arrow Table. */
  resourceTool<Shape extends ZodRawShapeCompat>(name: string, config: ToolConfig<Shape>, handler: ResourceToolHandler<Shape>): this {
    const store = this.store;
    const context = {
      store,
      resourceUrlFor: (token: string) => this.resourceUrlFor(token),
      abstractRowLimit: this.#options.abstractRowLimit,
      ttlMs: this.#options.ttlSeconds === undefined ? store.ttlMs : this.#options.ttlSeconds * 1000,
    };
    return this.configure((mcp) => registerResourceTool(mcp, name, config, handler, context));
  }

  /**
   * Registers a consumer tool (SPEC 2.2): the handler receives merged rows
   * and an Arrow Table, or with `{ batches: true }` the body's record
   * batches as they arrive.
   */
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerBatchToolHandler, options: { batches: true }): this;
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerToolHandler, options?: { batches?: false }): this;
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerToolHandler | ConsumerBatchToolHandler, options: { batches?: boolean } = {}): this {
    const consumer = this.#options.consumer;
    return this.configure((mcp) =>
      options.batches === true
        ? registerConsumerTool(mcp, name, config, handler as ConsumerBatchToolHandler, { ...consumer, batches: true })
        : registerConsumerTool(mcp, name, config, handler as ConsumerToolHandler, consumer),
    );
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

  /**
   * The presigned URL of a cached body: the data plane builds it from its
   * mount prefix and `publicUrl` (or the app's listening address).
   * @throws S2SPError `S2SP_ERR_DATA_PLANE_DOWN` when no data plane is reachable yet
   */
  resourceUrlFor(token: string): string {
    if (this.#plane !== undefined) return this.#plane.resourceUrlFor(token);
    const { publicUrl, prefix = '' } = this.#options;
    if (publicUrl === undefined) throw new S2SPError('S2SP_ERR_DATA_PLANE_DOWN');
    return resourceUrlOf(`${publicUrl.replace(/\/+$/, '')}${prefix}`, token);
  }

  /** The fastify app: the one passed as `app`, or this server's own once mounted. */
  get http(): FastifyInstance | undefined {
    return this.#app;
  }

  /**
   * Registers the plugins without listening: the data plane (when this
   * server has a store: resource tools, or one passed in) under `prefix`,
   * and MCP at `mcpPath` if given. On an app passed as `app`, call it before
   * that app is ready; `listen` calls it when needed.
   */
  async mount(options: ListenOptions = {}): Promise<void> {
    if (this.#mounted) throw new Error('S2SPServer is already mounted');
    this.#mounted = true;
    const app = (this.#app ??= this.#newApp());
    if (this.#store !== undefined) {
      const plane = createDataPlane({
        store: this.#store,
        publicUrl: this.#options.publicUrl,
        bodyLimit: this.#options.requestBodyLimit,
        workers: this.#options.workers,
      });
      await app.register(plane.plugin, { prefix: this.#options.prefix ?? '' });
      this.#plane = plane;
    }
    if (options.mcpPath !== undefined) {
      await app.register(mcpHttpPlugin, { path: options.mcpPath, createServer: () => this.createMcpServer() });
    }
  }

  /**
   * Starts the HTTP server, mounting first unless `mount` was called.
   * An app passed as `app` that is already listening is left as it is.
   * @returns the URL the app listens on
   */
  async listen(options: ListenOptions = {}): Promise<string> {
    if (this.#ownApp?.server.listening === true) throw new Error('S2SPServer is already listening');
    if (!this.#mounted) await this.mount(options);
    const app = this.#app as FastifyInstance;
    if (!app.server.listening) await app.listen({ host: this.#options.host ?? '127.0.0.1', port: this.#options.port ?? 0 });
    return listeningOrigin(app) as string;
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

  /** Stops the HTTP server (unless it is an app passed as `app`) and the MCP server, and empties the store. */
  async close(): Promise<void> {
    if (this.#ownApp !== undefined) {
      await this.#ownApp.close();
      // A closed app takes no plugins: the next listen starts afresh.
      this.#ownApp = this.#app = this.#plane = undefined;
      this.#mounted = false;
    }
    await this.mcp.close();
    await this.#store?.close();
  }

  #newApp(): FastifyInstance {
    const app = Fastify({ logger: redactingLogger(this.#options.logger ?? false) });
    // fastify's default 404 logs "Route POST:<url> not found": a mistyped
    // resource_url would put its token in the log.
    app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorDocumentOf(new S2SPError('S2SP_ERR_ROUTE_NOT_FOUND'))));
    this.#ownApp = app;
    return app;
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
