/**
 * The consumer's first line of defence: a `resource_url` comes from an LLM,
 * so before any byte leaves this process we check that it is an S2SP
 * data-plane URL (`.../s2sp/data/<token>`) on an origin we trust. Without the
 * origin check a prompt-injected agent could make the consumer POST to any
 * host it can reach (SSRF).
 *
 * Messages are written for the LLM that chose the URL: they say what to do
 * next, and never repeat the token (a bearer capability) in full.
 */
import { isWellFormedToken, redactToken } from '../protocol/token.js';
import { S2SPError } from '../errors.js';
import { tokenSegmentOf } from '../protocol/data-path.js';
import { isLoopbackHost } from '../protocol/loopback.js';

/**
 * Origins a consumer trusts besides loopback: none. Loopback (localhost,
 * 127.0.0.0/8, [::1]) is always allowed, since the resource server usually
 * runs next to the consumer.
 */
export const DEFAULT_ALLOWED_ORIGINS: readonly string[] = Object.freeze([]);

/**
 * Parses and checks a resource_url.
 *
 * @param resourceUrl the URL as the agent passed it
 * @param allowedOrigins origins trusted besides loopback, e.g. `https://data.example.com`
 * @returns the parsed URL
 * @throws S2SPError `S2SP_ERR_CONSUMER_URL_INVALID` for anything that is not an
 *   http(s) URL ending in `/s2sp/data/<token>`; `S2SP_ERR_CONSUMER_ORIGIN_REFUSED`
 *   when its origin is neither loopback nor allowed; `S2SP_ERR_CONSUMER_ARG_INVALID`
 *   when an entry of `allowedOrigins` is not an http(s) origin (a configuration error)
 */
export function checkResourceUrl(resourceUrl: string, allowedOrigins: readonly string[] = DEFAULT_ALLOWED_ORIGINS): URL {
  if (typeof resourceUrl !== 'string' || resourceUrl.trim() === '') {
    throw new S2SPError('S2SP_ERR_CONSUMER_URL_INVALID', { problem: 'missing' });
  }
  let url: URL;
  try {
    url = new URL(resourceUrl.trim());
  } catch {
    // The text may hold a token: do not echo it.
    throw new S2SPError('S2SP_ERR_CONSUMER_URL_INVALID', { problem: 'notUrl' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new S2SPError('S2SP_ERR_CONSUMER_URL_INVALID', { problem: 'scheme', protocol: url.protocol });
  }
  const segment = tokenSegmentOf(url.pathname);
  if (segment === undefined) {
    throw new S2SPError('S2SP_ERR_CONSUMER_URL_INVALID', { problem: 'path' });
  }
  if (!isWellFormedToken(segment)) {
    throw new S2SPError('S2SP_ERR_CONSUMER_URL_INVALID', { problem: 'token', redactedToken: redactToken(segment) });
  }
  const allowed = normaliseOrigins(allowedOrigins);
  if (!isLoopbackHost(url.hostname) && !allowed.includes(url.origin)) {
    throw new S2SPError('S2SP_ERR_CONSUMER_ORIGIN_REFUSED', { origin: url.origin, allowedOrigins: allowed });
  }
  return url;
}

/** `URL.origin` of each entry, so `https://X.example:443/` equals `https://x.example`. */
function normaliseOrigins(origins: readonly string[]): string[] {
  return origins.map((origin) => {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'allowedOriginNotUrl', origin });
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'allowedOriginScheme', origin });
    }
    return parsed.origin;
  });
}
