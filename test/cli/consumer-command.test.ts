/**
 * `summarize_rows` through MCP: the statistics as JSON text first, then the
 * chart as a PNG image block (none when nothing is numeric).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SUMMARIZE_TOOL, createConsumerServer } from '../../src/cli/consumer-command.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { decodePng, inkShare } from '../support/png.js';

async function summarize(t: TestContext, rows: Record<string, unknown>[], abstractData: string): Promise<CallToolResult> {
  const resource = new S2SPServer({ name: 'resource' });
  resource.resourceTool('rows', { description: 'rows' }, () => rows);
  await resource.listen();
  const resourceClient = await connectInMemory(resource, t);
  const consumer = await createConsumerServer({ transport: 'stdio', host: '127.0.0.1', allowOrigins: [] });
  const consumerClient = await connectInMemory(consumer, t);
  const read = (await resourceClient.callTool({ name: 'rows', arguments: { abstract_domains: 'name' } })) as CallToolResult;
  const { resource_url } = JSON.parse((read.content[0] as { text: string }).text);
  return (await consumerClient.callTool({ name: SUMMARIZE_TOOL, arguments: { abstract_data: abstractData, resource_url } })) as CallToolResult;
}

test('summarize_rows answers the statistics, then a PNG chart of the merged rows', async (t) => {
  const rows = Array.from({ length: 40 }, (_, i) => ({ name: `q${i}`, mag: 4 + (i % 9) / 4, longitude: -150 + i * 7, latitude: -40 + i * 2, depth: i * 10 }));
  const result = await summarize(t, rows, '*');
  assert.notEqual(result.isError, true);
  assert.equal(result.content.length, 2);
  const [text, image] = result.content;
  assert.equal(text.type, 'text');
  assert.equal(JSON.parse((text as { text: string }).text).row_count, 40);
  assert.equal(image.type, 'image');
  const { data, mimeType } = image as { data: string; mimeType: string };
  assert.equal(mimeType, 'image/png');
  const png = decodePng(Buffer.from(data, 'base64'));
  assert.ok(png.width > 800 && png.height > 300, `${png.width}x${png.height}: histogram and map`);
  assert.ok(inkShare(png) > 0.05);
});

test('rows with nothing numeric get the statistics only', async (t) => {
  const result = await summarize(
    t,
    [
      { name: 'a', tag: 'x' },
      { name: 'b', tag: 'y' },
    ],
    '[0,1]',
  );
  assert.notEqual(result.isError, true);
  assert.deepEqual(
    result.content.map((c) => c.type),
    ['text'],
  );
});

test('a column named constructor (Vega logged "Operator not defined: undefined" and drew an empty histogram) is left out, and the answer says so', async (t) => {
  const rows = Array.from({ length: 30 }, (_, i) => ({ name: `r${i}`, constructor: i * 1.5, toString: i, price: (i % 7) + 0.5 }));
  const result = await summarize(t, rows, '*');
  assert.notEqual(result.isError, true);
  assert.deepEqual(
    result.content.map((c) => c.type),
    ['text', 'image', 'text'],
  );
  const note = (result.content[2] as { text: string }).text;
  assert.match(note, /"constructor"/);
  assert.match(note, /"toString"/);
  const png = decodePng(Buffer.from((result.content[1] as { data: string }).data, 'base64'));
  assert.ok(inkShare(png) > 0.02, 'the price histogram is drawn');
});
