import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z3 from 'zod/v3';
import * as z4 from 'zod/v4';
import * as z4mini from 'zod/v4-mini';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { registerResourceTool } from '../../src/control/resource-tool.js';
import { flavourOf } from '../../src/control/zod-flavour.js';
import { connectInMemory } from '../support/in-memory-client.js';

test('flavourOf: zod 3 shapes are v3; zod 4 (classic or mini) and empty shapes are v4', () => {
  assert.equal(flavourOf({ a: z3.number() }), 'v3');
  assert.equal(flavourOf({ a: z4.number() }), 'v4');
  assert.equal(flavourOf({ a: z4mini.number() }), 'v4');
  assert.equal(flavourOf({}), 'v4');
});

for (const [label, shape] of [
  ['zod 3', { min: z3.number() }],
  ['zod 4', { min: z4.number() }],
  ['zod 4 mini', { min: z4mini.number() }],
] as const) {
  test(`a ${label} input schema registers, lists, validates and reaches the handler typed`, async (t) => {
    const store = new MemoryStore();
    const mcp = new McpServer({ name: 't', version: '0' });
    registerResourceTool(
      mcp,
      'rows',
      { description: 'rows', inputSchema: shape },
      // ShapeOutput types `min` as number in every flavour.
      ({ min }) => [{ v: min + 1 }, { v: min + 2 }],
      { store, resourceUrlFor: (token) => `http://127.0.0.1:1/s2sp/data/${token}` },
    );
    const client = await connectInMemory(mcp, t);
    t.after(() => store.close());
    const [tool] = (await client.listTools()).tools;
    assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), ['abstract_domains', 'abstract_format', 'min', 'mode']);
    const ok = (await client.callTool({ name: 'rows', arguments: { min: 1, abstract_domains: 'v', mode: 'sync' } })) as CallToolResult;
    assert.deepEqual((ok.structuredContent as { abstract: unknown }).abstract, [
      { _row_id: 0, v: 2 },
      { _row_id: 1, v: 3 },
    ]);
    const bad = (await client.callTool({ name: 'rows', arguments: { min: 'one' } })) as CallToolResult;
    assert.equal(bad.isError, true, 'the SDK validates the own parameter');
    const badMode = (await client.callTool({ name: 'rows', arguments: { min: 1, mode: 'later' } })) as CallToolResult;
    assert.equal(badMode.isError, true, 'and the added one, in the same flavour');
  });
}
