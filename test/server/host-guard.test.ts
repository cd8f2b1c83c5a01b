/**
 * DNS-rebinding protection on /mcp (SPEC 4): Host and Origin are checked
 * before the SDK sees a request; loopback only by default, more when the
 * operator allows it; a refusal is a 403 with a JSON-RPC error.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { S2SPServer, type S2SPServerOptions } from '../../src/server/s2sp-server.js';
import { createHostGuard } from '../../src/server/host-guard.js';
import { createConsumerServer } from '../../src/cli/consumer-command.js';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } },
});
const READ_TABLE = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'rows', arguments: { abstract_domains: 'a' } },
});

interface Answer {
  status: number;
  body: string;
}

/** POSTs a JSON-RPC message to /mcp on 127.0.0.1 with the given Host and Origin headers. */
function postMcp(port: number, body: string, headers: Record<string, string>, method = 'POST'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method,
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.on('error', reject);
    request.end(method === 'POST' ? body : undefined);
  });
}

async function startServer(t: TestContext, options: Partial<S2SPServerOptions> = {}): Promise<number> {
  const server = new S2SPServer({ name: 't', ...options });
  server.resourceTool('rows', { description: 'r' }, () => [{ a: 1 }]);
  await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  return (server.http!.server.address() as AddressInfo).port;
}

function assertRefused(answer: Answer, label: string): string {
  assert.equal(answer.status, 403, `${label}: ${answer.body.slice(0, 200)}`);
  const doc = JSON.parse(answer.body) as { jsonrpc: string; id: unknown; error: { code: number; message: string; data: { code: string } } };
  assert.equal(doc.jsonrpc, '2.0', label);
  assert.equal(doc.id, null, label);
  assert.equal(typeof doc.error.code, 'number', label);
  assert.equal(doc.error.data.code, 'S2SP_ERR_MCP_HOST_REFUSED', label);
  assert.ok(!doc.error.message.includes('resource_url'), label);
  return doc.error.message;
}

test('bound to loopback, /mcp refuses a foreign Host or Origin with 403 and a JSON-RPC error', async (t) => {
  const port = await startServer(t);
  const refused: Array<[string, Record<string, string>]> = [
    ['Host evil.example', { host: 'evil.example' }],
    ['Host evil.example with our port', { host: `evil.example:${port}` }],
    ['Host with a user name', { host: `evil.example@127.0.0.1:${port}` }],
    ['Host a LAN address', { host: `192.168.1.20:${port}` }],
    ['Origin of another site', { host: `127.0.0.1:${port}`, origin: 'http://evil.example' }],
    ['Origin null', { host: `127.0.0.1:${port}`, origin: 'null' }],
    ['Origin not a URL', { host: `127.0.0.1:${port}`, origin: 'not a url' }],
  ];
  for (const [label, headers] of refused) {
    assertRefused(await postMcp(port, INITIALIZE, headers), `initialize, ${label}`);
    const call = await postMcp(port, READ_TABLE, headers);
    assertRefused(call, `tools/call, ${label}`);
    assert.ok(!call.body.includes('/s2sp/data/'), `${label}: no resource_url handed out`);
  }
  assertRefused(await postMcp(port, '', { host: 'evil.example' }, 'GET'), 'GET');

  const accepted: Array<[string, Record<string, string>]> = [
    ['Host 127.0.0.1', { host: `127.0.0.1:${port}` }],
    ['Host localhost', { host: `localhost:${port}` }],
    ['Host [::1]', { host: `[::1]:${port}` }],
    ['a loopback Origin on another port', { host: `localhost:${port}`, origin: 'http://localhost:5173' }],
  ];
  for (const [label, headers] of accepted) {
    const answer = await postMcp(port, INITIALIZE, headers);
    assert.equal(answer.status, 200, `${label}: ${answer.body.slice(0, 200)}`);
    assert.equal(JSON.parse(answer.body).result.serverInfo.name, 't', label);
  }
});

test('a 10,000-character Host is refused with a bounded message', async (t) => {
  const port = await startServer(t);
  const message = assertRefused(await postMcp(port, INITIALIZE, { host: `${'h'.repeat(10_000)}.example` }), 'long host');
  assert.ok(message.length < 500, `${message.length} characters`);
});

test('mcpAllowedHosts and mcpAllowedOrigins extend the lists, port-agnostic', async (t) => {
  const port = await startServer(t, { mcp: { allowedHosts: ['mcp.example.test'], allowedOrigins: ['https://app.example.test'] } });
  const ok = await postMcp(port, INITIALIZE, { host: 'mcp.example.test:8443', origin: 'https://app.example.test' });
  assert.equal(ok.status, 200, ok.body.slice(0, 200));
  assertRefused(await postMcp(port, INITIALIZE, { host: 'other.example.test' }), 'another host');
  assertRefused(await postMcp(port, INITIALIZE, { host: 'mcp.example.test', origin: 'http://app.example.test' }), 'the origin over http');
});

test('publicUrl adds its host and origin', async (t) => {
  const port = await startServer(t, { http: { publicUrl: 'https://data.example.test/prefix' } });
  const ok = await postMcp(port, INITIALIZE, { host: 'data.example.test', origin: 'https://data.example.test' });
  assert.equal(ok.status, 200, ok.body.slice(0, 200));
});

test('the consumer server (s2sp consumer) guards /mcp the same way, and takes the CLI lists', async (t) => {
  const server = await createConsumerServer({ transport: 'http', host: '127.0.0.1', port: 0, allowOrigins: [], mcpAllowedHosts: ['agent.example.test'] });
  await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  const port = (server.http!.server.address() as AddressInfo).port;
  assertRefused(await postMcp(port, INITIALIZE, { host: 'evil.example' }), 'consumer, foreign host');
  assert.equal((await postMcp(port, INITIALIZE, { host: 'agent.example.test' })).status, 200);
});

test('createHostGuard: bad entries are S2SP_ERR_OPTION_INVALID; no Origin is judged by Host alone', () => {
  for (const allowedHosts of [['http://x.example'], ['a b'], ['']]) {
    assert.throws(() => createHostGuard({ allowedHosts }), { code: 'S2SP_ERR_OPTION_INVALID' }, JSON.stringify(allowedHosts));
  }
  for (const allowedOrigins of [['x.example'], ['ftp://x.example']]) {
    assert.throws(() => createHostGuard({ allowedOrigins }), { code: 'S2SP_ERR_OPTION_INVALID' }, JSON.stringify(allowedOrigins));
  }
  assert.throws(() => new S2SPServer({ name: 't', mcp: { allowedHosts: ['not a host'] } }), { code: 'S2SP_ERR_OPTION_INVALID' });
  const guard = createHostGuard({ allowedHosts: ['[fd00::1]'] });
  assert.equal(guard({ host: '[fd00::1]:3000' }), undefined);
  assert.equal(guard({ host: '127.0.0.5' }), undefined);
  assert.equal(guard({})?.code, 'S2SP_ERR_MCP_HOST_REFUSED', 'no Host at all');
  assert.equal(guard({ host: 'localhost', origin: 'https://127.0.0.1:9' }), undefined);
});
