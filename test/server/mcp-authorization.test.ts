/**
 * /mcp as an OAuth 2.1 resource server (README, Security > Authorization),
 * against a real authorization server (oidc-provider, client credentials,
 * JWT access tokens for a resource indicator) and tokens crafted to be wrong
 * in one way each.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { callerOf, type CallerIdentity } from '../../src/control/tool-host.js';
import type { McpSdkLine } from '../../src/server/mcp-sdk.js';
import type { IntrospectedToken } from '../../src/server/access-token-verifier.js';
import type { McpAuthOptions } from '../../src/server/mcp-authorization.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';

const ROWS = [
  { a: 1, b: 'x' },
  { a: 2, b: 'y' },
];

interface Guarded {
  url: string;
  as: AuthorizationServer;
  callers: (CallerIdentity | undefined)[];
}

/** A server whose /mcp takes tokens from a fresh authorization server; its tool records who called. */
async function startGuarded(
  t: TestContext,
  options: { sdk?: McpSdkLine; introspect?: (token: string) => Promise<IntrospectedToken | undefined> } = {},
): Promise<Guarded> {
  const as = await startAuthorizationServer(t);
  const callers: (CallerIdentity | undefined)[] = [];
  const server = new S2SPServer({
    name: 'guarded',
    ...(options.sdk === undefined ? {} : { sdk: options.sdk }),
    mcp: { auth: { issuer: as.issuer, scopes: ['mcp:tools'], ...(options.introspect === undefined ? {} : { introspect: options.introspect }) } },
  });
  server.resourceTool('rows', { description: 'rows' }, (_args, extra) => {
    callers.push(callerOf(extra));
    return ROWS;
  });
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  // The audience defaults to the public /mcp URL: tokens are asked for that resource.
  as.resource = `${url}/mcp`;
  return { url, as, callers };
}

/** POSTs one JSON-RPC request to /mcp with `token` (none when undefined). */
async function postMcp(url: string, token: string | undefined, method = 'tools/call'): Promise<Response> {
  const params = method === 'tools/call' ? { name: 'rows', arguments: {} } : {};
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
}

async function codeOf(response: Response): Promise<unknown> {
  return ((await response.json()) as { error?: { data?: { code?: unknown } } }).error?.data?.code;
}

async function connect(t: TestContext, url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'agent', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  t.after(() => client.close());
  return client;
}

for (const sdk of ['v2', 'v1'] as const) {
  test(`SDK ${sdk}: a token from the authorization server calls tools, and the caller's identity reaches the handler`, async (t) => {
    const { url, as, callers } = await startGuarded(t, { sdk });
    const client = await connect(t, url, await as.token());
    const result = await client.callTool({ name: 'rows', arguments: { abstract_domains: 'b' } });
    assert.equal(result.isError, undefined);
    assert.equal(callers.length, 1);
    const caller = callers[0]!;
    assert.equal(caller.subject, as.clientId);
    assert.equal(caller.clientId, as.clientId);
    assert.equal(caller.issuer, as.issuer);
    assert.deepEqual([...caller.scopes].sort(), ['mcp:read', 'mcp:tools']);
    assert.equal(caller.claims.aud, `${url}/mcp`);
    // The data plane is not behind the guard: the resource_url is its own capability.
    const { resource_url } = result.structuredContent as { resource_url: string };
    assert.equal((await fetch(resource_url, { method: 'POST' })).status, 200);
  });
}

test('no token: 401 with a WWW-Authenticate challenge naming the RFC 9728 metadata, which is served in both forms', async (t) => {
  const { url, as } = await startGuarded(t);
  const response = await postMcp(url, undefined);
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('www-authenticate'), `Bearer resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`);
  assert.equal(await codeOf(response), 'S2SP_ERR_AUTH_TOKEN_MISSING');
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const metadata = await fetch(`${url}${path}`);
    assert.equal(metadata.status, 200, path);
    assert.deepEqual(await metadata.json(), {
      resource: `${url}/mcp`,
      authorization_servers: [as.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp:tools'],
    });
  }
  // GET /mcp stays what it was: not a route a token opens.
  assert.equal((await fetch(`${url}/mcp`)).status, 405);
});

test('bad tokens get 401 invalid_token: wrong audience, expired, other key, alg none, other issuer, not yet valid, malformed', async (t) => {
  const { url, as, callers } = await startGuarded(t);
  const now = Math.floor(Date.now() / 1000);
  const other = await generateKeyPair('ES256');
  const bad: Record<string, string> = {
    'wrong audience (a real token for another resource)': await as.token('mcp:tools', 'https://other.example/mcp'),
    'wrong audience (crafted)': await as.craft({ aud: 'https://other.example/mcp' }),
    expired: await as.craft({ exp: now - 3600 }),
    'signed by another key under the same kid': await as.craft({}, { key: other.privateKey }),
    'signed by another key under an unknown kid': await as.craft({}, { key: other.privateKey, kid: 'unknown' }),
    'alg none': new UnsecuredJWT({ scope: 'mcp:tools', sub: 'x', aud: as.resource, iss: as.issuer }).setExpirationTime('5m').encode(),
    'other issuer': await as.craft({ iss: 'http://127.0.0.1:9/other' }),
    'not yet valid': await as.craft({ nbf: now + 3600 }),
    malformed: 'not-a-jwt',
  };
  for (const [what, token] of Object.entries(bad)) {
    const response = await postMcp(url, token);
    assert.equal(response.status, 401, what);
    const challenge = response.headers.get('www-authenticate') ?? '';
    assert.match(
      challenge,
      /^Bearer error="invalid_token", error_description="[^"\\]*", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"$/,
      what,
    );
    assert.equal(await codeOf(response), 'S2SP_ERR_AUTH_TOKEN_INVALID', what);
  }
  assert.equal(callers.length, 0);
  // And a crafted token right in every way passes: the checks above failed for their one reason.
  assert.equal((await postMcp(url, await as.craft({}), 'tools/list')).status, 200);
});

test('a token without the required scope gets 403 insufficient_scope for tools/call, and may still list tools', async (t) => {
  const { url, as, callers } = await startGuarded(t);
  const token = await as.token('mcp:read');
  const response = await postMcp(url, token);
  assert.equal(response.status, 403);
  assert.equal(
    response.headers.get('www-authenticate')?.replace(/error_description="[^"]*", /, ''),
    `Bearer error="insufficient_scope", scope="mcp:tools", resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`,
  );
  assert.equal(await codeOf(response), 'S2SP_ERR_AUTH_SCOPE_INSUFFICIENT');
  assert.equal(callers.length, 0);
  assert.equal((await postMcp(url, token, 'tools/list')).status, 200);
});

test('opaque tokens go to the introspection hook; an inactive one gets 401', async (t) => {
  const seen: string[] = [];
  const { url, callers } = await startGuarded(t, {
    introspect: async (token) => {
      seen.push(token);
      return token === 'opaque-good' ? { active: true, sub: 'alice', scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 60 } : { active: false };
    },
  });
  const client = await connect(t, url, 'opaque-good');
  await client.callTool({ name: 'rows', arguments: {} });
  assert.equal(callers.at(-1)?.subject, 'alice');
  assert.deepEqual(callers.at(-1)?.scopes, ['mcp:tools']);
  const refused = await postMcp(url, 'opaque-revoked');
  assert.equal(refused.status, 401);
  assert.equal(await codeOf(refused), 'S2SP_ERR_AUTH_TOKEN_INVALID');
  assert.ok(seen.includes('opaque-revoked'));
});

test('an authorization server that cannot be reached gets 503, not 401: the token may be good', async (t) => {
  const server = new S2SPServer({ name: 'guarded', mcp: { auth: { issuer: 'http://127.0.0.1:9' } } });
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  const { privateKey } = await generateKeyPair('ES256');
  const token = await new SignJWT({ scope: 'mcp:tools' }).setProtectedHeader({ alg: 'ES256' }).setExpirationTime('5m').sign(privateKey);
  const response = await postMcp(url, token);
  assert.equal(response.status, 503);
  assert.equal(await codeOf(response), 'S2SP_ERR_AUTH_ISSUER_UNAVAILABLE');
});

test('auth options are checked when the server is built', () => {
  const bad: Partial<McpAuthOptions>[] = [
    {},
    { issuer: 'ftp://x' },
    { issuer: 'http://as.example', scopes: ['a b'] },
    { issuer: 'http://as.example', audience: 'not a uri' },
  ];
  for (const auth of bad) {
    assert.throws(() => new S2SPServer({ name: 'x', mcp: { auth: auth as McpAuthOptions } }), { code: 'S2SP_ERR_OPTION_INVALID' }, JSON.stringify(auth));
  }
});
