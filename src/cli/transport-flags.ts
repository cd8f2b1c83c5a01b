/**
 * The transport flags `serve` and `consumer` share, and starting a server on
 * the chosen one: stdio (MCP on stdin/stdout, data plane on its own port) or
 * http (MCP at /mcp and the data plane on one fastify server).
 */
import type { Registry } from 'prom-client';
import type { S2SPServer, S2SPServerOptions } from '../server/s2sp-server.js';
import type { HttpTimeouts } from '../server/http-timeouts.js';
import type { McpAuthOptions } from '../server/mcp-authorization.js';

/** Transport flags. */
export interface TransportFlags {
  transport: 'stdio' | 'http';
  host?: string;
  /** http: the port of the one server (default 3000). */
  port?: number;
  /** stdio: the data plane's port (default: any free port). */
  dataPort?: number;
  publicUrl?: string;
  /** Host names and origins /mcp accepts besides loopback (DNS-rebinding protection). */
  mcpAllowedHosts?: string[];
  mcpAllowedOrigins?: string[];
  /** Largest /mcp request body in bytes. */
  mcpBodyLimit?: number;
  /** OAuth on /mcp (`--auth-issuer`, `--auth-audience`, `--auth-scope`). */
  auth?: McpAuthOptions;
  /** HTTP timeouts; absent ones keep their defaults. */
  timeouts?: HttpTimeouts;
  /** Prometheus metrics at /metrics (default true; `--no-metrics` turns them off). */
  metrics?: boolean;
}

/** Default port of `--transport http`. */
export const DEFAULT_HTTP_PORT = 3000;

/** The S2SPServer options the transport flags set: where it listens and what it advertises. */
export function listenOptions(name: string, flags: TransportFlags): Pick<S2SPServerOptions, 'name' | 'version' | 'http' | 'mcp'> {
  return {
    name,
    version: '0.1.0',
    http: {
      host: flags.host,
      // Over stdio only the data plane listens, on --data-port; over http one server takes --port.
      port: flags.transport === 'http' ? flags.port : flags.dataPort,
      publicUrl: flags.publicUrl,
      timeouts: flags.timeouts,
    },
    mcp: {
      allowedHosts: flags.mcpAllowedHosts,
      allowedOrigins: flags.mcpAllowedOrigins,
      bodyLimit: flags.mcpBodyLimit,
      ...(flags.auth === undefined ? {} : { auth: flags.auth }),
    },
  };
}

/** A fresh registry for the server's metrics, or undefined when they are off (prom-client is then never loaded). */
export async function metricsRegistryFor(flags: TransportFlags): Promise<Registry | undefined> {
  if (flags.metrics === false) return undefined;
  const { Registry } = await import('prom-client');
  return new Registry();
}

/**
 * Starts `server` on the transport the flags name and logs where. Both
 * commands serve bodies (serve its table, consumer query_rows' results), so
 * the data plane always listens: beside /mcp over http, on its own port over stdio.
 */
export async function listenForTransport(server: S2SPServer, flags: TransportFlags, log: (line: string) => void): Promise<void> {
  const metrics = flags.metrics !== false;
  if (flags.transport === 'http') {
    const url = await server.listen({ mcpPath: '/mcp' });
    const auth = flags.auth === undefined ? '' : ` (OAuth: tokens from ${flags.auth.issuer})`;
    log(`s2sp: MCP at ${url}/mcp${auth}, data plane at ${url}/s2sp/${metrics ? `, metrics at ${url}/metrics` : ''}`);
    return;
  }
  const url = await server.listen();
  await server.serveStdio({ dataPlane: false });
  const parts = [`MCP over stdio`, `data plane at ${server.resourceUrlFor('x').slice(0, -1)}`];
  if (metrics) parts.push(`metrics at ${url}/metrics`);
  log(`s2sp: ${parts.join(', ')}`);
}
