import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RecordBatchReader, tableFromArrays, tableToIPC, type RecordBatch } from 'apache-arrow';
import { z } from 'zod';
import type { TableResult } from '../../src/control/resource-tool.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { ERROR_CODE_META_KEY } from '../../src/control/tool-results.js';
import { connectInMemory } from '../support/in-memory-client.js';

const ROWS = [
  { mag: 2, place: 'A', time: 1517966773840, depth: 5.5, tags: ['x'] },
  { mag: 4.5, place: 'B', time: 1517966773841, depth: null },
  { mag: 5, place: 'C', time: 1517966773842, depth: 10, extra: { k: 1 } },
];

async function setup(t: import('node:test').TestContext, options: { abstractRowLimit?: number; listen?: boolean } = {}) {
  const server = new S2SPServer({ name: 'test', tools: { abstractRowLimit: options.abstractRowLimit } });
  server.resourceTool('quakes', { description: 'quakes', inputSchema: { min: z.number().optional() } }, ({ min }) => ROWS.filter((r) => r.mag >= (min ?? 0)));
  server.resourceTool('arrow', { description: 'arrow table' }, () =>
    tableFromArrays({ id: Int32Array.from([1, 2, 3]), v: Float64Array.from([0.5, 1.5, 2.5]) }),
  );
  if (options.listen !== false) await server.listen();
  const client = await connectInMemory(server, t);
  return { server, client };
}

function text(result: CallToolResult): string {
  assert.equal(result.content[0].type, 'text');
  return (result.content[0] as { text: string }).text;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

test('the tool lists its own parameters plus abstract_domains, mode and abstract_format', async (t) => {
  const { client } = await setup(t);
  const { tools } = await client.listTools();
  const quakes = tools.find((tool) => tool.name === 'quakes');
  assert.ok(quakes);
  assert.deepEqual(Object.keys(quakes.inputSchema.properties ?? {}).sort(), ['abstract_domains', 'abstract_format', 'min', 'mode']);
});

test('without abstract_domains the tool is plain MCP: the rows exactly as returned', async (t) => {
  const { client, server } = await setup(t);
  const result = await call(client, 'quakes', { min: 4 });
  assert.equal(text(result), JSON.stringify(ROWS.slice(1)));
  assert.equal((await server.store.stats()).entries, 0);
  assert.equal(text(await call(client, 'quakes', { abstract_domains: '' })), JSON.stringify(ROWS));
});

test('async: compact envelope with abstract rows, _row_id first, and a fetchable resource_url', async (t) => {
  const { client } = await setup(t);
  const raw = text(await call(client, 'quakes', { abstract_domains: 'mag,place' }));
  assert.ok(!raw.includes('\n') && !raw.includes(': '), 'compact JSON');
  const envelope = JSON.parse(raw);
  assert.deepEqual(Object.keys(envelope), ['total_rows', 'columns', 'abstract_domains', 'body_domains', 'abstract', 'resource_url', 'expires_at']);
  assert.equal(envelope.total_rows, 3);
  assert.deepEqual(envelope.columns, ['mag', 'place', 'time', 'depth', 'tags', 'extra']);
  assert.deepEqual(envelope.body_domains, ['time', 'depth', 'tags', 'extra']);
  assert.deepEqual(envelope.abstract, [
    { _row_id: 0, mag: 2, place: 'A' },
    { _row_id: 1, mag: 4.5, place: 'B' },
    { _row_id: 2, mag: 5, place: 'C' },
  ]);
  assert.match(envelope.resource_url, /^http:\/\/127\.0\.0\.1:\d+\/s2sp\/data\/[A-Za-z0-9_-]{43}$/);
  const response = await fetch(envelope.resource_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ row_ids: [2, 0], columns: ['extra', 'tags', 'time'] }),
  });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    body: [
      { _row_id: 0, extra: null, tags: ['x'], time: 1517966773840 },
      { _row_id: 2, extra: { k: 1 }, tags: null, time: 1517966773842 },
    ],
    total_rows: 2,
    columns_returned: ['_row_id', 'extra', 'tags', 'time'],
  });
});

test('sync: body inline with _row_id and the body domains only, nothing cached', async (t) => {
  const { client, server } = await setup(t);
  const envelope = JSON.parse(text(await call(client, 'quakes', { abstract_domains: '["mag"]', mode: 'sync', min: 4 })));
  assert.equal(envelope.resource_url, undefined);
  assert.deepEqual(envelope.body, [
    { _row_id: 0, place: 'B', time: 1517966773841, depth: null, extra: null },
    { _row_id: 1, place: 'C', time: 1517966773842, depth: 10, extra: { k: 1 } },
  ]);
  assert.equal((await server.store.stats()).entries, 0);
});

test('an Arrow Table result works as rows do', async (t) => {
  const { client } = await setup(t);
  const envelope = JSON.parse(text(await call(client, 'arrow', { abstract_domains: 'v', mode: 'sync' })));
  assert.deepEqual(envelope.abstract, [
    { _row_id: 0, v: 0.5 },
    { _row_id: 1, v: 1.5 },
    { _row_id: 2, v: 2.5 },
  ]);
  assert.deepEqual(envelope.body, [
    { _row_id: 0, id: 1 },
    { _row_id: 1, id: 2 },
    { _row_id: 2, id: 3 },
  ]);
  assert.equal(
    text(await call(client, 'arrow', {})),
    JSON.stringify([
      { id: 1, v: 0.5 },
      { id: 2, v: 1.5 },
      { id: 3, v: 2.5 },
    ]),
  );
});

test('abstract rows are capped and flagged, the body keeps every row', async (t) => {
  const { client } = await setup(t, { abstractRowLimit: 2 });
  const envelope = JSON.parse(text(await call(client, 'quakes', { abstract_domains: 'mag' })));
  assert.equal(envelope.total_rows, 3);
  assert.equal(envelope.abstract.length, 2);
  assert.equal(envelope.abstract_truncated, true);
  const response = await fetch(envelope.resource_url, { method: 'POST' });
  assert.equal(((await response.json()) as { total_rows: number }).total_rows, 3);
});

const TOOL_ERRORS: Array<[string, Record<string, unknown>, string]> = [
  ['unknown domain', { abstract_domains: 'mag,nope' }, 'S2SP_ERR_DOMAINS_UNKNOWN'],
  ['domains naming no column', { abstract_domains: ' , ' }, 'S2SP_ERR_DOMAINS_INVALID'],
  ['only _row_id', { abstract_domains: '_row_id' }, 'S2SP_ERR_DOMAINS_INVALID'],
  ['empty JSON array', { abstract_domains: '[]' }, 'S2SP_ERR_DOMAINS_INVALID'],
  ['malformed JSON', { abstract_domains: '["mag"' }, 'S2SP_ERR_DOMAINS_INVALID'],
];

for (const [label, args, code] of TOOL_ERRORS) {
  test(`tool error: ${label} -> ${code}`, async (t) => {
    const { client, server } = await setup(t);
    const result = await call(client, 'quakes', args);
    assert.equal(result.isError, true);
    assert.equal(result._meta?.[ERROR_CODE_META_KEY], code);
    assert.match(text(result), new RegExp(code));
    assert.equal((await server.store.stats()).entries, 0, 'nothing cached on error');
  });
}

test('the unknown-domain error lists the available columns', async (t) => {
  const { client } = await setup(t);
  const message = text(await call(client, 'quakes', { abstract_domains: 'nope' }));
  for (const column of ['mag', 'place', 'time', 'depth']) assert.ok(message.includes(column), column);
});

test('abstract_format "columns": the header once, then one array per row, holding what "rows" holds', async (t) => {
  const { client } = await setup(t);
  const rows = JSON.parse(text(await call(client, 'quakes', { abstract_domains: 'place,mag' })));
  const raw = text(await call(client, 'quakes', { abstract_domains: 'place,mag', abstract_format: 'columns' }));
  const envelope = JSON.parse(raw);
  assert.deepEqual(Object.keys(envelope), [
    'total_rows',
    'columns',
    'abstract_domains',
    'body_domains',
    'abstract_format',
    'abstract',
    'resource_url',
    'expires_at',
  ]);
  assert.equal(envelope.abstract_format, 'columns');
  assert.deepEqual(envelope.abstract, [
    ['_row_id', 'place', 'mag'],
    [0, 'A', 2],
    [1, 'B', 4.5],
    [2, 'C', 5],
  ]);
  const [header, ...values] = envelope.abstract as [string[], ...unknown[][]];
  assert.deepEqual(
    values.map((v) => Object.fromEntries(header.map((name, i) => [name, v[i]]))),
    rows.abstract,
  );
  assert.ok(raw.length < JSON.stringify(rows).length, 'the compact layout is shorter');
  // "rows" named explicitly is the reference's envelope: no abstract_format key.
  const explicit = JSON.parse(text(await call(client, 'quakes', { abstract_domains: 'place,mag', abstract_format: 'rows' })));
  assert.equal('abstract_format' in explicit, false);
  assert.deepEqual(explicit.abstract, rows.abstract);
});

test('abstract_format "columns" keeps the row cap (the header is not a row) and the sync body as is', async (t) => {
  const { client } = await setup(t, { abstractRowLimit: 2 });
  const envelope = JSON.parse(text(await call(client, 'quakes', { abstract_domains: 'mag', abstract_format: 'columns', mode: 'sync' })));
  assert.deepEqual(envelope.abstract, [
    ['_row_id', 'mag'],
    [0, 2],
    [1, 4.5],
  ]);
  assert.equal(envelope.abstract_truncated, true);
  assert.equal(envelope.body.length, 3);
  assert.deepEqual(envelope.body[2], { _row_id: 2, place: 'C', time: 1517966773842, depth: 10, tags: null, extra: { k: 1 } });
});

test('an unknown abstract_format is rejected by the schema as a tool error', async (t) => {
  const { client, server } = await setup(t);
  const result = await call(client, 'quakes', { abstract_domains: 'mag', abstract_format: 'csv' });
  assert.equal(result.isError, true);
  assert.equal((await server.store.stats()).entries, 0);
});

test('an invalid mode is rejected by the schema as a tool error', async (t) => {
  const { client } = await setup(t);
  const result = await call(client, 'quakes', { abstract_domains: 'mag', mode: 'later' });
  assert.equal(result.isError, true);
});

test('async without a listening data plane is S2SP_ERR_DATA_PLANE_DOWN; sync still works', async (t) => {
  const { client } = await setup(t, { listen: false });
  const result = await call(client, 'quakes', { abstract_domains: 'mag' });
  assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_DATA_PLANE_DOWN');
  const sync = await call(client, 'quakes', { abstract_domains: 'mag', mode: 'sync' });
  assert.equal(sync.isError, undefined);
});

test('a full cache is a tool error and earlier bodies stay fetchable', async (t) => {
  const server = new S2SPServer({ name: 'small', store: { maxBytes: 3000 } });
  server.resourceTool('quakes', { description: 'q' }, () => ROWS);
  await server.listen();
  const client = await connectInMemory(server, t);
  const urls: string[] = [];
  let full: CallToolResult | undefined;
  for (let i = 0; i < 20 && full === undefined; i++) {
    const result = await call(client, 'quakes', { abstract_domains: 'mag' });
    if (result.isError) full = result;
    else urls.push(JSON.parse(text(result)).resource_url);
  }
  assert.ok(full, 'the budget ran out');
  assert.equal(full._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CACHE_FULL');
  assert.ok(urls.length > 0);
  for (const url of urls) assert.equal((await fetch(url, { method: 'POST' })).status, 200);
});

test('a handler returning something that is not a table is a tool error', async (t) => {
  const server = new S2SPServer({ name: 'bad' });
  server.resourceTool('bad', { description: 'b' }, () => 42 as unknown as TableResult);
  await server.listen();
  const client = await connectInMemory(server, t);
  const result = await call(client, 'bad', { abstract_domains: 'x' });
  assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_TABLE_INVALID');
});

test('a tool that returns the same Table on every call stores it once: 40 calls hold one body', async (t) => {
  const server = new S2SPServer({ name: 'test' });
  const table = tableFromArrays({ id: Int32Array.from({ length: 50_000 }, (_, i) => i), v: Float64Array.from({ length: 50_000 }, (_, i) => i / 3) });
  server.resourceTool('same', { description: 'one table' }, () => table);
  await server.listen();
  const client = await connectInMemory(server, t);
  const urls = new Set<string>();
  for (let i = 0; i < 40; i++) urls.add(JSON.parse(text(await call(client, 'same', { abstract_domains: 'v' }))).resource_url);
  assert.equal(urls.size, 40, 'a token per call');
  const stats = await server.store.stats();
  assert.equal(stats.entries, 40);
  assert.equal(stats.bodies, 1);
  assert.ok(stats.bytes < 50_000 * 16 * 1.1, `one body's bytes, not 40: ${stats.bytes}`);
});

/** A stream of `batches` batches of `per` rows (x = row number, label text), counting what was pulled and whether it was closed. */
function batchSource(batches: number, per: number) {
  const state = { pulled: 0, closed: false };
  async function* source(): AsyncGenerator<RecordBatch> {
    try {
      for (let b = 0; b < batches; b++) {
        state.pulled++;
        const x = Float64Array.from({ length: per }, (_, i) => b * per + i);
        yield* tableFromArrays({ x, label: Array.from(x, (v) => `row ${v}`) }).batches;
      }
    } finally {
      state.closed = true;
    }
  }
  return { source, state };
}

test('streams in: batches are cached as they come and the abstract holds only the capped head', async (t) => {
  const { source, state } = batchSource(5, 400);
  const server = new S2SPServer({ name: 'stream', tools: { abstractRowLimit: 50 } });
  server.resourceTool('batches', { description: 'b' }, () => source());
  await server.listen();
  const client = await connectInMemory(server, t);
  const result = await call(client, 'batches', { abstract_domains: 'x' });
  const envelope = result.structuredContent as { total_rows: number; abstract: { x: number }[]; abstract_truncated: boolean; resource_url: string };
  assert.equal(envelope.total_rows, 2000);
  assert.equal(envelope.abstract.length, 50);
  assert.equal(envelope.abstract_truncated, true);
  assert.deepEqual(envelope.abstract[49], { _row_id: 49, x: 49 });
  assert.deepEqual(state, { pulled: 5, closed: true });
  const response = await fetch(envelope.resource_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ row_ids: [0, 1999], columns: ['label'] }),
  });
  assert.deepEqual(((await response.json()) as { body: unknown }).body, [
    { _row_id: 0, label: 'row 0' },
    { _row_id: 1999, label: 'row 1999' },
  ]);
});

test('streams in: a RecordBatchReader works, plain and sync answers are built whole', async (t) => {
  const bytes = tableToIPC(tableFromArrays({ id: Int32Array.from([5, 6, 7]) }));
  const server = new S2SPServer({ name: 'reader' });
  server.resourceTool('reader', { description: 'r' }, () => RecordBatchReader.from(bytes));
  const client = await connectInMemory(server, t);
  assert.equal(text(await call(client, 'reader', {})), JSON.stringify([{ id: 5 }, { id: 6 }, { id: 7 }]), 'plain: no _row_id');
  // A 2025-era sync answer holds its body in the text block (structuredContent never does).
  const sync = JSON.parse(text(await call(client, 'reader', { abstract_domains: 'id', mode: 'sync' }))) as { body: unknown[] };
  assert.deepEqual(sync.body, [{ _row_id: 0 }, { _row_id: 1 }, { _row_id: 2 }]);
});

test('streams in: unknown domains are refused from the schema, before anything is pulled or cached', async (t) => {
  const { source, state } = batchSource(3, 10);
  const server = new S2SPServer({ name: 'stream' });
  server.resourceTool('batches', { description: 'b' }, () => source());
  await server.listen();
  const client = await connectInMemory(server, t);
  const result = await call(client, 'batches', { abstract_domains: 'nope' });
  assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_DOMAINS_UNKNOWN');
  assert.deepEqual(state, { pulled: 1, closed: true }, 'only the first batch, for its schema');
  assert.equal((await server.store.stats()).entries, 0);
});

test('streams in: a stream that outgrows the cache stops there, a tool error, nothing kept', async (t) => {
  const { source, state } = batchSource(40, 1000);
  const server = new S2SPServer({ name: 'stream', store: { maxBytes: 200_000 } });
  server.resourceTool('batches', { description: 'b' }, () => source());
  await server.listen();
  const client = await connectInMemory(server, t);
  const result = await call(client, 'batches', { abstract_domains: 'x' });
  assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_CACHE_FULL');
  assert.ok(state.pulled < 40 && state.closed, `stopped after ${state.pulled} batches and closed the source`);
  assert.deepEqual({ entries: (await server.store.stats()).entries, bytes: (await server.store.stats()).bytes }, { entries: 0, bytes: 0 });
});

test('regression: a lone surrogate in a string value or a column name is refused at put in both modes, never served as U+FFFD', async (t) => {
  const server = new S2SPServer({ name: 'surrogates' });
  server.resourceTool('value', { description: 'v' }, () => [{ id: 1, s: 'a\ud800b' }]);
  server.resourceTool('name', { description: 'n' }, () => [{ id: 1, 'k\ud800': 'x' }]);
  server.resourceTool('arrow', { description: 'a' }, () => tableFromArrays({ id: Int32Array.from([1]), ['k\udc00']: Int32Array.from([2]) }));
  server.resourceTool('nested', { description: 'j' }, () => [{ id: 1, j: { s: 'a\ud800b', 'k\ud800': 1 } }]);
  await server.listen();
  const client = await connectInMemory(server, t);
  for (const name of ['value', 'name', 'arrow']) {
    for (const mode of ['async', 'sync']) {
      const result = await call(client, name, { abstract_domains: 'id', mode });
      assert.equal(result.isError, true, `${name} ${mode}: ${text(result)}`);
      assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_TABLE_INVALID', `${name} ${mode}`);
    }
  }
  // Inside a JSON-text cell the surrogate is escaped (\ud800) and kept exact on both planes.
  const result = await call(client, 'nested', { abstract_domains: 'j', mode: 'sync' });
  const envelope = JSON.parse(text(result)) as { abstract: Array<{ j: unknown }> };
  assert.deepStrictEqual(envelope.abstract[0].j, { s: 'a\ud800b', 'k\ud800': 1 });
});
