/**
 * query_rows keeps every value exactly, both ways: the type matrix's columns
 * go through a resource tool, into DuckDB and out as query_rows' result body,
 * and come back with the JSON text the matrix writes by hand and the Arrow
 * type README's "query_rows" › "Types" names; DuckDB's own types (narrow
 * decimals, HUGEINT, TIMESTAMPTZ, ...) arrive as hand-written JSON text; a
 * type the engine cannot hold is refused naming its column.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { tableFromIPC, type DataType } from 'apache-arrow';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { ERROR_CODE_META_KEY } from '../../src/control/tool-results.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { MATRIX, MATRIX_ROWS, expectedRowText, matrixTable, type MatrixColumn } from '../support/type-matrix.js';

/** The matrix columns query_rows takes, and the Arrow type each comes back with (README's table, written out here). */
const TAKEN: Record<string, (type: DataType) => string> = {
  bool: String,
  int8: String,
  int16: String,
  int32: String,
  int64: String,
  uint8: String,
  uint16: String,
  uint32: String,
  uint64: String,
  float32: String,
  float64: String,
  // Decimal32 and Decimal64 come back as Decimal128 of the same precision and scale.
  decimal32: (type) => String(type).replace(/^Decimal32/, 'Decimal'),
  decimal64: (type) => String(type).replace(/^Decimal64/, 'Decimal'),
  decimal128: String,
  date32: String,
  ts_s: String,
  ts_ms: String,
  ts_us_utc: String,
  ts_ns: String,
  time64_us: String,
  time64_ns: String,
  utf8: String,
  large_utf8: () => 'Utf8',
  utf8_view: () => 'Utf8',
  binary: String,
  large_binary: () => 'Binary',
  binary_view: () => 'Binary',
  fixed_size_binary: () => 'Binary',
  // Cached bodies hold dictionaries decoded.
  dictionary_utf8: () => 'Utf8',
};

const TAKEN_COLUMNS = MATRIX.filter((column) => column.name in TAKEN);
const REFUSED_COLUMNS = MATRIX.filter((column) => !(column.name in TAKEN));

interface Setup {
  source: Client;
  consumer: Client;
  /** A column of the served matrix, for the source's abstract. */
  first: string;
}

async function setup(t: TestContext, columns: readonly MatrixColumn[]): Promise<Setup> {
  const resource = new S2SPServer({ name: 'matrix' });
  resource.resourceTool('matrix', { description: 'every type' }, () => matrixTable(columns));
  await resource.listen();
  const consumer = new S2SPServer({ name: 'analyst' });
  consumer.queryTool();
  await consumer.listen();
  return { source: await connectInMemory(resource, t), consumer: await connectInMemory(consumer, t), first: columns[0].name };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function resourceUrlOf(result: CallToolResult): string {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return (JSON.parse((result.content[0] as { text: string }).text) as { resource_url: string }).resource_url;
}

/** A fresh resource_url of the served matrix. */
async function matrixUrl(s: Setup): Promise<string> {
  return resourceUrlOf(await call(s.source, 'matrix', { abstract_domains: s.first }));
}

/** query_rows over a fresh resource_url of the matrix, `shown` in the abstract; the result's resource_url. */
async function query(s: Setup, sql: string, shown: string): Promise<string> {
  return resourceUrlOf(await call(s.consumer, 'query_rows', { sql, tables: { m: await matrixUrl(s) }, abstract_domains: shown }));
}

async function post(url: string, accept: string): Promise<Buffer> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: '{}' });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

test('every matrix type the engine takes comes back with the same JSON text, in the type README names', async (t) => {
  const s = await setup(t, TAKEN_COLUMNS);
  const sql = 'SELECT * FROM m ORDER BY _row_id';
  const json = (await post(await query(s, sql, 'int8'), 'application/json')).toString('utf8');
  const expected = `[${Array.from({ length: MATRIX_ROWS }, (_, i) => expectedRowText(i, TAKEN_COLUMNS)).join(',')}]`;
  assert.ok(json.startsWith(`{"body":${expected}`), `the body differs:\n${json.slice(0, 3000)}\nexpected\n${expected}`);
  const arrow = tableFromIPC(await post(await query(s, sql, 'int8'), 'application/vnd.apache.arrow.stream'));
  for (const column of TAKEN_COLUMNS) {
    const field = arrow.schema.fields.find((f) => f.name === column.name);
    assert.ok(field !== undefined, column.name);
    assert.equal(String(field.type), TAKEN[column.name](column.data.type), column.name);
  }
});

test('a type the engine cannot hold exactly is refused, naming its table and column', async (t) => {
  const s = await setup(t, REFUSED_COLUMNS);
  for (const column of REFUSED_COLUMNS) {
    const result = await call(s.consumer, 'query_rows', {
      sql: `SELECT "${column.name}" FROM m`,
      tables: { m: await matrixUrl(s) },
      abstract_domains: column.name,
    });
    assert.equal(result.isError, true, `${column.name} was taken`);
    assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_QUERY_TYPE_UNSUPPORTED', column.name);
    assert.match((result.content[0] as { text: string }).text, /of the table "m"/, column.name);
  }
});

test("DuckDB's own types arrive exactly: narrow decimals, HUGEINT as Decimal(38, 0), TIMESTAMPTZ in UTC, booleans, NULL", async (t) => {
  const s = await setup(
    t,
    TAKEN_COLUMNS.filter((c) => c.name === 'int8'),
  );
  const sql = `SELECT
      CAST(-12.34 AS DECIMAL(4, 2)) AS d2,
      CAST(1234567.891 AS DECIMAL(10, 3)) AS d8,
      CAST(-99999999999999999999999999999999999999 AS HUGEINT) AS h,
      sum(int8) AS total,
      DATE '2024-02-29' AS day,
      TIME '12:34:56.789012' AS tod,
      TIMESTAMP '2024-02-29 12:34:56.789012' AS ts,
      TIMESTAMPTZ '2024-02-29 12:34:56.789012+00' AS tstz,
      CAST(NULL AS INTEGER) AS missing,
      NULL AS nothing,
      count(*) > 5 AS flag
    FROM m`;
  const json = (await post(await query(s, sql, 'd2'), 'application/json')).toString('utf8');
  const row =
    '{"_row_id":0,"d2":"-12.34","d8":"1234567.891","h":"-99999999999999999999999999999999999999","total":"-1",' +
    '"day":"2024-02-29","tod":"12:34:56.789012","ts":"2024-02-29T12:34:56.789012","tstz":"2024-02-29T12:34:56.789012+00:00",' +
    '"missing":null,"nothing":null,"flag":true}';
  assert.ok(json.startsWith(`{"body":[${row}]`), json);
  // Beyond Decimal(38, 0): refused, never rounded.
  const tooWide = await call(s.consumer, 'query_rows', {
    sql: 'SELECT CAST(170141183460469231731687303715884105727 AS HUGEINT) AS h FROM m',
    tables: { m: await matrixUrl(s) },
    abstract_domains: 'h',
  });
  assert.equal(tooWide._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_QUERY_TYPE_UNSUPPORTED');
});

test('results longer than a record batch and a DuckDB chunk keep every value and null in place', async (t) => {
  const s = await setup(
    t,
    TAKEN_COLUMNS.filter((c) => c.name === 'int8'),
  );
  // 150,001 rows: three record batches, the last of one row; nulls and booleans off the byte grid.
  const sql = `SELECT r.range AS i, CASE WHEN r.range % 3 = 0 THEN NULL ELSE r.range / 2 END AS half,
      r.range % 7 = 0 AS seventh, CASE WHEN r.range % 5 = 0 THEN NULL ELSE 'v' || r.range END AS label
    FROM range(150001) r, (SELECT 1 FROM m LIMIT 1) one ORDER BY i`;
  const table = tableFromIPC(await post(await query(s, sql, 'i'), 'application/vnd.apache.arrow.stream'));
  assert.equal(table.numRows, 150_001);
  for (const i of [0, 1, 2, 3, 5, 7, 65_535, 65_536, 65_537, 131_071, 131_072, 150_000]) {
    const row = table.get(i)!.toJSON() as Record<string, unknown>;
    assert.equal(row.i, BigInt(i), `i at ${i}`);
    assert.equal(row.half, i % 3 === 0 ? null : i * 0.5, `half at ${i}`);
    assert.equal(row.seventh, i % 7 === 0, `seventh at ${i}`);
    assert.equal(row.label, i % 5 === 0 ? null : `v${i}`, `label at ${i}`);
  }
  assert.equal(table.getChild('half')!.nullCount, Math.floor(150_000 / 3) + 1);
});
