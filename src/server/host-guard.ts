/**
 * DNS-rebinding protection for the MCP endpoint (SPEC 4, and the MCP
 * Streamable HTTP transport's security warning). A web page on another site
 * can make a browser send requests to a server on this machine by pointing
 * its own DNS name at 127.0.0.1: the requests then carry that name in `Host`,
 * and a cross-site request carries the page's `Origin`. Both headers are
 * checked against lists: loopback names always, plus what the operator adds.
 * A request without `Origin` (any non-browser client) is judged by `Host`.
 *
 * The MCP SDK's own checks are not used: the transport options are
 * deprecated and compare `Host` including its port; the middleware is
 * Express-only; and both echo the header whole in the refusal.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { S2SPError } from '../errors.js';
import { invalidOption } from '../option-checks.js';
import { isLoopbackHost } from '../protocol/loopback.js';

/** Options of {@link createHostGuard}. */
export interface HostGuardOptions {
  /**
   * Host names accepted in `Host` besides loopback (localhost, 127.0.0.0/8,
   * [::1]); any port. IPv6 addresses in brackets, e.g. `[fd00::1]`.
   */
  allowedHosts?: readonly string[];
  /** Origins accepted in `Origin` besides loopback ones (http or https, any port), e.g. `https://app.example.com`. */
  allowedOrigins?: readonly string[];
}

/** Checks one request's headers; returns the refusal, or undefined to let it through. */
export type HostGuard = (headers: IncomingHttpHeaders) => S2SPError | undefined;

// A Host header is a name or an address and an optional port, nothing else:
// `evil.example@127.0.0.1` would parse as 127.0.0.1 with a user name.
const HOST_HEADER = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The URL.hostname of a `Host` header value, or undefined when it is not one. */
export function hostnameOfHeader(value: string): string | undefined {
  if (!HOST_HEADER.test(value)) return undefined;
  try {
    return new URL(`http://${value}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Builds the guard.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for an entry that is not a host name or an http(s) origin
 */
export function createHostGuard(options: HostGuardOptions = {}): HostGuard {
  const hosts = new Set((options.allowedHosts ?? []).map(hostOption));
  const origins = new Set((options.allowedOrigins ?? []).map(originOption));
  return (headers) => {
    const host = headers.host;
    const hostname = typeof host === 'string' ? hostnameOfHeader(host) : undefined;
    if (hostname === undefined || !(isLoopbackHost(hostname) || hosts.has(hostname))) {
      return new S2SPError('S2SP_ERR_MCP_HOST_REFUSED', { problem: 'host', host: host ?? '' });
    }
    const origin = headers.origin;
    if (origin === undefined) return undefined;
    if (!isAllowedOrigin(origin, origins)) {
      return new S2SPError('S2SP_ERR_MCP_HOST_REFUSED', { problem: 'origin', origin });
    }
    return undefined;
  };
}

function isAllowedOrigin(origin: string, allowed: ReadonlySet<string>): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // includes the opaque origin "null"
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopbackHost(url.hostname) || allowed.has(url.origin);
}

function hostOption(entry: string): string {
  const hostname = typeof entry === 'string' ? hostnameOfHeader(entry.trim()) : undefined;
  if (hostname === undefined) {
    throw invalidOption('allowedHosts', 'a list of host names (e.g. mcp.example.com or [fd00::1])', entry);
  }
  return hostname;
}

function originOption(entry: string): string {
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw invalidOption('allowedOrigins', 'a list of http(s) origins (e.g. https://app.example.com)', entry);
  }
  return url.origin;
}
