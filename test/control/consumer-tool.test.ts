/**
 * The consumer-tool wrapper through MCP: the four parameters, merged rows and
 * an Arrow Table for the handler, and each malformed argument as a tool error
 * an LLM can act on.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import type { ConsumerBatchInput, ConsumerInput } from '../../src/control/consumer-tool.js';
import { ERROR_CODE_META_KEY } from '../../src/control/tool-results.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { ipcOf, sampleTable, sendBytes } from '../support/arrow-streams.js';
import { expectConsumed } from '../support/expect-consumed.js';
import { watchLeases } from '../support/lease-watch.js';
import { startStandIn } from '../support/stand-in-server.js';
import { waitUntilIdle } from '../support/wait-until-idle.js';
import { S2SPClient } from '../../src/agent/s2sp-client.js';

const ROWS = [
  { event: 'Wind', area: 'CA', description: 'gusts' },
  { event: 'Flood', area: 'NV', description: 'river' },
  { event: 'Heat', area: 'AZ', description: 'sun' },
];

async function setup(t: TestContext) {
  const received: ConsumerInput[] = [];
  const resource = new S2SPServer({ name: 'resource' });
  resource.resourceTool('alerts', { description: 'a' }, () => ROWS);
  await resource.listen();
  const consumer = new S2SPServer({ name: 'consumer' });
  consumer.consumerTool('ingest', { description: 'i' }, (input) => {
    received.push(input);
    return { count: input.rows.length };
  });
  return { resourceClient: await connectInMemory(resource, t), consumerClient: await connectInMemory(consumer, t), received };
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

function json(result: CallToolResult): { abstract: Array<{ _row_id: number }>; resource_url: string } {
  return JSON.parse((result.content[0] as { text: string }).text);
}

test('the consumer tool exposes exactly the four string parameters', async (t) => {
  const { consumerClient } = await setup(t);
  const [tool] = (await consumerClient.listTools()).tools;
  assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}), ['abstract_data', 'resource_url', 'body_data', 'column_mapping']);
  assert.deepEqual(tool.inputSchema.required, ['abstract_data']);
});

test('async: the handler gets merged rows in abstract order and the same data as an Arrow Table', async (t) => {
  const { resourceClient, consumerClient, received } = await setup(t);
  const envelope = json(await call(resourceClient, 'alerts', { abstract_domains: 'event' }));
  const chosen = [envelope.abstract[2], envelope.abstract[0]];
  const result = await call(consumerClient, 'ingest', {
    abstract_data: JSON.stringify(chosen),
    resource_url: envelope.resource_url,
    column_mapping: '{"event":"alert_type"}',
  });
  assert.equal(result.isError, undefined);
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), { count: 2 });
  const [input] = received;
  assert.deepEqual(input.rows, [
    { _row_id: 2, alert_type: 'Heat', area: 'AZ', description: 'sun' },
    { _row_id: 0, alert_type: 'Wind', area: 'CA', description: 'gusts' },
  ]);
  assert.equal(input.source, 'resource_url');
  assert.ok(input.bytesReceived > 0);
  assert.equal(input.table.numRows, 2);
  assert.deepEqual(
    input.table.schema.fields.map((f) => f.name),
    ['_row_id', 'alert_type', 'area', 'description'],
  );
  assert.deepEqual(input.table.getChild('_row_id')?.toArray(), Int32Array.from([2, 0]));
});

test('"*" takes every row of the resource', async (t) => {
  const { resourceClient, consumerClient, received } = await setup(t);
  const envelope = json(await call(resourceClient, 'alerts', { abstract_domains: 'event' }));
  await call(consumerClient, 'ingest', { abstract_data: '*', resource_url: envelope.resource_url });
  assert.deepEqual(
    received[0].rows.map((r) => r._row_id),
    [0, 1, 2],
  );
});

test('abstract_data in the columns layout, or as bare _row_ids, merges to what the rows shape gives', async (t) => {
  const { resourceClient, consumerClient, received } = await setup(t);
  const byRows = json(await call(resourceClient, 'alerts', { abstract_domains: 'event' }));
  await call(consumerClient, 'ingest', { abstract_data: JSON.stringify([byRows.abstract[2], byRows.abstract[0]]), resource_url: byRows.resource_url });
  const byColumns = json(await call(resourceClient, 'alerts', { abstract_domains: 'event', abstract_format: 'columns' }));
  const [header, ...lines] = byColumns.abstract as unknown as [string[], ...unknown[][]];
  await call(consumerClient, 'ingest', { abstract_data: JSON.stringify([header, lines[2], lines[0]]), resource_url: byColumns.resource_url });
  const byIds = json(await call(resourceClient, 'alerts', { abstract_domains: 'event', abstract_format: 'columns' }));
  const result = await call(consumerClient, 'ingest', { abstract_data: '[2,0]', resource_url: byIds.resource_url });
  assert.equal(result.isError, undefined);
  assert.equal(received.length, 3);
  const expected = [
    { _row_id: 2, event: 'Heat', area: 'AZ', description: 'sun' },
    { _row_id: 0, event: 'Wind', area: 'CA', description: 'gusts' },
  ];
  for (const input of received) {
    assert.deepEqual(input.rows, expected);
    assert.equal(input.source, 'resource_url');
  }
});

test('sync with the columns layout: the agent SDK still withholds the body, and bare ids get every column', async (t) => {
  const { resourceClient, consumerClient, received } = await setup(t);
  const agentToResource = new S2SPClient(resourceClient);
  const agentToConsumer = new S2SPClient(consumerClient, agentToResource.dispatcher);
  const seen = await agentToResource.callTool({ name: 'alerts', arguments: { abstract_domains: 'event', mode: 'sync', abstract_format: 'columns' } });
  const seenText = (seen.content[0] as { text: string }).text;
  assert.ok(!seenText.includes('gusts'), 'no body value reaches the LLM');
  const envelope = JSON.parse(seenText);
  assert.deepEqual(envelope.abstract, [
    ['_row_id', 'event'],
    [0, 'Wind'],
    [1, 'Flood'],
    [2, 'Heat'],
  ]);
  await agentToConsumer.callTool({ name: 'ingest', arguments: { abstract_data: '[1]', resource_url: envelope.resource_url } });
  assert.equal(received[0].source, 'body_data');
  // body_data carries the body domains only, so a bare id keeps just those (the abstract's columns were not passed).
  assert.deepEqual(received[0].rows, [{ _row_id: 1, area: 'NV', description: 'river' }]);
});

const ERRORS: Array<[string, Record<string, unknown>, string]> = [
  ['abstract_data not JSON', { abstract_data: '[{' }, 'S2SP_ERR_CONSUMER_ARG_INVALID'],
  ['abstract_data not an array', { abstract_data: '{"_row_id":0}' }, 'S2SP_ERR_CONSUMER_ARG_INVALID'],
  ['abstract row without _row_id', { abstract_data: '[{"event":"Wind"}]' }, 'S2SP_ERR_CONSUMER_ARG_INVALID'],
  ['column_mapping not an object', { abstract_data: '[]', column_mapping: '["a"]' }, 'S2SP_ERR_CONSUMER_ARG_INVALID'],
  ['column_mapping onto one name', { abstract_data: '[]', column_mapping: '{"a":"x","b":"x"}' }, 'S2SP_ERR_CONSUMER_ARG_INVALID'],
  ['body_data not JSON', { abstract_data: '[{"_row_id":0}]', body_data: 'nope' }, 'S2SP_ERR_CONSUMER_ARG_INVALID'],
  ['file: URL', { abstract_data: '[{"_row_id":0}]', resource_url: 'file:///etc/passwd' }, 'S2SP_ERR_CONSUMER_URL_INVALID'],
  ['data: URL', { abstract_data: '[{"_row_id":0}]', resource_url: 'data:application/json,{}' }, 'S2SP_ERR_CONSUMER_URL_INVALID'],
  ['non-S2SP path', { abstract_data: '[{"_row_id":0}]', resource_url: 'http://127.0.0.1:9/admin' }, 'S2SP_ERR_CONSUMER_URL_INVALID'],
  [
    'disallowed origin',
    { abstract_data: '[{"_row_id":0}]', resource_url: `http://203.0.113.7/s2sp/data/${'a'.repeat(43)}` },
    'S2SP_ERR_CONSUMER_ORIGIN_REFUSED',
  ],
];

for (const [label, args, code] of ERRORS) {
  test(`consumer tool error: ${label} -> ${code}`, async (t) => {
    const { consumerClient, received } = await setup(t);
    const result = await call(consumerClient, 'ingest', args);
    assert.equal(result.isError, true);
    assert.equal(result._meta?.[ERROR_CODE_META_KEY], code);
    assert.ok((result.content[0] as { text: string }).text.length > 30, 'a message an LLM can act on');
    assert.equal(received.length, 0, 'the handler never ran');
  });
}

test('a consumed resource_url is a tool error that says to call the resource tool again', async (t) => {
  const { resourceClient, consumerClient } = await setup(t);
  const envelope = json(await call(resourceClient, 'alerts', { abstract_domains: 'event' }));
  const args = { abstract_data: JSON.stringify(envelope.abstract), resource_url: envelope.resource_url };
  assert.equal((await call(consumerClient, 'ingest', args)).isError, undefined);
  const again = await call(consumerClient, 'ingest', args);
  assert.equal(again._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.match((again.content[0] as { text: string }).text, /resource tool again/);
});

test('a body over the consumer size limit is a tool error, and the consumer keeps working', async (t) => {
  const resource = new S2SPServer({ name: 'resource' });
  resource.resourceTool('alerts', { description: 'a' }, () => Array.from({ length: 5000 }, (_, i) => ({ i, text: `row ${i}` })));
  await resource.listen();
  const consumer = new S2SPServer({ name: 'consumer', tools: { consumer: { maxBodyBytes: 10_000 } } });
  consumer.consumerTool('ingest', { description: 'i' }, ({ rows }) => ({ count: rows.length }));
  const resourceClient = await connectInMemory(resource, t);
  const consumerClient = await connectInMemory(consumer, t);
  const big = json(await call(resourceClient, 'alerts', { abstract_domains: 'i' }));
  const tooBig = await call(consumerClient, 'ingest', { abstract_data: '*', resource_url: big.resource_url });
  assert.equal(tooBig._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CONSUMER_BODY_TOO_LARGE');
  const small = json(await call(resourceClient, 'alerts', { abstract_domains: 'i' }));
  const ok = await call(consumerClient, 'ingest', { abstract_data: JSON.stringify(small.abstract.slice(0, 3)), resource_url: small.resource_url });
  assert.deepEqual(JSON.parse((ok.content[0] as { text: string }).text), { count: 3 });
});

test('a resource server that answers garbage is a tool error, and the consumer keeps working', async (t) => {
  const { createServer } = await import('node:http');
  const garbage = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.apache.arrow.stream' });
    res.end('this is not an Arrow stream');
  });
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  t.after(() => garbage.close());
  const { consumerClient, received } = await setup(t);
  const url = `http://127.0.0.1:${(garbage.address() as { port: number }).port}/s2sp/data/${'A'.repeat(43)}`;
  const result = await call(consumerClient, 'ingest', { abstract_data: '[{"_row_id":0}]', resource_url: url });
  assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
  assert.equal(received.length, 0);
  const again = await call(consumerClient, 'ingest', { abstract_data: '[{"_row_id":0}]', body_data: '[{"_row_id":0,"x":1}]' });
  assert.equal(again.isError, undefined);
});

/** A consumer tool that asks for batches, recording what its handler saw. */
async function batchSetup(t: TestContext, rows: Record<string, unknown>[] = ROWS, handle?: (input: ConsumerBatchInput) => Promise<unknown>) {
  const seen: Array<{ abstract: unknown; names: string[]; rows: number; ids: number[]; batches: number; source: string; bytes: number }> = [];
  const store = watchLeases(new MemoryStore());
  const resource = new S2SPServer({ name: 'resource', store });
  resource.resourceTool('alerts', { description: 'a' }, () => rows);
  await resource.listen();
  const consumer = new S2SPServer({ name: 'consumer' });
  consumer.consumerTool(
    'load',
    { description: 'l' },
    handle ??
      (async (input) => {
        const ids: number[] = [];
        let count = 0;
        let batches = 0;
        for await (const batch of input.batches) {
          batches++;
          count += batch.numRows;
          for (const id of batch.getChild('_row_id') ?? []) ids.push(id as number);
        }
        seen.push({
          abstract: input.abstract,
          names: input.schema.fields.map((f) => f.name),
          rows: count,
          ids,
          batches,
          source: input.source,
          bytes: input.bytesReceived,
        });
        return { loaded: count };
      }),
    { batches: true },
  );
  return { store, resourceClient: await connectInMemory(resource, t), consumerClient: await connectInMemory(consumer, t), seen };
}

test('batches: the handler reads the chosen rows as record batches, ascending, mapped, beside the abstract', async (t) => {
  const { resourceClient, consumerClient, seen } = await batchSetup(t);
  const envelope = json(await call(resourceClient, 'alerts', { abstract_domains: 'event' }));
  const chosen = [envelope.abstract[2], envelope.abstract[0]];
  const result = await call(consumerClient, 'load', {
    abstract_data: JSON.stringify(chosen),
    resource_url: envelope.resource_url,
    column_mapping: '{"event":"alert_type"}',
  });
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), { loaded: 2 });
  const [input] = seen;
  assert.deepEqual(input.names, ['_row_id', 'alert_type', 'area', 'description']);
  assert.deepEqual(input.ids, [0, 2], 'ascending _row_id, whatever the abstract order');
  assert.deepEqual(input.abstract, [
    { _row_id: 2, alert_type: 'Heat' },
    { _row_id: 0, alert_type: 'Wind' },
  ]);
  assert.equal(input.source, 'resource_url');
  assert.ok(input.bytes > 0);
});

test('batches: "*" streams every row in several batches; body_data and abstract-only arrive as batches too', async (t) => {
  const many = Array.from({ length: 150_000 }, (_, i) => ({ v: i, text: `row ${i}` }));
  const { resourceClient, consumerClient, seen } = await batchSetup(t, many);
  const envelope = json(await call(resourceClient, 'alerts', { abstract_domains: 'v' }));
  await call(consumerClient, 'load', { abstract_data: '*', resource_url: envelope.resource_url });
  assert.equal(seen[0].rows, 150_000);
  assert.ok(seen[0].batches >= 3, `${seen[0].batches} batches`);
  assert.equal(seen[0].abstract, '*');
  await call(consumerClient, 'load', {
    abstract_data: '[{"_row_id":5},{"_row_id":1}]',
    body_data: '[{"_row_id":1,"v":1},{"_row_id":5,"v":5},{"_row_id":9,"v":9}]',
  });
  assert.deepEqual([seen[1].ids, seen[1].source], [[1, 5], 'body_data']);
  await call(consumerClient, 'load', { abstract_data: '[{"_row_id":3,"v":3}]' });
  assert.deepEqual([seen[2].ids, seen[2].source], [[3], 'abstract_only']);
});

test('batches: a transfer error inside the handler is a tool error; a handler that stops early leaves the token', async (t) => {
  const many = Array.from({ length: 400_000 }, (_, i) => ({ v: i, text: `station ${i} `.repeat(8) }));
  let firstBatchRows = 0;
  const { store, resourceClient, consumerClient } = await batchSetup(t, many, async (input) => {
    for await (const batch of input.batches) {
      firstBatchRows = batch.numRows;
      break;
    }
    return { stopped: true };
  });
  const envelope = json(await call(resourceClient, 'alerts', { abstract_domains: 'v' }));
  const stopped = await call(consumerClient, 'load', { abstract_data: '*', resource_url: envelope.resource_url });
  assert.equal(stopped.isError, undefined);
  assert.ok(firstBatchRows > 0);
  // The resource_url still serves a whole transfer: the early stop consumed nothing.
  await waitUntilIdle(store, envelope.resource_url.slice(envelope.resource_url.lastIndexOf('/') + 1));
  const response = await fetch(envelope.resource_url, { method: 'POST', headers: { accept: 'application/vnd.apache.arrow.stream' } });
  await response.arrayBuffer();
  assert.equal(response.status, 200);
  await expectConsumed(envelope.resource_url, store);
  const gone = await call(consumerClient, 'load', { abstract_data: '*', resource_url: envelope.resource_url });
  assert.equal(gone._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  // A stream cut before its end-of-stream marker fails inside the handler's loop: a tool error.
  const bytes = ipcOf(sampleTable(3, 40));
  const cut = await startStandIn(t, (_req, res) => sendBytes(res, bytes.subarray(0, bytes.byteLength - 8)));
  const { consumerClient: reader } = await batchSetup(t);
  const broken = await call(reader, 'load', { abstract_data: '*', resource_url: cut.url });
  assert.equal(broken._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
});
