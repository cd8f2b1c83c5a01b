/**
 * The transport flags `serve` and `consumer` share, and starting a server on
 * the chosen one: stdio (MCP on stdin/stdout, data plane on its own port) or
 * http (MCP at /mcp and the data plane on one fastify server).
 */
import type { S2SPServer } from '../control/s2sp-server.js';

/** Transport flags. */
export interface TransportFlags {
  transport: 'stdio' | 'http';
  host?: string;
  /** http: the port of the one server (default 3000). */
  port?: number;
  /** stdio: the data plane's port (default: any free port). */
  dataPort?: number;
  publicUrl?: string;
}

/** Default port of `--transport http`. */
export const DEFAULT_HTTP_PORT = 3000;

/**
 * Starts `server` on the transport the flags name and logs where.
 * @param dataPlane whether the server needs a data plane (resource tools do; over stdio a consumer does not)
 */
export async function listenForTransport(
  server: S2SPServer,
  flags: TransportFlags,
  log: (line: string) => void,
  dataPlane: boolean,
): Promise<void> {
  if (flags.transport === 'http') {
    const url = await server.listen({ mcpPath: '/mcp' });
    log(`s2sp: MCP at ${url}/mcp${dataPlane ? `, data plane at ${url}/s2sp/` : ''}`);
    return;
  }
  await server.serveStdio({ dataPlane });
  log(`s2sp: MCP over stdio${dataPlane ? `, data plane at ${server.resourceUrlFor('x').slice(0, -1)}` : ''}`);
}
