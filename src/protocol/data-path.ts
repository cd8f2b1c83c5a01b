/**
 * Where the data plane lives (SPEC 3): `POST <base>/s2sp/data/<token>` and
 * `GET <base>/s2sp/health`. Building a resource_url and finding the token in
 * one are done here only, so the path is spelled once.
 */
/** The path segment that precedes a token. */
export const DATA_PATH_PREFIX = '/s2sp/data/';
/** The health endpoint's path, relative to the plane's base. */
export const HEALTH_PATH = '/s2sp/health';
/** The Prometheus text endpoint's path (SPEC 3.5), where metrics are on. */
export const METRICS_PATH = '/metrics';
/** The fastify route of a fetch. */
export const DATA_ROUTE = `${DATA_PATH_PREFIX}:token`;
/** The fastify wildcard route under the data path (wrong methods, malformed tokens). */
export const DATA_ROUTE_WILDCARD = `${DATA_PATH_PREFIX}*`;

/** A resource_url path ends with the data path and one token-like segment. */
const TOKEN_IN_PATH = /\/s2sp\/data\/([^/]+)$/;

/**
 * The resource_url of a token under a base URL (scheme, host and any prefix
 * the plane is mounted under; a trailing slash is ignored).
 */
export function resourceUrlOf(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${DATA_PATH_PREFIX}${token}`;
}

/**
 * The token segment of a URL path ending in `/s2sp/data/<segment>`, or
 * undefined when the path has another shape. The segment may still be
 * malformed: check it with `isWellFormedToken` (token.ts).
 */
export function tokenSegmentOf(pathname: string): string | undefined {
  return TOKEN_IN_PATH.exec(pathname)?.[1];
}
