/**
 * query_rows through MCP: SQL over bodies of two resource servers, the
 * answer a body of the consumer's own, chained into further tools; each
 * refusal an S2SP_ERR_* tool error, a query that cannot run spending no
 * token, and the engine sealed from files, the network and its settings.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { ERROR_CODE_META_KEY } from '../../src/control/tool-results.js';
import { S2SPClient } from '../../src/agent/s2sp-client.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { expectConsumed } from '../support/expect-consumed.js';
import type { QueryToolOptions } from '../../src/control/query-tool.js';
import { fileURLToPath } from 'node:url';
import { runNode } from '../support/cli-process.js';
import { hidePackage } from '../support/hidden-package.js';

const COUNTRIES = ['PT', 'JP', 'CL', 'NZ'];
const ORDERS = Array.from({ length: 200 }, (_, i) => ({ order_id: i, customer: i % 10, amount: (i % 7) + 0.5 }));
const CUSTOMERS = Array.from({ length: 10 }, (_, i) => ({ id: i, country: COUNTRIES[i % COUNTRIES.length], name: `customer ${i}` }));

/** Per country: the sum of amounts and the number of orders, computed here without SQL. */
function expectedTotals(): Map<string, { total: number; n: number }> {
  const out = new Map<string, { total: number; n: number }>();
  for (const order of ORDERS) {
    const country = CUSTOMERS[order.customer].country;
    const entry = out.get(country) ?? { total: 0, n: 0 };
    entry.total += order.amount;
    entry.n += 1;
    out.set(country, entry);
  }
  return out;
}

const JOIN_SQL =
  'SELECT c.country, sum(o.amount) AS total, count(*) AS n FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.country ORDER BY c.country';

interface Setup {
  shop: Client;
  crm: Client;
  consumer: Client;
  consumerServer: S2SPServer;
}

async function setup(t: TestContext, options: QueryToolOptions = {}, store?: MemoryStore): Promise<Setup> {
  const shopServer = new S2SPServer({ name: 'shop' });
  shopServer.resourceTool('orders', { description: 'orders' }, () => ORDERS);
  await shopServer.listen();
  const crmServer = new S2SPServer({ name: 'crm' });
  crmServer.resourceTool('customers', { description: 'customers' }, () => CUSTOMERS);
  await crmServer.listen();
  const consumerServer = new S2SPServer({ name: 'analyst', ...(store === undefined ? {} : { store }) });
  consumerServer.queryTool(options);
  consumerServer.consumerTool('ingest', { description: 'rows' }, ({ rows }) => ({ rows }));
  await consumerServer.listen();
  return {
    shop: await connectInMemory(shopServer, t),
    crm: await connectInMemory(crmServer, t),
    consumer: await connectInMemory(consumerServer, t),
    consumerServer,
  };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function envelopeOf(result: CallToolResult): { abstract: Array<Record<string, unknown>>; resource_url: string; total_rows: number } {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return JSON.parse((result.content[0] as { text: string }).text);
}

function codeOf(result: CallToolResult): unknown {
  assert.equal(result.isError, true, `expected a tool error, got ${JSON.stringify(result.content).slice(0, 300)}`);
  return result._meta?.[ERROR_CODE_META_KEY];
}

/** Fresh resource_urls of both sources (abstracts of their ids only). */
async function sources(s: Setup): Promise<{ orders: string; customers: string }> {
  const orders = envelopeOf(await call(s.shop, 'orders', { abstract_domains: 'order_id' })).resource_url;
  const customers = envelopeOf(await call(s.crm, 'customers', { abstract_domains: 'id' })).resource_url;
  return { orders, customers };
}

/** A resource_url still answers its body: the query left it unspent. */
async function assertUnspent(url: string): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{}' });
  await response.arrayBuffer();
  assert.equal(response.status, 200, `${url} should still answer its body`);
}

test('query_rows joins bodies of two servers; the LLM gets the abstract it asked for, the rest is a body of the consumer', async (t) => {
  const s = await setup(t);
  const urls = await sources(s);
  const envelope = envelopeOf(await call(s.consumer, 'query_rows', { sql: JOIN_SQL, tables: urls, abstract_domains: 'country' }));
  assert.deepEqual(
    envelope.abstract.map((row) => row.country),
    [...COUNTRIES].sort(),
  );
  assert.deepEqual(Object.keys(envelope.abstract[0]).sort(), ['_row_id', 'country']);
  assert.equal(envelope.total_rows, COUNTRIES.length);
  assert.ok(envelope.resource_url.startsWith(s.consumerServer.resourceUrlFor('x').slice(0, -1)), 'served by the consumer itself');
  // Both sources were read to the end: their tokens are spent.
  await expectConsumed(urls.orders);
  await expectConsumed(urls.customers);
  // The body holds the other columns, exactly.
  const ingested = JSON.parse(
    ((await call(s.consumer, 'ingest', { abstract_data: '*', resource_url: envelope.resource_url })).content[0] as { text: string }).text,
  ) as {
    rows: Array<{ country: string; total: number; n: number }>;
  };
  const expected = expectedTotals();
  assert.equal(ingested.rows.length, COUNTRIES.length);
  for (const row of ingested.rows) {
    assert.equal(row.total, expected.get(row.country)!.total, row.country);
    assert.equal(Number(row.n), expected.get(row.country)!.n, row.country);
  }
});

test('a result chains: query_rows over the resource_url of an earlier query_rows', async (t) => {
  const s = await setup(t);
  const urls = await sources(s);
  const first = envelopeOf(await call(s.consumer, 'query_rows', { sql: JOIN_SQL, tables: urls, abstract_domains: 'country' }));
  const second = envelopeOf(
    await call(s.consumer, 'query_rows', {
      sql: 'SELECT count(*) AS countries, sum(n) AS orders FROM per_country',
      tables: { per_country: first.resource_url },
      abstract_domains: 'countries,orders',
    }),
  );
  assert.equal(Number(second.abstract[0].countries), COUNTRIES.length);
  assert.equal(String(second.abstract[0].orders), String(ORDERS.length));
});

test('one resource_url named twice is fetched once (a self-join)', async (t) => {
  const s = await setup(t);
  const { customers } = await sources(s);
  const envelope = envelopeOf(
    await call(s.consumer, 'query_rows', {
      sql: 'SELECT count(*) AS pairs FROM a JOIN b ON a.country = b.country AND a.id < b.id',
      tables: { a: customers, b: customers },
      abstract_domains: 'pairs',
    }),
  );
  // 10 customers over 4 countries: groups of 3, 3, 2, 2 -> 3 + 3 + 1 + 1 pairs.
  assert.equal(Number(envelope.abstract[0].pairs), 8);
});

test('refused before fetching, every source token still unspent: bad SQL, an unknown table, not a SELECT, two statements, a file reader', async (t) => {
  const s = await setup(t);
  const cases: Array<[string, string]> = [
    ['SELEC country FROM customers', 'S2SP_ERR_QUERY_SQL_INVALID'],
    ['SELECT * FROM custmers', 'S2SP_ERR_QUERY_TABLE_UNKNOWN'],
    ['WITH x AS (SELECT * FROM orders) SELECT * FROM x JOIN y ON true', 'S2SP_ERR_QUERY_TABLE_UNKNOWN'],
    ['CREATE TABLE x AS SELECT * FROM customers', 'S2SP_ERR_QUERY_NOT_ALLOWED'],
    ['SELECT 1; SELECT 2', 'S2SP_ERR_QUERY_NOT_ALLOWED'],
    ["SELECT * FROM customers, read_csv('/etc/passwd')", 'S2SP_ERR_QUERY_NOT_ALLOWED'],
  ];
  const urls = await sources(s);
  for (const [sql, code] of cases) {
    assert.equal(codeOf(await call(s.consumer, 'query_rows', { sql, tables: urls, abstract_domains: 'id' })), code, sql);
  }
  // The same two tokens went into every call above.
  await assertUnspent(urls.orders);
  await assertUnspent(urls.customers);
});

test('what needs the columns is refused once the schemas arrive, before loading: an unknown column', async (t) => {
  const s = await setup(t);
  const urls = await sources(s);
  assert.equal(
    codeOf(await call(s.consumer, 'query_rows', { sql: 'SELECT nope FROM customers', tables: urls, abstract_domains: 'id' })),
    'S2SP_ERR_QUERY_SQL_INVALID',
  );
  // Names in the SQL match the tables' names as DuckDB matches identifiers: without regard to case.
  const envelope = envelopeOf(
    await call(s.consumer, 'query_rows', { sql: 'SELECT count(*) AS n FROM CUSTOMERS', tables: await sources(s), abstract_domains: 'n' }),
  );
  assert.equal(Number(envelope.abstract[0].n), CUSTOMERS.length);
});

test('the engine reaches no file, network, extension or setting: each escape is refused and reads nothing', async (t) => {
  const s = await setup(t);
  const escapes = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/hostname')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_json('/etc/passwd')",
    "SELECT * FROM read_parquet('/etc/passwd')",
    "SELECT * FROM parquet_metadata('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')",
    "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
    "COPY (SELECT * FROM customers) TO '/tmp/s2sp-escape.csv'",
    "EXPORT DATABASE '/tmp/s2sp-escape'",
    "ATTACH '/tmp/s2sp-escape.db' AS escape",
    "ATTACH ':memory:' AS other",
    'INSTALL httpfs',
    'LOAD httpfs',
    'SET enable_external_access = true',
    'SET allow_community_extensions = true',
    'RESET enable_external_access',
    'PRAGMA enable_profiling',
    "CALL pragma_version(); SELECT * FROM read_csv('/etc/passwd')",
    "SELECT getenv('HOME')",
    "WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x",
    "SELECT * FROM customers WHERE id IN (SELECT 1 FROM read_text('/etc/passwd'))",
  ];
  for (const sql of escapes) {
    const urls = await sources(s);
    const result = await call(s.consumer, 'query_rows', { sql, tables: urls, abstract_domains: 'id' });
    assert.equal(result.isError, true, `${sql} ran`);
    const text = (result.content[0] as { text: string }).text;
    assert.ok(!/root:|\/bin\/|nologin/.test(text), `${sql} leaked file content: ${text}`);
    assert.match(String(result._meta?.[ERROR_CODE_META_KEY]), /^S2SP_ERR_QUERY_(NOT_ALLOWED|SQL_INVALID|TABLE_UNKNOWN)$/, `${sql}: ${text}`);
  }
  assert.throws(() => readFileSync('/tmp/s2sp-escape.csv'), /ENOENT/, 'COPY wrote no file');
  assert.throws(() => readFileSync('/tmp/s2sp-escape.db'), /ENOENT/, 'ATTACH made no database');
});

test('a source already consumed: S2SP_ERR_QUERY_SOURCE_FAILED naming the table and the data plane code', async (t) => {
  const s = await setup(t);
  const urls = await sources(s);
  await call(s.consumer, 'ingest', { abstract_data: '*', resource_url: urls.customers });
  await expectConsumed(urls.customers);
  const result = await call(s.consumer, 'query_rows', { sql: JOIN_SQL, tables: urls, abstract_domains: 'country' });
  assert.equal(codeOf(result), 'S2SP_ERR_QUERY_SOURCE_FAILED');
  assert.match((result.content[0] as { text: string }).text, /"customers".*S2SP_ERR_CONSUMER_FETCH_FAILED.*S2SP_ERR_TOKEN_NOT_FOUND/);
});

test('a source that cannot be reached: S2SP_ERR_QUERY_SOURCE_FAILED naming the table', async (t) => {
  const s = await setup(t);
  const { customers } = await sources(s);
  // Nothing listens on the discard port of loopback.
  const gone = `http://127.0.0.1:9/s2sp/data/${'A'.repeat(43)}`;
  const result = await call(s.consumer, 'query_rows', { sql: JOIN_SQL, tables: { orders: gone, customers }, abstract_domains: 'country' });
  assert.equal(codeOf(result), 'S2SP_ERR_QUERY_SOURCE_FAILED');
  assert.match((result.content[0] as { text: string }).text, /"orders"/);
});

test('arguments: tables must name sources by resource_url; an undelivered ddi:// handle says what to do', async (t) => {
  const s = await setup(t);
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ sql: '  ', tables: { a: 'http://127.0.0.1:1/s2sp/data/x' } }, 'S2SP_ERR_QUERY_ARG_INVALID'],
    [{ sql: 'SELECT 1', tables: {} }, 'S2SP_ERR_QUERY_ARG_INVALID'],
    [{ sql: 'SELECT 1', tables: '[1]' }, 'S2SP_ERR_QUERY_ARG_INVALID'],
    [{ sql: 'SELECT 1', tables: 'not json' }, 'S2SP_ERR_QUERY_ARG_INVALID'],
    [{ sql: 'SELECT 1', tables: { a: 'file:///etc/passwd' } }, 'S2SP_ERR_QUERY_ARG_INVALID'],
    [{ sql: 'SELECT 1', tables: { a: `ddi://${'A'.repeat(43)}` } }, 'S2SP_ERR_QUERY_ARG_INVALID'],
  ];
  for (const [args, code] of bad) assert.equal(codeOf(await call(s.consumer, 'query_rows', { ...args, abstract_domains: 'x' })), code, JSON.stringify(args));
  // tables as its JSON text (some clients send object arguments so) is taken.
  const urls = await sources(s);
  const envelope = envelopeOf(await call(s.consumer, 'query_rows', { sql: JOIN_SQL, tables: JSON.stringify(urls), abstract_domains: 'country' }));
  assert.equal(envelope.total_rows, COUNTRIES.length);
});

test('a result larger than the store can hold: S2SP_ERR_QUERY_TOO_LARGE before it is all read', async (t) => {
  const s = await setup(t, {}, new MemoryStore({ maxBytes: 256 * 1024 }));
  const urls = await sources(s);
  const result = await call(s.consumer, 'query_rows', {
    sql: 'SELECT o.*, c.*, r.range AS k FROM orders o, customers c, range(100) r',
    tables: urls,
    abstract_domains: 'k',
  });
  assert.equal(codeOf(result), 'S2SP_ERR_QUERY_TOO_LARGE');
});

test("a query past the engine's memory limit fails with S2SP_ERR_QUERY_TOO_LARGE, spilling nothing to disk", async (t) => {
  const s = await setup(t, { memoryLimit: '16MB' });
  const urls = await sources(s);
  const result = await call(s.consumer, 'query_rows', {
    sql: "SELECT count(DISTINCT r.range::VARCHAR || c.country || 'some padding text') AS n FROM range(5000000) r, customers c WHERE c.id = 0",
    tables: urls,
    abstract_domains: 'n',
  });
  assert.equal(codeOf(result), 'S2SP_ERR_QUERY_TOO_LARGE');
});

test('a query past its time limit is stopped: S2SP_ERR_QUERY_TIMEOUT', async (t) => {
  const s = await setup(t, { timeLimitMs: 300 });
  const urls = await sources(s);
  const result = await call(s.consumer, 'query_rows', {
    sql: 'SELECT sum(random()) AS s FROM range(1000000000000)',
    tables: urls,
    abstract_domains: 's',
  });
  assert.equal(codeOf(result), 'S2SP_ERR_QUERY_TIMEOUT');
});

test('sync mode: the agent SDK carries ddi:// tables to query_rows as tables_data; the LLM sees handles only', async (t) => {
  const s = await setup(t);
  const shop = new S2SPClient(s.shop);
  const crm = new S2SPClient(s.crm, shop.dispatcher);
  const consumer = new S2SPClient(s.consumer, shop.dispatcher);
  // A sync body holds the columns the abstract does not: the join keys stay out of the abstracts.
  const orders = envelopeOf((await shop.callTool({ name: 'orders', arguments: { abstract_domains: 'amount', mode: 'sync' } })) as CallToolResult);
  const customers = envelopeOf((await crm.callTool({ name: 'customers', arguments: { abstract_domains: 'name', mode: 'sync' } })) as CallToolResult);
  assert.match(orders.resource_url, /^ddi:\/\//);
  const result = (await consumer.callTool({
    name: 'query_rows',
    arguments: {
      sql: 'SELECT c.country, count(*) AS n FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.country ORDER BY c.country',
      tables: { orders: orders.resource_url, customers: customers.resource_url },
      abstract_domains: 'country,n',
    },
  })) as CallToolResult;
  const envelope = envelopeOf(result);
  const expected = expectedTotals();
  assert.deepEqual(
    envelope.abstract.map((row) => [row.country, Number(row.n)]),
    [...expected.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([country, { n }]) => [country, n]),
  );
  assert.equal(shop.dispatcher.buffer.size, 0, 'both handles were spent');
});

test('without @duckdb/node-api installed, query_rows answers S2SP_ERR_CLI_PACKAGE_MISSING with the install line, and fetches nothing', async () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const probe = `
    const { S2SPServer } = await import(${JSON.stringify(`${src}server/s2sp-server.js`)});
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
    const server = new S2SPServer({ name: 'analyst' });
    server.queryTool();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'probe', version: '0' });
    await client.connect(clientSide);
    let fetched = false;
    const http = await import('node:http');
    const source = http.createServer((req, res) => { fetched = true; res.end(); });
    await new Promise((resolve) => source.listen(0, '127.0.0.1', resolve));
    const url = 'http://127.0.0.1:' + source.address().port + '/s2sp/data/' + 'A'.repeat(43);
    const result = await client.callTool({ name: 'query_rows', arguments: { sql: 'SELECT 1 AS one FROM t', tables: { t: url }, abstract_domains: 'one' } });
    console.log(JSON.stringify({ code: result._meta?.['s2sp/error-code'], text: result.content[0].text, fetched }));
    source.close();
    await client.close();
    await server.close();
  `;
  const { code, stdout, stderr } = await runNode('--input-type=module', ['-e', `${hidePackage('@duckdb/node-api')}\n${probe}`], { timeoutMs: 30_000 });
  assert.equal(code, 0, stderr);
  const report = JSON.parse(stdout) as { code: string; text: string; fetched: boolean };
  assert.equal(report.code, 'S2SP_ERR_CLI_PACKAGE_MISSING');
  assert.match(report.text, /npm install '@duckdb\/node-api@~1\.5\.6-r\.1'/);
  assert.equal(report.fetched, false);
});
