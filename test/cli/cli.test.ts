/**
 * The built CLI, end to end: `s2sp serve` over stdio and over HTTP through the
 * SDK's own clients, the data plane behind its resource_url over real HTTP,
 * `s2sp demo` in both modes (its join checked against counts made here from
 * the raw files), and the CLI's errors.
 */
import { test } from 'node:test';
import { Table, Utf8, tableToIPC, vectorFromArray } from 'apache-arrow';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI_PATH as CLI, runCli, startCliServer } from '../support/cli-process.js';
import { expectConsumed } from '../support/expect-consumed.js';
import { decodePng } from '../support/png.js';
import { defaultDatasetPath, seismicRegionsPath } from '../../src/cli/default-dataset.js';
import { fileOf, patchFirstBatch } from '../support/corrupt-ipc.js';

interface Envelope {
  total_rows: number;
  columns: string[];
  resource_url: string;
  abstract: Array<Record<string, unknown>>;
  abstract_truncated?: boolean;
}

function envelopeOf(result: CallToolResult): Envelope {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return JSON.parse((result.content[0] as { text: string }).text);
}

function post(url: string, body: string, contentType = 'application/json'): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
}

test('serve over stdio: read_table lists S2SP params; the resource_url answers once, 400 keeps it', async (t) => {
  const client = new Client({ name: 'cli-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve'], stderr: 'ignore' }));
  t.after(() => client.close());

  const { tools } = await client.listTools();
  const readTable = tools.find((tool) => tool.name === 'read_table');
  assert.ok(readTable);
  assert.ok(readTable.inputSchema.properties?.abstract_domains);
  assert.ok(readTable.inputSchema.properties?.mode);
  assert.match(readTable.description ?? '', /1707 rows/);
  assert.match(readTable.description ?? '', /mag, place, time/);

  const envelope = envelopeOf((await client.callTool({ name: 'read_table', arguments: { abstract_domains: 'mag,place,time' } })) as CallToolResult);
  assert.equal(envelope.total_rows, 1707);
  assert.equal(envelope.columns.length, 30);
  // 1,707 rows are over the default cap of 1,000 abstract rows (SPEC 2.4).
  assert.equal(envelope.abstract.length, 1000);
  assert.equal(envelope.abstract_truncated, true);

  const bad = await post(envelope.resource_url, '{"row_ids":[0,2],"columns":["nope"]}');
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'S2SP_ERR_REQUEST_COLUMNS_INVALID');

  const ok = await post(envelope.resource_url, '{"row_ids":[0,2],"columns":["mag"]}');
  assert.equal(ok.status, 200);
  const body = (await ok.json()) as { body: Array<{ _row_id: number; mag: number }>; total_rows: number; columns_returned: string[] };
  assert.deepEqual(Object.keys(body), ['body', 'total_rows', 'columns_returned']);
  assert.deepEqual(
    body.body.map((row) => Object.keys(row)),
    [
      ['_row_id', 'mag'],
      ['_row_id', 'mag'],
    ],
  );
  assert.deepEqual(
    body.body.map((row) => row._row_id),
    [0, 2],
  );
  assert.equal(body.body[0].mag, envelope.abstract[0].mag);
  assert.equal(body.total_rows, 2);
  assert.deepEqual(body.columns_returned, ['_row_id', 'mag']);

  await expectConsumed(envelope.resource_url);
});

test('serve over Streamable HTTP: MCP at /mcp and the data plane on one port', async (t) => {
  const { url: mcpUrl } = await startCliServer(t, ['serve', '--transport', 'http', '--port', '0']);
  const client = new Client({ name: 'cli-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['read_table'],
  );
  const envelope = envelopeOf((await client.callTool({ name: 'read_table', arguments: { abstract_domains: '["mag"]' } })) as CallToolResult);
  assert.equal(new URL(envelope.resource_url).origin, new URL(mcpUrl).origin);
  const response = await post(envelope.resource_url, '');
  assert.equal(response.status, 200);
  assert.equal(((await response.json()) as { total_rows: number }).total_rows, 1707);
});

/**
 * The demo's join answer computed here from the raw files, without the code
 * under test: each earthquake of the GeoJSON counted in the region of the CSV
 * whose box holds it (min inclusive, max exclusive), with its largest
 * magnitude; ordered as the demo's SQL orders them.
 */
function expectedQuakesPerRegion(): Array<{ region: string; quakes: number; maxMag: number }> {
  const [header, ...lines] = readFileSync(seismicRegionsPath(), 'utf8').trim().split('\n');
  const at = Object.fromEntries(header.split(',').map((name, i) => [name, i]));
  const regions = lines.map((line) => line.split(','));
  const geo = JSON.parse(readFileSync(defaultDatasetPath(), 'utf8')) as {
    features: Array<{ properties: { mag: number }; geometry: { coordinates: number[] } }>;
  };
  const byRegion = new Map<string, { region: string; quakes: number; maxMag: number }>();
  for (const { properties, geometry } of geo.features) {
    const [lon, lat] = geometry.coordinates;
    for (const r of regions) {
      if (lon >= Number(r[at.min_lon]) && lon < Number(r[at.max_lon]) && lat >= Number(r[at.min_lat]) && lat < Number(r[at.max_lat])) {
        const entry = byRegion.get(r[at.region]) ?? { region: r[at.region], quakes: 0, maxMag: -Infinity };
        entry.quakes += 1;
        entry.maxMag = Math.max(entry.maxMag, properties.mag);
        byRegion.set(r[at.region], entry);
      }
    }
  }
  return [...byRegion.values()].sort((a, b) => b.quakes - a.quakes || (a.region < b.region ? -1 : 1));
}

// Each run prints both formats' tokens; the runs drive the agent through each way of passing abstract_data.
for (const [mode, format] of [
  ['async', 'columns'],
  ['sync', 'columns'],
  ['sync', 'rows'],
] as const) {
  test(`demo --mode ${mode} --abstract-format ${format} runs the pipeline and reports tokens`, async () => {
    const chart = join(mkdtempSync(join(tmpdir(), 's2sp-demo-')), 'chart.png');
    const { code, stdout, stderr } = await runCli(['demo', '--mode', mode, '--abstract-format', format, '--chart', chart]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /\[5\]/);
    assert.match(stdout, /128 rows selected/);
    assert.match(stdout, /the consumer merged 128 rows x 30 columns/);
    assert.match(stdout, mode === 'async' ? /over the data plane/ : /by the agent SDK/);
    const total = /\| total \| ([\d,]+) \| ([\d,]+) \([\d.]+%\) \| ([\d,]+) \([\d.]+%\) \|/.exec(stdout);
    assert.ok(total, stdout);
    const [plain, rows, columns] = [total[1], total[2], total[3]].map((n) => Number(n.replace(/,/g, '')));
    assert.ok(rows < plain, `${rows} < ${plain}`);
    // The compact format's goal (issue 12): at most 10% of what plain MCP makes the LLM read.
    assert.ok(columns <= plain / 10, `columns ${columns} <= 10% of ${plain}`);
    assert.doesNotMatch(stdout, /s2sp\/data\/[A-Za-z0-9_-]{43}/, 'no full token printed');
    // The consumer's chart, saved where --chart said and printed.
    assert.ok(stdout.includes(`saved to ${chart}`), stdout);
    const png = decodePng(readFileSync(chart));
    assert.ok(png.width > 800 && png.height > 300, `${png.width}x${png.height}: histogram and map`);

    // [6] joins the earthquakes with the second server's regions: the answer's rows, as printed, are the counts made here.
    const joinPart = stdout.slice(stdout.indexOf('[6]'), stdout.indexOf('[7]'));
    assert.match(joinPart, /Agent calls query_rows\(tables=\{quakes: .*, regions: .*\}/);
    const answer = [...joinPart.matchAll(/^ {6}\| ([^|]+?) \| (\d+) \| ([\d.]+) \|$/gm)].map((m) => ({
      region: m[1],
      quakes: Number(m[2]),
      maxMag: Number(m[3]),
    }));
    const expected = expectedQuakesPerRegion();
    assert.ok(expected.length >= 10, `${expected.length} regions with earthquakes`);
    assert.deepEqual(answer, expected);
    assert.match(joinPart, new RegExp(`answered ${expected.length} rows`));
    // [7]: the whole pipeline's tokens, both tables' worth for plain MCP.
    const pipeline = /\| pipeline total \| ([\d,]+) \| ([\d,]+) \([\d.]+%\) \| ([\d,]+) \([\d.]+%\) \|/.exec(stdout);
    assert.ok(pipeline, stdout);
    const [pipelinePlain, pipelineRows, pipelineColumns] = [pipeline[1], pipeline[2], pipeline[3]].map((n) => Number(n.replace(/,/g, '')));
    assert.ok(pipelinePlain > plain, `the pipeline's plain MCP ${pipelinePlain} adds the regions table to ${plain}`);
    assert.ok(pipelineRows > rows && pipelineColumns > columns, 'the join step costs the LLM some tokens with S2SP too');
    assert.ok(pipelineColumns <= pipelinePlain / 5, `pipeline columns ${pipelineColumns} <= 20% of ${pipelinePlain}`);
  });
}

test('serve reads a JSON file given as FILE', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-cli-'));
  const file = join(dir, 'rows.json');
  writeFileSync(
    file,
    JSON.stringify([
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
    ]),
  );
  const client = new Client({ name: 'cli-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', file, '--tool', 'rows'], stderr: 'ignore' }));
  t.after(() => client.close());
  const envelope = envelopeOf((await client.callTool({ name: 'rows', arguments: { abstract_domains: 'a', mode: 'sync' } })) as CallToolResult);
  assert.deepEqual(envelope.abstract, [
    { _row_id: 0, a: 1 },
    { _row_id: 1, a: 2 },
  ]);
  // Plain MCP (no abstract_domains): the rows themselves, no _row_id (SPEC 2.1).
  const plain = (await client.callTool({ name: 'rows', arguments: {} })) as CallToolResult;
  assert.deepEqual(JSON.parse((plain.content[0] as { text: string }).text), [
    { a: 1, b: 'x' },
    { a: 2, b: 'y' },
  ]);
});

test('serve file.json keeps int64 digits beyond 2^53 and whole floats as floats, in the abstract and the body', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-cli-'));
  const file = join(dir, 'ids.json');
  writeFileSync(file, '[{"id": 9007199254740993, "price": 2.0, "n": 1}, {"id": 18446744073709551615, "price": 3.5, "n": 2}]');
  const client = new Client({ name: 'cli-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', file, '--tool', 'ids'], stderr: 'ignore' }));
  t.after(() => client.close());
  const result = (await client.callTool({ name: 'ids', arguments: { abstract_domains: 'id,price' } })) as CallToolResult;
  const text = (result.content[0] as { text: string }).text;
  assert.ok(text.includes('"abstract":[{"_row_id":0,"id":9007199254740993,"price":2.0},{"_row_id":1,"id":18446744073709551615,"price":3.5}]'), text);
  const url = /"resource_url":"([^"]+)"/.exec(text)![1];
  const body = await (await post(url, '{"columns":["id","price","n"]}')).text();
  assert.equal(
    body,
    '{"body":[{"_row_id":0,"id":9007199254740993,"price":2.0,"n":1},{"_row_id":1,"id":18446744073709551615,"price":3.5,"n":2}],' +
      '"total_rows":2,"columns_returned":["_row_id","id","price","n"]}',
  );
});

const CLI_ERRORS: Array<[string, string[], number, RegExp]> = [
  ['unknown command', ['frobnicate'], 2, /unknown command/],
  ['bad transport', ['serve', '--transport', 'carrier-pigeon'], 2, /--transport must be one of/],
  ['bad port', ['serve', '--transport', 'http', '--port', 'x'], 2, /--port must be an integer/],
  ['data port over http', ['serve', '--transport', 'http', '--data-port', '1'], 2, /--data-port is for --transport stdio/],
  ['unknown flag', ['serve', '--nope'], 2, /Unknown option/],
  ['bad mode', ['demo', '--mode', 'later'], 2, /--mode must be one of/],
  ['bad abstract format', ['demo', '--abstract-format', 'csv'], 2, /--abstract-format must be one of/],
  ['missing file', ['serve', '/nonexistent/table.json'], 1, /S2SP_ERR_INPUT_UNREADABLE/],
  [
    'bad store',
    ['serve', '--store', 'postgres://db'],
    2,
    /--store \(or S2SP_STORE\): option store must be "memory", or a redis:\/\/, rediss:\/\/, redis-cluster:\/\/ or rediss-cluster:\/\/ URL/,
  ],
  [
    'cluster store without seeds',
    ['serve', '--store', 'redis-cluster://app:secret@'],
    2,
    /--store \(or S2SP_STORE\): option store must be .*got "redis-cluster:\/\/"/,
  ],
  ['bad lease timeout', ['serve', '--lease-timeout', '0'], 2, /--lease-timeout must be a positive number of seconds/],
  ['bad store timeout', ['serve', '--store-timeout', '0'], 2, /--store-timeout must be a positive number of seconds/],
  ['bad prepare', ['serve', '--prepare', 'json,gzip'], 2, /--prepare must be auto, off or a list of json, lz4, zstd/],
];

for (const [label, args, exitCode, message] of CLI_ERRORS) {
  test(`cli error: ${label}`, async () => {
    const { code, stderr } = await runCli(args, { timeoutMs: 20_000 });
    assert.equal(code, exitCode, stderr);
    assert.match(stderr, message);
  });
}

test('cli error: S2SP_STORE names the store when --store is absent', async () => {
  const { code, stderr } = await runCli(['serve'], { timeoutMs: 20_000, env: { ...process.env, S2SP_STORE: 'mongodb://x' } });
  assert.equal(code, 2, stderr);
  assert.match(stderr, /--store \(or S2SP_STORE\)/);
});

test('s2sp serve: an Arrow file whose batch claims 1,000,000,000 rows over buffers for 4,242 is refused at start, without a memory blow-up', async () => {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-lying-'));
  const rows = 4242;
  const table = new Table({
    n: vectorFromArray(Int32Array.from({ length: rows }, (_, i) => i)),
    s: vectorFromArray(
      Array.from({ length: rows }, (_, i) => `v${i}`),
      new Utf8(),
    ),
  });
  const file = join(dir, 'lying.arrow');
  writeFileSync(file, fileOf(patchFirstBatch(tableToIPC(table, 'stream'), { length: 1_000_000_000, nodeLength: 1_000_000_000 })));
  // The child reports its own peak RSS as it exits.
  const probe = join(dir, 'peak-rss.cjs');
  writeFileSync(probe, "process.on('exit', () => process.stderr.write(`\\npeak-rss ${process.resourceUsage().maxRSS * 1024}\\n`));\n");
  const { code, stderr } = await runCli(['serve', file], { timeoutMs: 60_000, env: { ...process.env, NODE_OPTIONS: `--require ${probe}` } });
  assert.equal(code, 1, stderr);
  assert.match(stderr, /S2SP_ERR_INPUT_UNREADABLE/);
  const peak = Number(/peak-rss (\d+)/.exec(stderr)?.[1]);
  assert.ok(peak < 512 * 2 ** 20, `s2sp serve peaked at ${(peak / 2 ** 20).toFixed(0)} MiB`);
});
