/**
 * The CLI's span export (README, Observability), end to end: `s2sp serve`
 * with OAuth on /mcp and OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector
 * stand-in on 127.0.0.1 exports OTLP/HTTP in JSON and in protobuf, the spans
 * continue the agent's traceparent, and no body it sends holds the access
 * token or the data-plane token.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startCliServer } from '../support/cli-process.js';
import { startAuthorizationServer } from '../support/authorization-server.js';
import { runCli } from '../support/cli-process.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE_ID}-b7ad6b7169203331-01`;

/** An OTLP/HTTP collector stand-in: keeps every export's raw body; `until` waits for one that matches. */
async function startCollector(t: TestContext) {
  const bodies: { contentType: string; body: Buffer }[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse: `{}` in JSON, zero bytes in protobuf.
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    until(ready: () => boolean, timeoutMs = 20_000): Promise<void> {
      if (ready()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the collector got ${bodies.length} exports, none as expected`)), timeoutMs);
        const check = () => {
          if (!ready()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
  };
}

function tableFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-otlp-'));
  const path = join(dir, 'rows.json');
  writeFileSync(path, JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ id: i, name: `n${i}` }))));
  return path;
}

for (const [protocol, contentType] of [
  ['http/json', 'application/json'],
  ['http/protobuf', 'application/x-protobuf'],
] as const) {
  test(`serve exports its spans over OTLP/HTTP ${protocol.slice(5)} to OTEL_EXPORTER_OTLP_ENDPOINT, tokens left out`, async (t) => {
    const collector = await startCollector(t);
    const as = await startAuthorizationServer(t);
    const env = {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: 'otlp-test-serve',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    };
    const args = ['serve', tableFile(), '--transport', 'http', '--port', '0', '--auth-issuer', as.issuer, '--auth-scope', 'mcp:tools'];
    const { url: mcpUrl } = await startCliServer(t, args, { env });
    as.resource = mcpUrl;
    const accessToken = await as.token();
    const client = new Client({ name: 'agent', version: '0' });
    const headers = { authorization: `Bearer ${accessToken}`, traceparent: TRACEPARENT };
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers } }));
    t.after(() => client.close());
    const result = await client.callTool({ name: 'read_table', arguments: { abstract_domains: 'name' } });
    const { resource_url } = result.structuredContent as { resource_url: string };
    const dataToken = new URL(resource_url).pathname.split('/').pop()!;
    const fetched = await fetch(resource_url, {
      method: 'POST',
      headers: { traceparent: TRACEPARENT, 'content-type': 'application/json' },
      body: '{"row_ids":[1,2]}',
    });
    assert.equal(fetched.status, 200);
    await fetched.arrayBuffer();

    const all = () => Buffer.concat(collector.bodies.map((b) => b.body));
    await collector.until(() => ['tools/call read_table', 's2sp.put', 's2sp.data_plane.fetch'].every((name) => all().includes(name)));
    for (const { contentType: received } of collector.bodies) assert.ok(received.startsWith(contentType), received);
    const exported = all();
    if (protocol === 'http/json') {
      const spans = collector.bodies.flatMap(({ body }) =>
        (
          JSON.parse(body.toString('utf8')) as { resourceSpans: { resource: unknown; scopeSpans: { spans: { name: string; traceId: string }[] }[] }[] }
        ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
      );
      for (const name of ['tools/call read_table', 's2sp.put', 's2sp.data_plane.fetch']) {
        assert.equal(spans.find((s) => s.name === name)?.traceId, TRACE_ID, name);
      }
    } else {
      // Protobuf holds the trace id as its 16 raw bytes.
      assert.ok(exported.includes(Buffer.from(TRACE_ID, 'hex')));
    }
    assert.ok(exported.includes('otlp-test-serve'), 'OTEL_SERVICE_NAME named the service');
    for (const [what, secret] of [
      ['access token', accessToken],
      ['access token signature', accessToken.split('.')[2]!],
      ['data-plane token', dataToken],
    ] as const) {
      assert.ok(!exported.includes(secret), `no ${what} in the exported spans`);
    }
  });
}

test('an OTLP protocol the CLI does not speak is refused at start, naming the variable', async () => {
  const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
  const { code, stderr } = await runCli(['consumer', '--transport', 'http', '--port', '0'], { env, timeoutMs: 30_000 });
  assert.equal(code, 1, stderr);
  assert.match(stderr, /S2SP_ERR_OPTION_INVALID/);
  assert.match(stderr, /OTEL_EXPORTER_OTLP_PROTOCOL/);
});

test('--auth-issuer needs --transport http, and --auth-scope needs --auth-issuer', async () => {
  for (const args of [
    ['serve', '--auth-issuer', 'http://127.0.0.1:9'],
    ['consumer', '--transport', 'http', '--auth-scope', 'mcp:tools'],
  ]) {
    const { code, stderr } = await runCli(args, { timeoutMs: 30_000 });
    assert.equal(code, 2, stderr);
    assert.match(stderr, /--auth-/);
  }
});
