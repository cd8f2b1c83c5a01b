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
import { isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Registry } from 'prom-client';
import type { BodyStore, StoreEvent } from '../cache/body-store.js';
import { MemoryStore, type MemoryStoreOptions } from '../cache/memory-store.js';
import type { ResolveOptions } from '../consumer/resolve-batches.js';
import { isLoopbackHost } from '../protocol/loopback.js';
import type { DataPlaneOptions } from '../data/data-plane-plugin.js';
import { createDataPlane, listeningOrigin, type DataPlane } from '../data/data-plane-handle.js';
import { errorForReply } from '../data/error-reply.js';
import { prepareOption } from '../data/body-preparation.js';
import { dataPlaneLogSerializers, redactedError } from '../protocol/log-redaction.js';
import { serveMetrics } from '../data/metrics.js';
import { consumerMetricsFor } from '../consumer/consumer-metrics.js';
import { S2SPError } from '../errors.js';
import { METRICS_PATH, resourceUrlOf } from '../protocol/data-path.js';
import { errorDocumentOf } from '../protocol/error-document.js';
import { JSON_CONTENT_TYPE } from '../protocol/media-types.js';
import {
  checkConsumerOptions,
  registerConsumerTool,
  type ConsumerBatchToolHandler,
  type ConsumerToolConfig,
  type ConsumerToolHandler,
} from '../control/consumer-tool.js';
import { logToolFailure } from '../control/tool-results.js';
import { Listeners, type Listener, type ToolFailedEvent, type Unsubscribe } from '../observe.js';
import {
  functionOption,
  httpUrlOption,
  integerOption,
  invalidOption,
  isBodyStore,
  nonEmptyStringOption,
  optionsObject,
  stringListOption,
} from '../option-checks.js';
import { s2spClientErrorHandler, s2spFrameworkErrors } from './client-errors.js';
import { createHostGuard, hostnameOfHeader } from './host-guard.js';
import { applyHttpTimeouts, checkIntervalMs, resolveHttpTimeouts, type HttpTimeouts } from './http-timeouts.js';
import { mcpHttpPlugin } from './mcp-http-plugin.js';
import { checkMcpAuthOptions, type McpAuthOptions } from './mcp-authorization.js';
import { mcpSdk, type McpConnection, type McpSdk, type McpSdkLine, type McpServerLike } from './mcp-sdk.js';
import { registerResourceTool, type ResourceToolContext, type ResourceToolHandler, type ToolConfig } from '../control/resource-tool.js';
import { QUERY_TOOL, checkQueryToolOptions, registerQueryTool, type QueryToolOptions } from '../control/query-tool.js';
import type { ZodRawShapeCompat } from '../control/zod-flavour.js';

/** Options of {@link S2SPServer}, grouped by concern; every duration in milliseconds. */
export interface S2SPServerOptions {
  /** MCP server name and version, as clients see them. */
  name: string;
  version?: string;
  /** MCP `instructions` sent at initialisation (and in `server/discover`). */
  instructions?: string;
  /**
   * The MCP SDK line to run on: `v2` (`@modelcontextprotocol/server`,
   * protocol 2026-07-28 and 2025-era clients) or `v1`
   * (`@modelcontextprotocol/sdk`, 2025 revisions). Default: v2 when it is
   * installed, else v1. Give the server's type argument to match
   * (`new S2SPServer<McpServer>(...)`) to have `.mcp` typed as your line's McpServer.
   */
  sdk?: McpSdkLine;
  /**
   * Body store shared by the resource tools and the data plane: a store (a
   * RedisStore lets several replicas serve every token), or the settings of
   * a MemoryStore to make. Default: a MemoryStore with its defaults, made on
   * first use, so a server with only consumer tools holds none.
   */
  store?: BodyStore | MemoryStoreOptions;
  /** The HTTP server: where it listens and how, or an app of your own to mount on. */
  http?: ServerHttpOptions;
  /** MCP over Streamable HTTP (`listen({ mcpPath })`): its guards (Security in README). */
  mcp?: ServerMcpOptions;
  /** The data plane: request size and where responses are encoded. */
  dataPlane?: ServerDataPlaneOptions;
  /** What the tools registered through this server share. */
  tools?: ServerToolOptions;
  /**
   * A prom-client Registry for this server's metrics (data plane, store,
   * consumer fetches), served as Prometheus text at `GET /metrics` on the
   * HTTP server. Default: none, no metrics (the CLI turns them on).
   */
  registry?: Registry;
}

/** {@link S2SPServerOptions.http}. */
export interface ServerHttpOptions {
  /**
   * Interface the HTTP server binds to (default 127.0.0.1). A wildcard
   * (0.0.0.0, ::) needs `publicUrl` when the server issues resource_urls: no
   * address of the wildcard tells consumers where to connect.
   */
  host?: string;
  /** Port of the HTTP server (default 0: any free port). */
  port?: number;
  /**
   * Base URL clients reach the app at, for proxies and containers; the
   * data plane's prefix is appended (default: `http://<host>:<port>` of the
   * listening server). Its host and origin are also accepted by the MCP
   * endpoint.
   */
  publicUrl?: string;
  /**
   * A fastify app of your own to mount the data plane (and MCP, with
   * `mcpPath`) on, instead of one this server makes. `mount()` registers the
   * plugins on it (before it is ready); you listen and close it.
   */
  app?: FastifyInstance;
  /** Prefix the data plane is mounted under on the app, e.g. `/internal` (default: none). */
  prefix?: string;
  /** HTTP timeouts (request, headers, keep-alive, idle); see {@link HttpTimeouts} for the defaults. */
  timeouts?: HttpTimeouts;
  /** fastify logger options (default: off). With stdio, log to stderr, never stdout. */
  logger?: FastifyServerOptions['logger'];
}

/** {@link S2SPServerOptions.mcp}. */
export interface ServerMcpOptions {
  /** Largest MCP request body in bytes (default 64 MiB, room for sync-mode `body_data`); over it, a JSON-RPC error. */
  bodyLimit?: number;
  /**
   * Host names the MCP endpoint accepts in `Host` besides loopback ones, the
   * address it binds to (all interface addresses for a wildcard) and
   * `publicUrl`'s (DNS-rebinding protection; refused: 403).
   */
  allowedHosts?: readonly string[];
  /** Origins the MCP endpoint accepts in `Origin` besides loopback ones and `publicUrl`'s. */
  allowedOrigins?: readonly string[];
  /**
   * OAuth 2.1 on the MCP endpoint (README, Security > Authorization): the
   * issuer whose access tokens it accepts, the audience and the scopes
   * `tools/call` needs; tool handlers learn the caller with `callerOf(extra)`.
   * The data plane is not guarded by it: a resource_url is its own capability.
   */
  auth?: McpAuthOptions;
}

/** {@link S2SPServerOptions.tools}. */
export interface ServerToolOptions {
  /** Abstract rows per envelope of every resource tool (default 1,000). */
  abstractRowLimit?: number;
  /** What consumer tools may fetch (origins beyond loopback, size and time limits). */
  consumer?: Omit<ResolveOptions, 'observe' | 'signal' | 'registry'>;
}

/** {@link S2SPServerOptions.dataPlane}. */
export interface ServerDataPlaneOptions {
  /** Largest data-plane request body in bytes. */
  bodyLimit?: number;
  /** Where the data plane encodes response chunks: a shared pool, a thread count, or 0 for the main thread. */
  workers?: DataPlaneOptions['workers'];
  /** What idle workers prepare after a put, while the LLM reads the abstract: 'off', a list of forms, or 'auto' (default). */
  prepare?: DataPlaneOptions['prepare'];
  /** A full garbage collection to run once a body is prepared (e.g. `globalThis.gc` under `--expose-gc`); default none. */
  fullGc?: DataPlaneOptions['fullGc'];
}

/**
 * What a server tells its listeners ({@link S2SPServer.observe}): its store's
 * events, and its tools' unexpected failures.
 */
export type ServerEvent = StoreEvent | ToolFailedEvent;

/** Options of {@link S2SPServer.listen} and {@link S2SPServer.mount}. */
export interface ListenOptions {
  /** Also serve MCP over Streamable HTTP at this path (e.g. `/mcp`); default: data plane only. */
  mcpPath?: string;
}

/** Applies registrations to one McpServer. */
export type Installer<Mcp> = (mcp: Mcp) => void;

/**
 * An MCP server with S2SP resource and consumer tools and its own data plane.
 * `Mcp` is the McpServer type of the SDK line it runs on (both lines'
 * McpServers fit; the default names only what s2sp needs of them).
 */
export class S2SPServer<Mcp extends McpServerLike = McpServerLike> {
  /**
   * An McpServer carrying every registration. Transports are served by
   * fresh servers from {@link createMcpServer}, so register your own tools,
   * resources and prompts with {@link configure}, not on `.mcp` alone.
   */
  readonly mcp: Mcp;
  readonly #options: S2SPServerOptions;
  readonly #installers: Installer<Mcp>[] = [];
  readonly #sdk: McpSdk;
  readonly #connections: McpConnection[] = [];
  #store?: BodyStore;
  /** The app the plugins go on: the one passed in, or `#ownApp`. */
  #app?: FastifyInstance;
  /** The app this server made, listens on and closes. */
  #ownApp?: FastifyInstance;
  #plane?: DataPlane;
  #mounted = false;
  readonly #timeouts: Required<HttpTimeouts>;
  readonly #http: ServerHttpOptions;
  readonly #listeners = new Listeners<ServerEvent>();

  /** @throws S2SPError `S2SP_ERR_OPTION_INVALID` naming the first invalid option */
  constructor(options: S2SPServerOptions) {
    this.#timeouts = checkServerOptions(options);
    this.#options = options;
    this.#http = options.http ?? {};
    // Settings make the MemoryStore now, so they are checked now; with none it waits for first use.
    if (options.store !== undefined) this.#useStore(isBodyStore(options.store) ? options.store : new MemoryStore(options.store));
    this.#app = this.#http.app;
    this.#sdk = mcpSdk(options.sdk);
    this.mcp = this.#newMcpServer();
  }

  /**
   * Where resource tools cache bodies: the store passed in, or a MemoryStore
   * made on first use, so a server with only consumer tools holds none.
   */
  get store(): BodyStore {
    return this.#store ?? this.#useStore(new MemoryStore());
  }

  /**
   * Tells `listener` what happens on this server from now on: its store's
   * events (tokens minted, consumed, expired...) and its tools' unexpected
   * failures; returns the function that stops it. While nobody listens, a
   * tool failure is logged (the fastify logger once listening with one, else
   * stderr; tokens redacted).
   */
  observe(listener: Listener<ServerEvent>): Unsubscribe {
    return this.#listeners.add(listener);
  }

  /** Makes `store` this server's, its events heard by this server's listeners. */
  #useStore(store: BodyStore): BodyStore {
    store.observe?.((event) => this.#listeners.emit(event));
    return (this.#store = store);
  }

  /** Registers a resource tool (SPEC 2.1): the handler returns rows or an Arrow Table. */
  resourceTool<Shape extends ZodRawShapeCompat>(name: string, config: ToolConfig<Shape>, handler: ResourceToolHandler<Shape>): this {
    const context = this.#resourceContext();
    return this.configure((mcp) => registerResourceTool(mcp, name, config, handler, context));
  }

  /**
   * Registers `query_rows` (README, "query_rows"): SQL over bodies of other
   * servers, fetched as a consumer does (`tools.consumer`), answered as a
   * body of this server's store, so results chain into further tools.
   * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for a bad option
   */
  queryTool(options: QueryToolOptions = {}, name = QUERY_TOOL): this {
    checkQueryToolOptions(options);
    const context = this.#resourceContext();
    const { registry } = this.#options;
    const consumer = { ...this.#options.tools?.consumer, ...(registry === undefined ? {} : { registry }), ...options.consumer };
    return this.configure((mcp) => registerQueryTool(mcp, context, { ...options, consumer }, name));
  }

  /** Where a resource tool's bodies go: this server's store, behind its data plane's URLs. */
  #resourceContext(): ResourceToolContext {
    return {
      store: this.store,
      resourceUrlFor: (token: string) => this.resourceUrlFor(token),
      abstractRowLimit: this.#options.tools?.abstractRowLimit,
      observe: this.#toolFailed,
    };
  }

  /**
   * Registers a consumer tool (SPEC 2.2): the handler receives merged rows
   * and an Arrow Table, or with `{ batches: true }` the body's record
   * batches as they arrive.
   */
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerBatchToolHandler, options: { batches: true }): this;
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerToolHandler, options?: { batches?: false }): this;
  consumerTool(name: string, config: ConsumerToolConfig, handler: ConsumerToolHandler | ConsumerBatchToolHandler, options: { batches?: boolean } = {}): this {
    const { registry } = this.#options;
    // Registered now, so a scrape shows the consumer's counters (at zero) before its first fetch.
    if (registry !== undefined) consumerMetricsFor(registry).catch(() => {}); // a failure shows at the first fetch
    const consumer = { ...this.#options.tools?.consumer, observe: this.#toolFailed, ...(registry === undefined ? {} : { registry }) };
    return this.configure((mcp) =>
      options.batches === true
        ? registerConsumerTool(mcp, name, config, handler as ConsumerBatchToolHandler, { ...consumer, batches: true })
        : registerConsumerTool(mcp, name, config, handler as ConsumerToolHandler, consumer),
    );
  }

  /** Applies `install` to `.mcp` now and to every McpServer made for HTTP requests later. */
  configure(install: Installer<Mcp>): this {
    install(this.mcp);
    this.#installers.push(install);
    return this;
  }

  /** A fresh McpServer carrying every registration so far. */
  createMcpServer(): Mcp {
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
    const { publicUrl, prefix = '' } = this.#http;
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
    if (this.#mounted) throw new S2SPError('S2SP_ERR_SERVER_STATE', { problem: 'mounted' });
    this.#mounted = true;
    const { host = '127.0.0.1', publicUrl } = this.#http;
    const app = (this.#app ??= this.#newApp());
    const { registry } = this.#options;
    if (this.#store !== undefined) {
      const plane = createDataPlane({
        store: this.#store,
        publicUrl,
        bodyLimit: this.#options.dataPlane?.bodyLimit,
        workers: this.#options.dataPlane?.workers,
        prepare: this.#options.dataPlane?.prepare,
        fullGc: this.#options.dataPlane?.fullGc,
        // Served below, once, whether or not this server has a data plane.
        ...(registry === undefined ? {} : { registry, metricsPath: false as const }),
      });
      await app.register(plane.plugin, { prefix: this.#http.prefix ?? '' });
      this.#plane = plane;
    }
    if (registry !== undefined) serveMetrics(app, registry, METRICS_PATH);
    if (options.mcpPath !== undefined) {
      await app.register(mcpHttpPlugin, {
        path: options.mcpPath,
        createServer: () => this.createMcpServer(),
        bodyLimit: this.#options.mcp?.bodyLimit,
        allowedHosts: [...(this.#options.mcp?.allowedHosts ?? []), ...reachableHosts(host, publicUrl)],
        allowedOrigins: [...(this.#options.mcp?.allowedOrigins ?? []), ...(publicUrl === undefined ? [] : [new URL(publicUrl).origin])],
        ...(this.#options.mcp?.auth === undefined ? {} : { auth: this.#options.mcp.auth }),
        ...(publicUrl === undefined ? {} : { publicUrl }),
      });
    }
  }

  /**
   * Starts the HTTP server, mounting first unless `mount` was called.
   * An app passed as `app` that is already listening is left as it is.
   * @returns the URL the app listens on
   * @throws S2SPError `S2SP_ERR_PUBLIC_URL_REQUIRED` when a server with a data plane would bind a wildcard address without `publicUrl`
   */
  async listen(options: ListenOptions = {}): Promise<string> {
    if (this.#ownApp?.server.listening === true) throw new S2SPError('S2SP_ERR_SERVER_STATE', { problem: 'listening' });
    const { host = '127.0.0.1', port = 0 } = this.#http;
    if (this.#store !== undefined && this.#http.publicUrl === undefined && isWildcardHost(host) && this.#http.app === undefined) {
      throw new S2SPError('S2SP_ERR_PUBLIC_URL_REQUIRED', { host });
    }
    if (!this.#mounted) await this.mount(options);
    const app = this.#app as FastifyInstance;
    if (!app.server.listening) await app.listen({ host, port });
    return listeningOrigin(app) as string;
  }

  /** The SDK line this server runs on. */
  get sdkLine(): McpSdkLine {
    return this.#sdk.line;
  }

  /**
   * Serves MCP over a transport of this server's SDK line (stdio,
   * in-memory...): on v2 the client's opening picks the protocol era, as
   * `serveStdio` does; on v1, the 2025 handshake.
   */
  async connect(transport: unknown): Promise<void> {
    this.#connections.push(await this.#sdk.serveTransport(() => this.createMcpServer(), transport));
  }

  /**
   * Serves MCP over this process's stdin/stdout, starting the data plane
   * first unless `dataPlane` is false (a server with only consumer tools).
   */
  async serveStdio(options: { dataPlane?: boolean } = {}): Promise<void> {
    if (options.dataPlane !== false && this.#app === undefined) await this.listen();
    this.#connections.push(await this.#sdk.serveTransport(() => this.createMcpServer(), undefined));
  }

  /** Stops the HTTP server (unless it is an app passed as `app`) and the MCP server, and empties the store. */
  async close(): Promise<void> {
    if (this.#ownApp !== undefined) {
      await this.#ownApp.close();
      // A closed app takes no plugins: the next listen starts afresh.
      this.#ownApp = this.#app = this.#plane = undefined;
      this.#mounted = false;
    }
    for (const connection of this.#connections.splice(0)) await connection.close();
    await this.mcp.close();
    await this.#store?.close();
  }

  /** An unexpected tool error: to the listeners, or while none listens, the fastify logger once listening with one, or stderr. */
  readonly #toolFailed: Listener<ToolFailedEvent> = (event) => {
    if (!this.#listeners.empty) return this.#listeners.emit(event);
    const app = this.#app;
    const { logger } = this.#http;
    if (app !== undefined && logger !== undefined && logger !== false) {
      app.log.error({ tool: event.tool, err: redactedError(event.error) }, 'tool failed');
      return;
    }
    logToolFailure(event);
  };

  /** This server's own fastify app, with the HTTP guards: timeouts, client errors, error documents. */
  #newApp(): FastifyInstance {
    const timeouts = this.#timeouts;
    const app = Fastify({
      logger: redactingLogger(this.#http.logger ?? false),
      clientErrorHandler: s2spClientErrorHandler,
      frameworkErrors: s2spFrameworkErrors,
      http: { connectionsCheckingInterval: checkIntervalMs(timeouts) },
    });
    applyHttpTimeouts(app.server, timeouts);
    // fastify's default 404 logs "Route POST:<url> not found": a mistyped
    // resource_url would put its token in the log.
    app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorDocumentOf(new S2SPError('S2SP_ERR_ROUTE_NOT_FOUND'))));
    app.setErrorHandler((error, request, reply) => {
      const wire = errorForReply(error);
      if (wire.status >= 500) request.log.error({ err: redactedError(error) }, 'request failed');
      return reply.code(wire.status).type(JSON_CONTENT_TYPE).send(errorDocumentOf(wire));
    });
    this.#ownApp = app;
    return app;
  }

  #newMcpServer(): Mcp {
    const { name, version = '0.0.0', instructions } = this.#options;
    return this.#sdk.createServer({ name, version }, instructions) as Mcp;
  }
}

/** Logger options whose request serializer redacts tokens in every URL this server logs. */
function redactingLogger(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false;
  const base = logger === true ? {} : logger;
  return { ...base, serializers: { ...base.serializers, req: dataPlaneLogSerializers.req } };
}

/** True for an address that binds every interface (0.0.0.0, ::). */
export function isWildcardHost(host: string): boolean {
  if (host === '0.0.0.0') return true;
  if (!isIPv6(host)) return false;
  return new URL(`http://[${host}]`).hostname === '[::]';
}

/**
 * Host names clients may use to reach a server bound to `host`, besides
 * loopback: the bound name or address itself, every interface address for a
 * wildcard, and the public URL's host.
 */
function reachableHosts(host: string, publicUrl: string | undefined): string[] {
  const hosts: string[] = [];
  if (isWildcardHost(host)) {
    for (const addresses of Object.values(networkInterfaces())) {
      for (const { address, family, scopeid } of addresses ?? []) {
        // A link-local IPv6 address needs its zone, which no Host header carries.
        if (scopeid !== undefined && scopeid !== 0) continue;
        hosts.push(family === 'IPv6' ? `[${address}]` : address);
      }
    }
  } else {
    const hostname = hostnameOfHeader(isIPv6(host) ? `[${host}]` : host);
    if (hostname !== undefined && !isLoopbackHost(hostname)) hosts.push(hostname);
  }
  if (publicUrl !== undefined) hosts.push(new URL(publicUrl).hostname);
  return hosts;
}

/**
 * Checks every option a server is built with.
 * @returns the HTTP timeouts, defaults filled in
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
function checkServerOptions(value: S2SPServerOptions): Required<HttpTimeouts> {
  const options = optionsObject(value);
  nonEmptyStringOption(options.name, 'name');
  if (options.sdk !== undefined && options.sdk !== 'v1' && options.sdk !== 'v2') throw invalidOption('sdk', '"v2" or "v1"', options.sdk);
  if (options.store !== undefined && !isBodyStore(options.store)) optionsObject(options.store, 'store');
  const http = optionsObject(options.http, 'http');
  if (http.host !== undefined) nonEmptyStringOption(http.host, 'http.host');
  integerOption(http.port, 'http.port', 0, 65535);
  httpUrlOption(http.publicUrl, 'http.publicUrl');
  if (http.prefix !== undefined && (typeof http.prefix !== 'string' || (http.prefix !== '' && !/^\/[^?#]*[^/?#]$/.test(http.prefix)))) {
    throw invalidOption('http.prefix', 'a path such as "/internal" (a leading slash, no trailing one)', http.prefix);
  }
  if (http.app !== undefined && (typeof http.app !== 'object' || http.app === null || typeof http.app.register !== 'function')) {
    throw invalidOption('http.app', 'a fastify instance', http.app);
  }
  const tools = optionsObject(options.tools, 'tools');
  if (tools.consumer !== undefined) checkConsumerOptions(tools.consumer, 'tools.consumer');
  integerOption(tools.abstractRowLimit, 'tools.abstractRowLimit', 1);
  const dataPlane = optionsObject(options.dataPlane, 'dataPlane');
  integerOption(dataPlane.bodyLimit, 'dataPlane.bodyLimit', 1);
  if (typeof dataPlane.workers !== 'object') integerOption(dataPlane.workers, 'dataPlane.workers', 0);
  prepareOption(dataPlane.prepare, 'dataPlane.prepare');
  if (dataPlane.fullGc !== undefined) functionOption(dataPlane.fullGc, 'dataPlane.fullGc');
  const mcp = optionsObject(options.mcp, 'mcp');
  integerOption(mcp.bodyLimit, 'mcp.bodyLimit', 1);
  if (mcp.auth !== undefined) checkMcpAuthOptions(mcp.auth, 'mcp.auth');
  // Builds a guard once only to check the entries now rather than at listen().
  createHostGuard({
    allowedHosts: stringListOption(mcp.allowedHosts, 'mcp.allowedHosts'),
    allowedOrigins: stringListOption(mcp.allowedOrigins, 'mcp.allowedOrigins'),
  });
  return resolveHttpTimeouts(http.timeouts);
}
