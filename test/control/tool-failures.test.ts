/**
 * Tool failures stay clean: a resource tool call that fails leaves no cache
 * entry behind, and an unexpected error of a handler becomes
 * S2SP_ERR_TOOL_FAILED naming no internals, while the full error, tokens
 * redacted, goes to the server's log. A shared store that stops answering
 * is a tool error S2SP_ERR_STORE_UNAVAILABLE within its deadline, never a
 * call left hanging.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { registerResourceTool } from '../../src/control/resource-tool.js';
import { S2SPServer, type ServerEvent } from '../../src/server/s2sp-server.js';
import { mintToken } from '../../src/protocol/token.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { redisSkipReason } from '../support/redis-server.js';
import { stallingRedis } from '../support/redis-outage.js';
import { eventually } from '../support/store-contract.js';

const SECRET = 'connect ECONNREFUSED redis://admin:hunter2@10.0.0.7:6379';

function failure(result: unknown): { code: unknown; text: string } {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r).slice(0, 300));
  return { code: r._meta?.['s2sp/error-code'], text: (r.content[0] as { text: string }).text };
}

test('with the data plane down, an async resource tool call fails and leaves nothing cached', async (t) => {
  const server = new S2SPServer({ name: 't' }); // never listens: no resource_url can be issued
  server.resourceTool('rows', { description: 'r' }, () => [{ a: 1 }, { a: 2 }]);
  const client = await connectInMemory(server, t);
  const { code } = failure(await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } }));
  assert.equal(code, 'S2SP_ERR_DATA_PLANE_DOWN');
  const stats = await server.store.stats();
  assert.equal(stats.entries, 0, 'the body was revoked');
  assert.equal(stats.bytes, 0);
});

test('a failure after the body was cached (the envelope) revokes the token', async (t) => {
  const store = new MemoryStore();
  t.after(() => store.close());
  const mcp = new McpServer({ name: 't', version: '0' });
  let issued: string | undefined;
  registerResourceTool(mcp, 'rows', { description: 'r' }, () => [{ a: 1 }], {
    store,
    resourceUrlFor: (token) => {
      issued = token;
      throw new Error(`no route to the plane for ${token}`);
    },
    observe: () => {},
  });
  const client = await connectInMemory(mcp, t);
  const { code, text } = failure(await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } }));
  assert.equal(code, 'S2SP_ERR_TOOL_FAILED');
  assert.ok(issued !== undefined && !text.includes(issued), 'the token is not in the tool error');
  assert.equal(await store.has(issued!), false);
  assert.equal((await store.stats()).entries, 0);
});

test('an unexpected handler error is S2SP_ERR_TOOL_FAILED for the LLM and logged in full, tokens redacted', async (t) => {
  const lines: string[] = [];
  const token = mintToken();
  const server = new S2SPServer({ name: 't', http: { logger: { level: 'error', stream: { write: (line: string) => lines.push(line) } } } });
  server.resourceTool('rows', { description: 'r' }, () => {
    throw new Error(`${SECRET} while caching http://127.0.0.1:1/s2sp/data/${token}`);
  });
  server.consumerTool('use', { description: 'u' }, () => {
    throw new TypeError(`${SECRET} (consumer)`);
  });
  await server.listen();
  const client = await connectInMemory(server, t);
  for (const [name, args] of [
    ['rows', { abstract_domains: 'a' }],
    ['rows', {}],
    ['use', { abstract_data: '[{"_row_id":0}]' }],
  ] as const) {
    const { code, text } = failure(await client.callTool({ name, arguments: args }));
    assert.equal(code, 'S2SP_ERR_TOOL_FAILED', name);
    for (const internal of ['hunter2', '10.0.0.7', 'redis', 'ECONNREFUSED', token]) {
      assert.ok(!text.includes(internal), `${name}: the tool error names ${internal}`);
    }
  }
  const logged = lines.join('\n');
  assert.equal(lines.length, 3, logged);
  assert.match(logged, /hunter2/, 'the operator sees the cause');
  assert.match(logged, /"tool":"use"/);
  assert.ok(!logged.includes(token), 'no token in the log');
});

test("server.observe hears tool failures and its store's events; a throwing listener still yields a tool error", async (t) => {
  const seen: ServerEvent[] = [];
  const server = new S2SPServer({ name: 't', http: { publicUrl: 'http://127.0.0.1:9' } });
  server.observe((event) => seen.push(event));
  server.resourceTool('rows', { description: 'r' }, () => {
    throw new Error(SECRET);
  });
  server.resourceTool('fine', { description: 'f' }, () => [{ a: 1 }]);
  const client = await connectInMemory(server, t);
  assert.equal(failure(await client.callTool({ name: 'rows', arguments: {} })).code, 'S2SP_ERR_TOOL_FAILED');
  await client.callTool({ name: 'fine', arguments: { abstract_domains: 'a' } });
  assert.deepEqual(
    seen.map((event) => event.type),
    ['tool-failed', 'minted'],
  );
  const [failed] = seen;
  assert.ok(failed.type === 'tool-failed');
  assert.equal((failed.error as Error).message, SECRET);
  assert.equal(failed.tool, 'rows');

  const broken = new S2SPServer({ name: 't' });
  broken.observe(() => {
    throw new Error('listener down');
  });
  broken.resourceTool('rows', { description: 'r' }, () => {
    throw new Error(SECRET);
  });
  const other = await connectInMemory(broken, t);
  assert.equal(failure(await other.callTool({ name: 'rows', arguments: {} })).code, 'S2SP_ERR_TOOL_FAILED');
});

test(
  'a shared store that stops answering (SIGSTOP): the resource tool answers S2SP_ERR_STORE_UNAVAILABLE within the deadline, and works after SIGCONT',
  { skip: redisSkipReason() },
  async (t) => {
    const { redis, store, deadlineMs } = await stallingRedis(t);
    const server = new S2SPServer({ name: 't', store });
    server.resourceTool('rows', { description: 'r' }, () => [{ a: 1 }, { a: 2 }]);
    await server.listen();
    const client = await connectInMemory(server, t);
    const call = () => client.callTool({ name: 'rows', arguments: { abstract_domains: 'a' } });
    redis.pause();
    t.after(() => redis.resume());
    for (let round = 1; round <= 2; round++) {
      const at = Date.now();
      const { code } = failure(await call());
      assert.equal(code, 'S2SP_ERR_STORE_UNAVAILABLE', `round ${round}`);
      assert.ok(Date.now() - at < 3 * deadlineMs, `round ${round}: answered after ${Date.now() - at} ms`);
    }
    redis.resume();
    await eventually(async () => (await call()).isError !== true, 10_000, 'the tool works again after SIGCONT');
  },
);
