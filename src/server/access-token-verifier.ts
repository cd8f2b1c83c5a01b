/**
 * Checks the OAuth 2.1 access tokens the MCP endpoint receives (the MCP
 * authorization spec: a remote MCP server is a resource server). JWT access
 * tokens (RFC 9068) are verified by jose against the issuer's JWKS, found
 * through its RFC 8414 metadata or OpenID discovery and cached and rotated by
 * jose's remote key set; opaque tokens go to the embedder's introspection
 * hook (RFC 7662), when there is one. No JWT or JWKS code of ours: jose owns
 * parsing, signatures and the time checks.
 *
 * Algorithms: only those the JWKS names (a key's `alg`, or the one its key
 * type implies when it names none, as Entra's keys do), never `none` and
 * never a symmetric one.
 */
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { S2SPError, isS2SPError } from '../errors.js';
import type { CallerIdentity } from '../control/tool-host.js';
import { isRecord } from '../json/is-record.js';

/**
 * An RFC 7662 introspection answer, as an authorization server's
 * introspection endpoint returns it; `active: false` refuses the token.
 */
export interface IntrospectedToken {
  active: boolean;
  sub?: string;
  client_id?: string;
  /** Space-separated scopes. */
  scope?: string;
  /** Seconds since the epoch. */
  exp?: number;
  nbf?: number;
  aud?: string | string[];
  iss?: string;
  [claim: string]: unknown;
}

/**
 * Asks the authorization server about an opaque (non-JWT) access token,
 * typically by POSTing it to its introspection endpoint. Resolve undefined
 * (or `active: false`) for a token it does not know.
 */
export type TokenIntrospector = (token: string) => Promise<IntrospectedToken | undefined>;

/** What {@link createAccessTokenVerifier} needs. */
export interface AccessTokenVerifierOptions {
  /** The authorization server's issuer identifier (its `iss`). */
  issuer: string;
  /** The RFC 8707 resource the tokens must name in `aud`. */
  audience: string;
  /** Opaque-token introspection; without it only JWTs are accepted. */
  introspect?: TokenIntrospector;
  /** Clock skew allowed on `exp` and `nbf`, in seconds. */
  clockToleranceSeconds: number;
}

/** A token that passed every check. */
export interface VerifiedToken {
  identity: CallerIdentity;
  /** `exp`, seconds since the epoch. */
  expiresAt: number | undefined;
}

/** How long one discovery or JWKS request may take. */
const FETCH_TIMEOUT_MS = 10_000;
/** A key set a token's `kid` is missing from is fetched again at most this often (rotation). */
const JWKS_COOLDOWN_MS = 30_000;

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * A function checking one access token.
 * @throws S2SPError `S2SP_ERR_AUTH_TOKEN_INVALID` (401) naming the failed check;
 *   `S2SP_ERR_AUTH_ISSUER_UNAVAILABLE` (503) when the issuer's metadata or keys cannot be read
 */
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): (token: string) => Promise<VerifiedToken> {
  let discovered: Promise<{ issuer: string; keys: KeySet }> | undefined;
  // Discovered on the first token, not at start: an authorization server that is down then
  // makes requests fail with a 503 until it is back, instead of the server failing to start.
  const keysOf = () =>
    (discovered ??= discover(options.issuer).catch((error: unknown) => {
      discovered = undefined;
      throw error;
    }));
  return async (token) => {
    if (!looksLikeJws(token)) {
      if (options.introspect === undefined) throw invalid('malformed');
      return introspected(token, options);
    }
    const alg = algOfHeader(token);
    const { issuer, keys } = await keysOf();
    let algorithms = await algorithmsOf(keys);
    // A rotation may bring a key of a new algorithm; jose reloads for a new kid, not for this.
    if (!algorithms.includes(alg) && !keys.coolingDown && alg !== 'none') {
      await keys.reload().catch(() => {});
      algorithms = await algorithmsOf(keys);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer,
        audience: options.audience,
        algorithms,
        clockTolerance: options.clockToleranceSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw failureOf(error, options.audience);
    }
    return { identity: identityOf(payload), expiresAt: payload.exp };
  };
}

/** Three base64url parts: a JWS in compact form (a JWE has five, and is not taken). */
function looksLikeJws(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

function algOfHeader(token: string): string {
  try {
    const { alg } = decodeProtectedHeader(token);
    if (typeof alg === 'string') return alg;
  } catch {
    // Not JSON, or not base64url: the same answer as a header without alg.
  }
  throw invalid('malformed');
}

/**
 * The issuer's metadata, RFC 8414 first (its well-known path goes between
 * the host and the issuer's path), then OpenID discovery; its `issuer` must
 * be the one configured (RFC 8414 section 3.3; a trailing slash aside).
 */
async function discover(issuer: string): Promise<{ issuer: string; keys: KeySet }> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const candidates = [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
  for (const candidate of candidates) {
    const metadata = await fetchJson(candidate);
    if (metadata === undefined || typeof metadata.jwks_uri !== 'string' || typeof metadata.issuer !== 'string') continue;
    if (metadata.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) continue;
    const keys = createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: FETCH_TIMEOUT_MS, cooldownDuration: JWKS_COOLDOWN_MS });
    return { issuer: metadata.issuer, keys };
  }
  throw new S2SPError('S2SP_ERR_AUTH_ISSUER_UNAVAILABLE');
}

async function fetchJson(url: string): Promise<Record<string, unknown> | undefined> {
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
    if (!response.ok) return undefined;
    const value: unknown = await response.json();
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The algorithms the current key set names (fetched first if need be). */
async function algorithmsOf(keys: KeySet): Promise<string[]> {
  if (keys.jwks() === undefined) {
    try {
      await keys.reload();
    } catch (error) {
      throw new S2SPError('S2SP_ERR_AUTH_ISSUER_UNAVAILABLE', { cause: error });
    }
  }
  return [...new Set(signingAlgorithms(keys.jwks() ?? { keys: [] }))];
}

/** Each signing key's `alg`, or what its type implies; symmetric keys and `none` never. */
function signingAlgorithms(set: JSONWebKeySet): string[] {
  const out: string[] = [];
  for (const key of set.keys) {
    if (key.use === 'enc' || key.kty === 'oct') continue;
    if (typeof key.alg === 'string') {
      if (key.alg !== 'none' && !key.alg.startsWith('HS')) out.push(key.alg);
      continue;
    }
    if (key.kty === 'RSA') out.push('RS256');
    else if (key.kty === 'EC') out.push(({ 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' } as Record<string, string>)[key.crv ?? ''] ?? 'ES256');
    else if (key.kty === 'OKP') out.push('Ed25519', 'EdDSA');
  }
  return out;
}

/** jose's failure as ours: which check failed (401), or the issuer out of reach (503). */
function failureOf(error: unknown, audience: string): S2SPError {
  if (isS2SPError(error)) return error as S2SPError;
  const { code, claim } = (error ?? {}) as { code?: unknown; claim?: unknown };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return invalid('expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'iss') return invalid('issuer');
      if (claim === 'aud') return new S2SPError('S2SP_ERR_AUTH_TOKEN_INVALID', { problem: 'audience', audience });
      if (claim === 'nbf') return invalid('notYetValid');
      return invalid('malformed');
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return invalid('signature');
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return invalid('algorithm');
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JWT_CLAIM_INVALID':
      return invalid('malformed');
    default:
      // The key set could not be fetched or read (timeout, HTTP error, not a JWKS).
      return new S2SPError('S2SP_ERR_AUTH_ISSUER_UNAVAILABLE', { cause: error });
  }
}

/** An opaque token, as the introspection hook describes it, checked as a JWT would be. */
async function introspected(token: string, options: AccessTokenVerifierOptions): Promise<VerifiedToken> {
  let answer: IntrospectedToken | undefined;
  try {
    answer = await options.introspect!(token);
  } catch (error) {
    throw isS2SPError(error) ? error : new S2SPError('S2SP_ERR_AUTH_ISSUER_UNAVAILABLE', { cause: error });
  }
  if (answer?.active !== true) throw invalid('inactive');
  const now = Date.now() / 1000;
  const skew = options.clockToleranceSeconds;
  if (typeof answer.exp === 'number' && answer.exp + skew <= now) throw invalid('expired');
  if (typeof answer.nbf === 'number' && answer.nbf - skew > now) throw invalid('notYetValid');
  if (answer.iss !== undefined && answer.iss.replace(/\/+$/, '') !== options.issuer.replace(/\/+$/, '')) throw invalid('issuer');
  if (answer.aud !== undefined && ![answer.aud].flat().includes(options.audience)) {
    throw new S2SPError('S2SP_ERR_AUTH_TOKEN_INVALID', { problem: 'audience', audience: options.audience });
  }
  return { identity: identityOf(answer), expiresAt: typeof answer.exp === 'number' ? answer.exp : undefined };
}

/**
 * Who is calling, from verified claims: `sub`; the client from `client_id`
 * (RFC 9068), `azp` or `appid` (Entra v1); scopes from `scope` (RFC 9068,
 * space-separated) and `scp` (Entra; a string or an array).
 */
function identityOf(claims: Record<string, unknown>): CallerIdentity {
  const scopes = new Set<string>();
  for (const value of [claims.scope, claims.scp]) {
    const list = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : [];
    for (const scope of list) if (typeof scope === 'string' && scope !== '') scopes.add(scope);
  }
  const clientId = [claims.client_id, claims.azp, claims.appid].find((value) => typeof value === 'string') as string | undefined;
  return {
    ...(typeof claims.sub === 'string' ? { subject: claims.sub } : {}),
    ...(clientId === undefined ? {} : { clientId }),
    ...(typeof claims.iss === 'string' ? { issuer: claims.iss } : {}),
    scopes: [...scopes],
    claims: Object.freeze({ ...claims }),
  };
}

function invalid(problem: 'malformed' | 'signature' | 'algorithm' | 'issuer' | 'expired' | 'notYetValid' | 'inactive'): S2SPError {
  return new S2SPError('S2SP_ERR_AUTH_TOKEN_INVALID', { problem });
}
