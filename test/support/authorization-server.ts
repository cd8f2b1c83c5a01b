/**
 * A real OAuth 2.1 authorization server for tests: oidc-provider on
 * 127.0.0.1, issuing JWT access tokens (RFC 9068) by client credentials for
 * a resource indicator (RFC 8707), signed with an ES256 key the test holds
 * too, so it can also craft tokens that are wrong in exactly one way.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';

/** oidc-provider ships no types: the part of it these tests use. */
type ProviderClass = new (issuer: string, configuration: unknown) => { callback(): http.RequestListener };
// A specifier TypeScript does not resolve, so the untyped package needs no declaration file.
const OIDC_PROVIDER: string = 'oidc-provider';

/** A running authorization server. */
export interface AuthorizationServer {
  issuer: string;
  /** The key the server signs with, and its `kid`. */
  key: CryptoKey;
  kid: string;
  /** The client the tests use (client credentials). */
  clientId: string;
  /** The resource tokens are issued for; set it before asking for one. */
  resource: string;
  /** An access token from the token endpoint, for `scope` (space-separated) and this `resource`. */
  token(scope?: string, resource?: string): Promise<string>;
  /** A token signed with `key` (this server's unless given), claims as given over sensible defaults. */
  craft(claims: JWTPayload, options?: { key?: CryptoKey; kid?: string; alg?: string }): Promise<string>;
}

/** Scopes the server grants. */
export const GRANTED_SCOPES = 'mcp:tools mcp:read';

/** Starts the server; it closes with the test. */
export async function startAuthorizationServer(t: TestContext): Promise<AuthorizationServer> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = 'test-key-1';
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'agent';
  const clientSecret = 'agent-secret-that-is-long-enough-for-hs256-0123456789';
  const state = { resource: 'http://127.0.0.1/mcp' };
  const { default: Provider } = (await import(OIDC_PROVIDER)) as { default: ProviderClass };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        scope: GRANTED_SCOPES,
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [jwk] },
    scopes: GRANTED_SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => state.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
          scope: GRANTED_SCOPES,
          audience: resourceIndicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    key: privateKey,
    kid,
    clientId,
    get resource() {
      return state.resource;
    },
    set resource(value: string) {
      state.resource = value;
    },
    async token(scope = GRANTED_SCOPES, resource = state.resource) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (body.access_token === undefined) throw new Error(`token endpoint: ${response.status} ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    async craft(claims, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ scope: GRANTED_SCOPES, client_id: clientId, ...claims })
        .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? kid, typ: 'at+jwt' })
        .setIssuer(typeof claims.iss === 'string' ? claims.iss : issuer)
        .setAudience(claims.aud ?? state.resource)
        .setSubject(typeof claims.sub === 'string' ? claims.sub : clientId)
        .setIssuedAt(now)
        .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : now + 300)
        .sign(options.key ?? privateKey);
    },
  };
}
