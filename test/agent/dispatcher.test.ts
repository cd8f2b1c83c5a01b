import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DdiBuffer } from '../../src/agent/ddi-buffer.js';
import { isDdiHandle } from '../../src/protocol/ddi-handle.js';
import { S2SPDispatcher } from '../../src/agent/dispatcher.js';

const ENVELOPE = {
  total_rows: 2,
  columns: ['event', 'description'],
  abstract_domains: ['event'],
  body_domains: ['description'],
  abstract: [
    { _row_id: 0, event: 'Wind' },
    { _row_id: 1, event: 'Flood' },
  ],
  body: [
    { _row_id: 0, description: 'secret 0' },
    { _row_id: 1, description: 'secret 1' },
  ],
};

function textResult(doc: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(doc) }] };
}

test('afterToolResult moves the body into the buffer and sets a ddi:// resource_url', () => {
  const dispatcher = new S2SPDispatcher();
  const input = textResult(ENVELOPE);
  const inputText = (input.content[0] as { text: string }).text;
  const out = dispatcher.afterToolResult(input);
  assert.notEqual(out, input);
  assert.equal((input.content[0] as { text: string }).text, inputText, 'input not mutated');
  const text = (out.content[0] as { type: string; text: string }).text;
  assert.ok(!text.includes('secret'), 'the LLM never sees the body');
  assert.ok(!text.includes('\n'), 'compact JSON');
  const doc = JSON.parse(text);
  assert.equal(doc.body, undefined);
  assert.deepEqual(doc.abstract, ENVELOPE.abstract);
  assert.equal(doc.total_rows, 2);
  assert.ok(isDdiHandle(doc.resource_url));
  assert.equal(dispatcher.buffer.size, 1);
  assert.deepEqual(JSON.parse(dispatcher.buffer.take(doc.resource_url)), ENVELOPE.body);
});

test('structuredContent holding the envelope is rewritten with the same handle', () => {
  const dispatcher = new S2SPDispatcher();
  const out = dispatcher.afterToolResult({ ...textResult(ENVELOPE), structuredContent: { ...ENVELOPE } });
  const fromText = JSON.parse((out.content[0] as { text: string }).text);
  assert.equal(out.structuredContent?.body, undefined);
  assert.equal(out.structuredContent?.resource_url, fromText.resource_url);
  assert.deepEqual(out.structuredContent?.abstract, ENVELOPE.abstract);
  assert.equal(dispatcher.buffer.size, 1);
});

test('structuredContent alone is handled too', () => {
  const dispatcher = new S2SPDispatcher();
  const out = dispatcher.afterToolResult({ content: [{ type: 'text', text: 'see structured content' }], structuredContent: { ...ENVELOPE } });
  assert.ok(isDdiHandle(out.structuredContent?.resource_url));
  assert.equal(out.structuredContent?.body, undefined);
  assert.equal((out.content[0] as { text: string }).text, 'see structured content');
});

test('other results pass through as the same object', () => {
  const dispatcher = new S2SPDispatcher();
  const results: CallToolResult[] = [
    { content: [{ type: 'text', text: 'hello' }] },
    { content: [{ type: 'text', text: '{not json' }] },
    { content: [{ type: 'text', text: '[{"a":1}]' }] },
    textResult({ abstract: [], resource_url: 'http://127.0.0.1/s2sp/data/x' }), // async: no body
    textResult({ body: [] }),
    textResult({ abstract: [], body: 'not rows' }),
    { ...textResult(ENVELOPE), isError: true },
    { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] },
    { content: [] },
  ];
  for (const result of results) assert.equal(dispatcher.afterToolResult(result), result);
  assert.equal(dispatcher.buffer.size, 0);
});

test('beforeToolCall swaps a ddi:// handle for body_data, single use', () => {
  const dispatcher = new S2SPDispatcher();
  const handle = dispatcher.buffer.put(JSON.stringify(ENVELOPE.body));
  const args = { abstract_data: '[{"_row_id":1}]', resource_url: handle };
  const out = dispatcher.beforeToolCall(args);
  assert.notEqual(out, args);
  assert.deepEqual(args, { abstract_data: '[{"_row_id":1}]', resource_url: handle }, 'input not mutated');
  assert.deepEqual(Object.keys(out ?? {}).sort(), ['abstract_data', 'body_data']);
  assert.deepEqual(JSON.parse(out?.body_data as string), ENVELOPE.body);
  assert.equal(dispatcher.buffer.has(handle), false);
  assert.throws(() => dispatcher.beforeToolCall(args), { code: 'S2SP_ERR_DDI_HANDLE_UNKNOWN' });
});

test('beforeToolCall leaves other arguments untouched (same object)', () => {
  const dispatcher = new S2SPDispatcher();
  dispatcher.buffer.put('[]');
  const cases = [
    undefined,
    {},
    { resource_url: 'http://127.0.0.1:9001/s2sp/data/abc' },
    { resource_url: 'ddi://too-short' },
    { resource_url: 42 },
    { other: 'ddi://x' },
  ];
  for (const args of cases) assert.equal(dispatcher.beforeToolCall(args), args);
  assert.equal(dispatcher.buffer.size, 1);
});

test('two dispatchers can share one buffer', () => {
  const buffer = new DdiBuffer();
  const a = new S2SPDispatcher(buffer);
  const b = new S2SPDispatcher(buffer);
  const out = a.afterToolResult(textResult(ENVELOPE));
  const handle = JSON.parse((out.content[0] as { text: string }).text).resource_url;
  const args = b.beforeToolCall({ abstract_data: '*', resource_url: handle });
  assert.deepEqual(JSON.parse(args?.body_data as string), ENVELOPE.body);
  assert.equal(buffer.size, 0);
});

test('round trip: the result the LLM sees feeds a consumer call that gets the body', () => {
  const dispatcher = new S2SPDispatcher();
  const seen = JSON.parse((dispatcher.afterToolResult(textResult(ENVELOPE)).content[0] as { text: string }).text);
  const chosen = seen.abstract.filter((row: { event: string }) => row.event === 'Flood');
  const args = dispatcher.beforeToolCall({ abstract_data: JSON.stringify(chosen), resource_url: seen.resource_url });
  assert.equal(args?.resource_url, undefined);
  assert.equal(args?.abstract_data, '[{"_row_id":1,"event":"Flood"}]');
  assert.deepEqual(JSON.parse(args?.body_data as string), ENVELOPE.body);
});

test('a sync body with integers beyond 2^53 reaches the consumer call with every digit', () => {
  const dispatcher = new S2SPDispatcher();
  // As the resource tool writes it: exact digits, which JSON.parse would round.
  const text =
    '{"total_rows":1,"columns":["id","big"],"abstract_domains":["id"],"body_domains":["big"],' +
    '"abstract":[{"_row_id":0,"id":9007199254740993}],"body":[{"_row_id":0,"big":18446744073709551615}]}';
  const out = dispatcher.afterToolResult({ content: [{ type: 'text', text }] });
  const shown = (out.content[0] as { text: string }).text;
  assert.ok(shown.includes('"abstract":[{"_row_id":0,"id":9007199254740993}]'), shown);
  const handle = /"resource_url":"(ddi:\/\/[^"]+)"/.exec(shown)![1];
  const delivered = dispatcher.beforeToolCall({ abstract_data: '[{"_row_id":0}]', resource_url: handle });
  assert.equal(delivered?.body_data, '[{"_row_id":0,"big":18446744073709551615}]');
});

test('the 22-character ddi:// handles the Python reference mints (token_urlsafe(16)) are recognised', () => {
  const reference = `ddi://${Buffer.alloc(16, 7).toString('base64url')}`;
  assert.equal(reference.length, 6 + 22);
  assert.ok(isDdiHandle(reference));
  const dispatcher = new S2SPDispatcher();
  // Unknown here: a clear DDI error, not a resource_url passed on to a consumer that cannot fetch it.
  assert.throws(() => dispatcher.beforeToolCall({ abstract_data: '[0]', resource_url: reference }), { code: 'S2SP_ERR_DDI_HANDLE_UNKNOWN' });
  // Parked under that handle (a buffer shared with a reference-speaking agent), it is delivered.
  dispatcher.buffer.restore(reference, '[{"_row_id":0,"description":"secret 0"}]');
  const delivered = dispatcher.beforeToolCall({ abstract_data: '[0]', resource_url: reference });
  assert.equal(delivered?.body_data, '[{"_row_id":0,"description":"secret 0"}]');
  assert.equal(delivered?.resource_url, undefined);
  for (const bad of ['ddi://short', `ddi://${'a'.repeat(23)}`, `ddi://${'a'.repeat(21)}`]) assert.equal(isDdiHandle(bad), false, bad);
});

test('regression: sync mode keeps whole floats as the server wrote them (2.0, -3.0, 0.0, nested), in the abstract and in body_data', () => {
  const text =
    '{"total_rows":1,"columns":["mag","v","n"],"abstract_domains":["mag"],"body_domains":["v","n"],' +
    '"abstract":[{"_row_id":0,"mag":2.0}],"body":[{"_row_id":0,"v":-3.0,"n":{"a":[1,2.0,null],"z":0.0}}]}';
  const dispatcher = new S2SPDispatcher();
  const out = dispatcher.afterToolResult({ content: [{ type: 'text', text }] });
  const shown = (out.content[0] as { text: string }).text;
  assert.ok(shown.includes('"abstract":[{"_row_id":0,"mag":2.0}]'), shown);
  const handle = (JSON.parse(shown) as { resource_url: string }).resource_url;
  const delivered = dispatcher.beforeToolCall({ abstract_data: '[{"_row_id":0,"mag":2.0}]', resource_url: handle });
  assert.equal(delivered?.body_data, '[{"_row_id":0,"v":-3.0,"n":{"a":[1,2.0,null],"z":0.0}}]');
});

test("beforeToolCall moves query_rows' ddi:// tables to tables_data, keeps URL tables, and restore puts every handle back", () => {
  const dispatcher = new S2SPDispatcher();
  const orders = dispatcher.buffer.put('[{"_row_id":0,"amount":1.5}]');
  const customers = dispatcher.buffer.put('[{"_row_id":0,"country":"PT"}]');
  const args = { sql: 'SELECT 1', tables: { orders, customers, regions: 'http://127.0.0.1:1/s2sp/data/x' }, abstract_domains: 'x' };
  const delivered = dispatcher.beforeToolCall(args)!;
  assert.deepEqual(delivered.tables, { regions: 'http://127.0.0.1:1/s2sp/data/x' });
  assert.deepEqual(delivered.tables_data, { orders: '[{"_row_id":0,"amount":1.5}]', customers: '[{"_row_id":0,"country":"PT"}]' });
  assert.equal(dispatcher.buffer.size, 0, 'single use: both taken');
  dispatcher.restore(delivered);
  assert.ok(dispatcher.buffer.has(orders) && dispatcher.buffer.has(customers), 'the failed call gave both back');
});

test('beforeToolCall with one unknown handle among tables spends none of the others', () => {
  const dispatcher = new S2SPDispatcher();
  const known = dispatcher.buffer.put('[{"_row_id":0}]');
  const unknown = new S2SPDispatcher().buffer.put('[]');
  assert.throws(() => dispatcher.beforeToolCall({ sql: 'SELECT 1', tables: { a: known, b: unknown } }), { code: 'S2SP_ERR_DDI_HANDLE_UNKNOWN' });
  assert.ok(dispatcher.buffer.has(known), 'the known handle is still there');
});
