/**
 * The HTTP server's timeouts (node:http's, set on the server S2SPServer
 * listens with). fastify turns the request timeout off by default, so
 * without these a client that sends its headers and then one body byte now
 * and then holds a connection forever.
 */
import type { Server } from 'node:http';
import { integerOption, invalidOption } from '../option-checks.js';

/** Timeouts in milliseconds; 0 turns one off. */
export interface HttpTimeouts {
  /** The whole request, headers and body, must arrive within this (default 60 s); else 408 and the connection closes. */
  requestMs?: number;
  /** The request headers must arrive within this (default 15 s; at most `requestMs`). */
  headersMs?: number;
  /** An idle keep-alive connection is closed after this (default 5 s). */
  keepAliveMs?: number;
  /**
   * A connection on which no byte moves either way for this long is closed
   * (default 120 s): a client that stopped reading its response, whose lease
   * is then released. It also bounds a tool call that sends nothing for that
   * long (MCP clients give up after 60 s by default).
   */
  idleMs?: number;
}

/** The defaults of {@link HttpTimeouts}. */
export const DEFAULT_HTTP_TIMEOUTS: Readonly<Required<HttpTimeouts>> = Object.freeze({
  requestMs: 60_000,
  headersMs: 15_000,
  keepAliveMs: 5_000,
  idleMs: 120_000,
});

/**
 * The timeouts with defaults filled in.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for a value that is not an integer >= 0, or headers allowed longer than the request
 */
export function resolveHttpTimeouts(timeouts: HttpTimeouts = {}): Required<HttpTimeouts> {
  const resolved = {
    requestMs: integerOption(timeouts.requestMs, 'timeouts.requestMs', 0) ?? DEFAULT_HTTP_TIMEOUTS.requestMs,
    headersMs: integerOption(timeouts.headersMs, 'timeouts.headersMs', 0) ?? DEFAULT_HTTP_TIMEOUTS.headersMs,
    keepAliveMs: integerOption(timeouts.keepAliveMs, 'timeouts.keepAliveMs', 0) ?? DEFAULT_HTTP_TIMEOUTS.keepAliveMs,
    idleMs: integerOption(timeouts.idleMs, 'timeouts.idleMs', 0) ?? DEFAULT_HTTP_TIMEOUTS.idleMs,
  };
  if (timeouts.headersMs === undefined && resolved.requestMs > 0) resolved.headersMs = Math.min(resolved.headersMs, resolved.requestMs);
  if (resolved.requestMs > 0 && resolved.headersMs > resolved.requestMs) {
    throw invalidOption('timeouts.headersMs', `at most timeouts.requestMs (${resolved.requestMs})`, resolved.headersMs);
  }
  return resolved;
}

/**
 * How often node:http looks for requests past their time (it checks on an
 * interval, 30 s by default): a fraction of the shortest timeout, so a
 * timeout fires at most that much late, and never more often than every 50 ms.
 */
export function checkIntervalMs(timeouts: Required<HttpTimeouts>): number {
  const shortest = Math.min(...[timeouts.requestMs, timeouts.headersMs].filter((ms) => ms > 0));
  return Number.isFinite(shortest) ? Math.max(50, Math.min(1000, Math.floor(shortest / 4))) : 30_000;
}

/** Sets the timeouts on a node:http server (before or after it listens). */
export function applyHttpTimeouts(server: Server, timeouts: Required<HttpTimeouts>): void {
  server.requestTimeout = timeouts.requestMs;
  server.headersTimeout = timeouts.headersMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.setTimeout(timeouts.idleMs);
}
