/**
 * examples/duckdb-server, built as a user's code is (dist/examples, importing
 * 's2sp' by name): the server starts on 127.0.0.1 over flights-3m.parquet,
 * its query results reach the data plane as Arrow with DuckDB's types, its
 * SQL cannot read other files, and the agent script runs end to end in both
 * modes with figures that DuckDB, asked directly, confirms.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Type, tableFromIPC } from 'apache-arrow';

const EXAMPLE = fileURLToPath(new URL('../../examples/duckdb-server/', import.meta.url));
const SERVER = join(EXAMPLE, 'server.js');
const AGENT = join(EXAMPLE, 'agent.js');
const FLIGHTS = join(dirname(createRequire(import.meta.url).resolve('vega-datasets')), '..', 'data', 'flights-3m.parquet');

let server: ChildProcess | undefined;
let mcpUrl = '';

before(async () => {
  assert.ok(existsSync(SERVER), `${SERVER} is missing: npm run build compiles examples/ too`);
  const child = spawn(process.execPath, [SERVER, FLIGHTS], { stdio: ['ignore', 'pipe', 'pipe'] });
  server = child;
  mcpUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
      const match = /MCP at (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => reject(new Error(`the example server exited (${code}): ${output}`)));
  });
});

after(() => {
  server?.kill();
});

function runAgent(mode: 'async' | 'sync'): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGENT, mcpUrl, '--mode', mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`agent exited ${code}: ${stderr}`))));
  });
}

async function mcpClient(t: import('node:test').TestContext): Promise<Client> {
  const client = new Client({ name: 'example-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  t.after(() => client.close());
  return client;
}

/** What DuckDB itself says about the flights the agent summarizes. */
async function truth(): Promise<{ n: number; distance: number; delay: number }> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const sql = `SELECT count(*)::INTEGER AS n, avg(distance) AS distance, avg(delay) AS delay FROM read_parquet('${FLIGHTS}') WHERE delay >= 600 AND origin = 'PHX'`;
  const [row] = await (await connection.run(sql)).getRowObjectsJS();
  connection.closeSync();
  db.closeSync();
  return { n: row.n as number, distance: row.distance as number, delay: row.delay as number };
}

test('a query result reaches the data plane as Arrow with DuckDB types, no rows in between', async (t) => {
  const client = await mcpClient(t);
  const result = (await client.callTool({
    name: 'query',
    arguments: { sql: 'SELECT date, delay, distance, origin FROM data WHERE delay >= 600 LIMIT 50', abstract_domains: 'origin' },
  })) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const envelope = JSON.parse((result.content[0] as { text: string }).text);
  assert.equal(envelope.total_rows, 50);
  const response = await fetch(envelope.resource_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/vnd.apache.arrow.stream' },
    body: '{}',
  });
  assert.equal(response.status, 200);
  const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
  const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, f.type.typeId]));
  assert.deepEqual(types, { _row_id: Type.Int, date: Type.Timestamp, delay: Type.Int, distance: Type.Int, origin: Type.Utf8 });
  assert.equal(table.numRows, 50);
  assert.ok((table.getChild('delay')?.get(0) as bigint) >= 600n);
});

test("the agent's SQL reads the one file and nothing else", async (t) => {
  const client = await mcpClient(t);
  const result = (await client.callTool({
    name: 'query',
    arguments: { sql: "SELECT * FROM read_csv('/etc/passwd')", abstract_domains: 'x' },
  })) as CallToolResult;
  assert.equal(result.isError, true);
});

for (const mode of ['async', 'sync'] as const) {
  test(`the agent script (AI SDK + withS2SP), ${mode}: summarize gets every column of the chosen flights, the model no body`, async () => {
    const [report, expected] = await Promise.all([runAgent(mode), truth()]);
    assert.equal(report.chosen, expected.n);
    assert.equal(report.summary.rows, expected.n);
    assert.equal(report.summary.source, mode === 'async' ? 'resource_url' : 'body_data');
    // distance was never in the abstract: it came from the body, and matches DuckDB's own answer.
    assert.ok(Math.abs(report.summary.columns.distance.mean - expected.distance) < 1e-9, JSON.stringify(report.summary));
    assert.ok(Math.abs(report.summary.columns.delay.mean - expected.delay) < 1e-9);
    assert.equal(report.modelSawBody, false);
    assert.equal(report.modelSawHandle, mode === 'sync');
  });
}
