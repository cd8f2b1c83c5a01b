import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';

const ROWS = [
  { mag: 2, place: 'A', depth: 5.5 },
  { mag: 4.5, place: 'B', depth: null },
];

async function setup(t: import('node:test').TestContext, ttlMs?: number) {
  const server = new S2SPServer({ name: 'test', store: { ttlMs } });
  server.resourceTool('quakes', { description: 'Quakes.' }, () => ROWS);
  await server.listen();
  // The SDK client validates structuredContent against the declared outputSchema (ajv).
  const client = await connectInMemory(server, t);
  return { server, client };
}

async function call(client: Awaited<ReturnType<typeof setup>>['client'], args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: 'quakes', arguments: args })) as CallToolResult;
}

function text(result: CallToolResult): string {
  return (result.content[0] as { text: string }).text;
}

test('the resource tool declares an object outputSchema and says how long a resource_url lives', async (t) => {
  const { client } = await setup(t);
  const [tool] = (await client.listTools()).tools;
  assert.equal(tool.outputSchema?.type, 'object');
  for (const key of ['rows', 'total_rows', 'abstract', 'resource_url', 'expires_at', 'body']) {
    assert.ok(Object.hasOwn(tool.outputSchema?.properties ?? {}, key), key);
  }
  assert.ok(tool.description?.startsWith('Quakes.'), 'the own description comes first');
  assert.match(tool.description ?? '', /10 minutes/);
});

test('the lifetime in the description follows the store TTL', async (t) => {
  const { client } = await setup(t, 90_000);
  const [tool] = (await client.listTools()).tools;
  assert.match(tool.description ?? '', /90 seconds/);
});

test('async: structuredContent is the envelope the text holds, with expires_at the store gave', async (t) => {
  const { client } = await setup(t);
  const before = Date.now();
  const result = await call(client, { abstract_domains: 'mag' });
  const after = Date.now();
  assert.deepEqual(result.structuredContent, JSON.parse(text(result)));
  const envelope = result.structuredContent as { expires_at: string; resource_url: string };
  assert.match(envelope.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const expires = Date.parse(envelope.expires_at);
  assert.ok(expires >= before + 600_000 && expires <= after + 600_000, `${envelope.expires_at} is 10 minutes after the call`);
});

test('sync (2025 era): structuredContent is the envelope without its body; the body sits in a text block for the user only', async (t) => {
  const { client } = await setup(t);
  const result = await call(client, { abstract_domains: 'mag', mode: 'sync' });
  const envelope = result.structuredContent as Record<string, unknown>;
  const { body, ...withoutBody } = JSON.parse(text(result)) as Record<string, unknown>;
  assert.equal((body as unknown[]).length, 2, 'the text block keeps the reference shape');
  assert.deepEqual((result.content[0] as { annotations?: unknown }).annotations, { audience: ['user'] });
  assert.deepEqual(envelope, withoutBody, 'hosts may show structuredContent to the model: no body there');
  assert.equal(envelope.expires_at, undefined);
  assert.equal(envelope.resource_url, undefined);
});

test('plain mode: the text stays the bare JSON array, structuredContent is {rows}', async (t) => {
  const { client } = await setup(t);
  const result = await call(client, {});
  assert.equal(text(result), JSON.stringify(ROWS));
  assert.deepEqual(result.structuredContent, { rows: ROWS });
});

test('a tool error carries no structuredContent and passes the client check', async (t) => {
  const { client } = await setup(t);
  const result = await call(client, { abstract_domains: 'nope' });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
});

test('columns named __proto__, constructor, toString and "a,b" pass both result forms in every mode', async (t) => {
  // JSON.parse makes __proto__ an own key, as a tool reading JSON would; zod's record refused a row with an own `constructor`.
  const row = JSON.parse('{"__proto__":1,"constructor":2,"toString":"x","a,b":4}') as Record<string, unknown>;
  const server = new S2SPServer({ name: 'test' });
  server.resourceTool('odd', { description: 'Odd names.' }, () => [row]);
  await server.listen();
  const client = await connectInMemory(server, t);
  const cases: Record<string, unknown>[] = [
    { abstract_domains: '["__proto__","constructor","toString","a,b"]' },
    { abstract_domains: '["constructor"]', mode: 'sync' },
    { abstract_domains: '["a,b"]', mode: 'sync' },
    { abstract_domains: '["toString"]', abstract_format: 'columns' },
    {},
  ];
  for (const args of cases) {
    const result = (await client.callTool({ name: 'odd', arguments: args })) as CallToolResult;
    assert.notEqual(result.isError, true, `${JSON.stringify(args)}: ${text(result)}`);
    const parsed = JSON.parse(text(result)) as Record<string, unknown>;
    // A sync envelope's structuredContent leaves the body out (hosts may show it to the model).
    const { body: _body, ...structured } = parsed;
    assert.deepEqual(result.structuredContent, Array.isArray(parsed) ? { rows: parsed } : structured, JSON.stringify(args));
  }
});
