/**
 * SPEC 3.5: requests that node's HTTP parser or fastify's router reject are
 * answered with the S2SP error document, on the data plane and on /mcp
 * alike, and the token of a refused request still serves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { exchangeRaw } from '../support/raw-socket.js';

const HEAD = (path: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`;

/** Requests the parser refuses, each a whole raw request for `path`. */
const MALFORMED: Array<{ name: string; status: number; code: string; request: (path: string) => string }> = [
  {
    name: 'bad chunk size',
    status: 400,
    code: 'S2SP_ERR_REQUEST_MALFORMED',
    request: (path) => `${HEAD(path)}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  },
  {
    name: 'Content-Length with Transfer-Encoding',
    status: 400,
    code: 'S2SP_ERR_REQUEST_MALFORMED',
    request: (path) => `${HEAD(path)}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
  },
  {
    name: 'two Content-Lengths',
    status: 400,
    code: 'S2SP_ERR_REQUEST_MALFORMED',
    request: (path) => `${HEAD(path)}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
  },
  {
    name: 'NUL in a header',
    status: 400,
    code: 'S2SP_ERR_REQUEST_MALFORMED',
    request: (path) => `${HEAD(path)}X-Note: a\0b\r\nContent-Length: 2\r\n\r\n{}`,
  },
  {
    name: 'headers over the limit',
    status: 431,
    code: 'S2SP_ERR_REQUEST_HEADERS_TOO_LARGE',
    request: (path) => `${HEAD(path)}X-Pad: ${'p'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`,
  },
  {
    name: 'a URL that does not decode',
    status: 400,
    code: 'S2SP_ERR_REQUEST_MALFORMED',
    // A well-formed request otherwise: the connection would stay open without Connection: close.
    request: (path) => `${HEAD(`${path}%E0%A4%A`)}Connection: close\r\nContent-Length: 2\r\n\r\n{}`,
  },
];

test(`requests the HTTP parser rejects get the error document (${MALFORMED.length} cases, data plane and /mcp)`, async (t) => {
  const server = new S2SPServer({ name: 't' });
  server.resourceTool('rows', { description: 'r' }, () => [{ a: 1 }, { a: 2 }]);
  const base = await server.listen({ mcpPath: '/mcp' });
  const client = await connectInMemory(server, t);
  const port = (server.http!.server.address() as AddressInfo).port;
  for (const malformed of MALFORMED) {
    const result = (await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } })) as CallToolResult;
    const resourceUrl: string = JSON.parse((result.content[0] as { text: string }).text).resource_url;
    const token = resourceUrl.slice(resourceUrl.lastIndexOf('/') + 1);
    for (const path of [`/s2sp/data/${token}`, '/mcp']) {
      const label = `${malformed.name} on ${path === '/mcp' ? '/mcp' : 'the data plane'}`;
      const answer = await exchangeRaw(port, malformed.request(path));
      assert.equal(answer.status, malformed.status, `${label}: ${answer.text.slice(0, 300)}`);
      assert.match(answer.text, /\r\ncontent-type: application\/json/i, label);
      const doc = JSON.parse(answer.body) as { error: { code: string; message: string } };
      assert.equal(doc.error.code, malformed.code, label);
      assert.equal(typeof doc.error.message, 'string', label);
      assert.ok(!answer.text.includes(token), `${label}: the answer echoes the token`);
      assert.equal(answer.closed, true, `${label}: the connection is closed after the answer`);
    }
    const fetched = await fetch(resourceUrl, { method: 'POST' });
    assert.equal(fetched.status, 200, `${malformed.name}: the token still serves`);
    await fetched.arrayBuffer();
  }
  assert.equal((await fetch(`${base}/s2sp/health`)).status, 200);
});
