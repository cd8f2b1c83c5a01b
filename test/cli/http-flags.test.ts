/**
 * The CLI's HTTP guards, end to end: the /mcp flags reach the server, and a
 * wildcard bind without --public-url refuses to start with a message that
 * says what to pass.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { isWildcardHost } from '../../src/server/s2sp-server.js';
import { runCli, startCliServer } from '../support/cli-process.js';

for (const host of ['0.0.0.0', '::']) {
  test(`serve --host ${host} without --public-url refuses to start and says to pass --public-url`, async () => {
    const { code, stderr } = await runCli(['serve', '--transport', 'http', '--host', host, '--port', '0'], { timeoutMs: 30_000 });
    assert.equal(code, 1, stderr);
    assert.match(stderr, /S2SP_ERR_PUBLIC_URL_REQUIRED/);
    assert.match(stderr, /--public-url/);
    assert.doesNotMatch(stderr, /MCP at/, 'it never listened');
  });
}

test('isWildcardHost: every spelling of the wildcard, nothing else', () => {
  for (const host of ['0.0.0.0', '::', '0:0:0:0:0:0:0:0', '::0']) assert.equal(isWildcardHost(host), true, host);
  for (const host of ['127.0.0.1', '::1', 'localhost', '192.168.1.2', 'example.com']) assert.equal(isWildcardHost(host), false, host);
});

test('consumer --mcp-allowed-host and --mcp-body-limit reach the server', async (t) => {
  const { url: mcpUrl } = await startCliServer(t, [
    'consumer',
    '--transport',
    'http',
    '--port',
    '0',
    '--mcp-allowed-host',
    'agent.example.test',
    '--mcp-body-limit',
    '2000',
  ]);
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } },
  });
  const post = (host: string, body: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(mcpUrl);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent: false,
          headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  assert.equal((await post('agent.example.test', initialize)).status, 200);
  const refused = await post('evil.example', initialize);
  assert.equal(refused.status, 403);
  assert.equal(JSON.parse(refused.body).error.data.code, 'S2SP_ERR_MCP_HOST_REFUSED');
  const tooLarge = await post('agent.example.test', JSON.stringify({ ...JSON.parse(initialize), pad: 'x'.repeat(3000) }));
  assert.equal(tooLarge.status, 413);
  assert.equal(JSON.parse(tooLarge.body).error.data.code, 'S2SP_ERR_MCP_BODY_TOO_LARGE');
});

test('invalid HTTP flag values are usage errors', async () => {
  for (const args of [
    ['--request-timeout-ms', '-5'],
    ['--mcp-body-limit', '0'],
    ['--idle-timeout-ms', 'soon'],
  ]) {
    const { code, stderr } = await runCli(['consumer', '--transport', 'http', '--port', '0', ...args], { timeoutMs: 30_000 });
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
    assert.match(stderr, new RegExp(args[0]));
  }
});
