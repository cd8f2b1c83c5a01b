/**
 * The MCP endpoint as an OAuth 2.1 resource server (the MCP authorization
 * spec): RFC 9728 protected-resource metadata, the bearer-token check on
 * every request to the endpoint (401 with a `WWW-Authenticate` challenge
 * naming the metadata), and the scopes `tools/call` needs (403
 * `insufficient_scope`). Only the MCP route is guarded: the data plane's
 * resource_urls are capabilities of their own (single-use tokens), and the
 * metadata must be readable before a client holds any token.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, preHandlerHookHandler } from 'fastify';
import { S2SPError, isS2SPError } from '../errors.js';
import { functionOption, httpUrlOption, integerOption, nonEmptyStringOption, optionsObject, stringListOption, invalidOption } from '../option-checks.js';
import type { ToolAuthInfo } from '../control/tool-host.js';
import { createAccessTokenVerifier, type TokenIntrospector } from './access-token-verifier.js';
import { jsonRpcErrorOf } from './json-rpc-error.js';

/** Authorization of the MCP endpoint ({@link S2SPServerOptions.mcp}`.auth`, `--auth-issuer`). */
export interface McpAuthOptions {
  /** The authorization server's issuer URL; its metadata comes from RFC 8414 or OpenID discovery. */
  issuer: string;
  /** The RFC 8707 resource tokens must name in `aud` (default: the public URL of the MCP endpoint). */
  audience?: string;
  /** Scopes a token needs for `tools/call` (default: none; any valid token may call). */
  scopes?: readonly string[];
  /** Checks opaque (non-JWT) tokens, e.g. at the issuer's RFC 7662 introspection endpoint; without it only JWTs pass. */
  introspect?: TokenIntrospector;
  /** Clock skew allowed on `exp` and `nbf`, in seconds (default 30). */
  clockToleranceSeconds?: number;
}

/** Default clock skew allowed on a token's times. */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

/** The well-known path of RFC 9728 metadata (section 3). */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** What the MCP plugin hangs on its route. */
export interface McpAuthorization {
  /** Route hook: refuses a request without a valid token (401). */
  authenticate: onRequestHookHandler;
  /** Route hook: refuses a `tools/call` whose token lacks a required scope (403). */
  authorize: preHandlerHookHandler;
  /** The verified token of a request that passed, as the SDKs take it. */
  authInfoOf(request: FastifyRequest): ToolAuthInfo | undefined;
}

/**
 * Checks `value` as {@link McpAuthOptions}.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function checkMcpAuthOptions(value: McpAuthOptions, name: string): void {
  const options = optionsObject(value, name);
  if (options.issuer === undefined) throw invalidOption(`${name}.issuer`, 'the URL of an authorization server', options.issuer);
  httpUrlOption(options.issuer, `${name}.issuer`);
  if (options.audience !== undefined) {
    nonEmptyStringOption(options.audience, `${name}.audience`);
    if (!URL.canParse(options.audience)) throw invalidOption(`${name}.audience`, 'an absolute URI', options.audience);
  }
  for (const scope of stringListOption(options.scopes, `${name}.scopes`) ?? []) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) throw invalidOption(`${name}.scopes`, 'OAuth scope tokens (RFC 6749 3.3)', scope);
  }
  if (options.introspect !== undefined) functionOption(options.introspect, `${name}.introspect`);
  integerOption(options.clockToleranceSeconds, `${name}.clockToleranceSeconds`, 0, 600);
}

/**
 * Serves the endpoint's RFC 9728 metadata on `app`, at the well-known path
 * and its path-suffixed form for `mcpPath`, and returns the hooks that
 * guard the MCP route.
 * @param endpointUrl the public URL of the MCP endpoint (known once the app listens)
 */
export function mountMcpAuthorization(app: FastifyInstance, options: McpAuthOptions, mcpPath: string, endpointUrl: () => string): McpAuthorization {
  const scopes = [...(options.scopes ?? [])];
  let verifier: ReturnType<typeof createAccessTokenVerifier> | undefined;
  const verify = (token: string) =>
    (verifier ??= createAccessTokenVerifier({
      issuer: options.issuer,
      audience: options.audience ?? endpointUrl(),
      introspect: options.introspect,
      clockToleranceSeconds: options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
    }))(token);
  const metadataUrl = () => {
    const endpoint = new URL(endpointUrl());
    return `${endpoint.origin}${PROTECTED_RESOURCE_PATH}${endpoint.pathname === '/' ? '' : endpoint.pathname}`;
  };
  const metadata = async () => ({
    resource: endpointUrl(),
    authorization_servers: [options.issuer],
    bearer_methods_supported: ['header'],
    ...(scopes.length === 0 ? {} : { scopes_supported: scopes }),
  });
  app.get(PROTECTED_RESOURCE_PATH, metadata);
  if (mcpPath !== '/') app.get(`${PROTECTED_RESOURCE_PATH}${mcpPath}`, metadata);

  const verified = new WeakMap<FastifyRequest, ToolAuthInfo>();
  const refuse = (reply: FastifyReply, error: S2SPError, challenge: string) =>
    reply
      .code(error.status)
      .header('www-authenticate', `Bearer ${challenge}${challenge === '' ? '' : ', '}resource_metadata="${metadataUrl()}"`)
      .type('application/json; charset=utf-8')
      .send(jsonRpcErrorOf(error));

  const authenticate: onRequestHookHandler = async (request, reply) => {
    const token = bearerTokenOf(request.headers.authorization);
    // RFC 6750 3.1: a request without credentials gets the challenge without an error code.
    if (token === undefined) return refuse(reply, new S2SPError('S2SP_ERR_AUTH_TOKEN_MISSING'), '');
    try {
      const { identity, expiresAt } = await verify(token);
      verified.set(request, {
        token,
        clientId: identity.clientId ?? '',
        scopes: [...identity.scopes],
        ...(expiresAt === undefined ? {} : { expiresAt }),
        extra: { caller: identity },
      });
    } catch (error) {
      if (!isS2SPError(error, 'S2SP_ERR_AUTH_TOKEN_INVALID')) {
        const failure = isS2SPError(error) ? (error as S2SPError) : new S2SPError('S2SP_ERR_AUTH_ISSUER_UNAVAILABLE', { cause: error });
        request.log.warn({ code: failure.code }, 'could not check an access token');
        return reply.code(failure.status).type('application/json; charset=utf-8').send(jsonRpcErrorOf(failure));
      }
      const failure = error as S2SPError;
      return refuse(reply, failure, `error="invalid_token", error_description="${challengeText(failure.message)}"`);
    }
  };

  const authorize: preHandlerHookHandler = async (request, reply) => {
    if (scopes.length === 0 || !callsTools(request.body)) return;
    const granted = new Set(verified.get(request)?.scopes);
    if (scopes.every((scope) => granted.has(scope))) return;
    const failure = new S2SPError('S2SP_ERR_AUTH_SCOPE_INSUFFICIENT', { scopes });
    return refuse(reply, failure, `error="insufficient_scope", scope="${scopes.join(' ')}", error_description="${challengeText(failure.message)}"`);
  };

  return { authenticate, authorize, authInfoOf: (request) => verified.get(request) };
}

/** The token of `Authorization: Bearer <token>` (RFC 6750 2.1), or undefined. */
function bearerTokenOf(header: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header ?? '');
  return match?.[1];
}

/** True when a JSON-RPC message (or a batch) is a `tools/call`. */
function callsTools(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'tools/call');
}

/** Text an RFC 6750 quoted-string may hold: printable ASCII without `"` and `\`. */
function challengeText(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "'");
}
