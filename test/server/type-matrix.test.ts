/**
 * The type matrix (issue 11): one table holding every Arrow type a query
 * engine produces, served through a resource tool (S2SPServer and the real
 * MCP SDK client) and through `s2sp serve file.arrow` (the CLI over stdio).
 * Both ways, exactly:
 *
 *   - the abstract and the JSON body are byte-for-byte the JSON text the
 *     README's "JSON encoding of Arrow types" prescribes, written out by hand
 *     in test/support/type-matrix.ts;
 *   - the Arrow body (plain and LZ4, all rows, scattered rows, a gathered
 *     projection) equals the source frame in nodejs-polars, an independent
 *     reader; the few types polars cannot read (Decimal256, a negative scale,
 *     intervals, unions) are compared cell by cell through arrow-js;
 *   - our consumer gets the same rows from either wire format, int64 digits
 *     beyond 2^53 included.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Type } from 'apache-arrow';
import { DataType, tableFromIPC, tableToIPC, type Vector } from 'apache-arrow';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { ipcCodecAvailable } from '../../src/ipc/compression/codec-registry.js';
import { registerArrowDecoder } from '../support/arrow-streams.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { parseJsonExact } from '../../src/json/exact-json.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { GATHERED_TYPES, MATRIX, MATRIX_ROWS, expectedRowText, matrixTable, type MatrixColumn } from '../support/type-matrix.js';
import { CLI_PATH as CLI } from '../support/cli-process.js';

import { pl, polarsSkip, type DataFrame } from '../support/polars.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const ARROW_LZ4 = `${ARROW}; codecs="lz4"`;
const ALL_IDS = Array.from({ length: MATRIX_ROWS }, (_, i) => i);
const NAMES = MATRIX.map((c) => c.name);
const FLAT = MATRIX.filter((c) => GATHERED_TYPES.has(c.data.typeId as Type));
const POLARS_READABLE = MATRIX.filter((c) => c.polars !== 'unreadable').map((c) => c.name);
const FLAT_READABLE = FLAT.filter((c) => c.polars !== 'unreadable').map((c) => c.name);

/** Calls the matrix tool and returns the envelope's text. */
type CallMatrix = (args: Record<string, unknown>) => Promise<string>;

function textOf(result: unknown): string {
  const r = result as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  return (r.content[0] as { text: string }).text;
}

/** `[...]` of the expected row texts for `ids` over `columns`. */
function rowsText(ids: readonly number[], columns: readonly MatrixColumn[] = MATRIX): string {
  return `[${ids.map((i) => expectedRowText(i, columns)).join(',')}]`;
}

async function post(url: string, request: object, accept?: string): Promise<{ contentType: string; bytes: Buffer }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (accept) headers.accept = accept;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request) });
  const bytes = Buffer.from(await response.arrayBuffer());
  assert.equal(response.status, 200, bytes.toString('utf8', 0, 300));
  return { contentType: response.headers.get('content-type') ?? '', bytes };
}

/** A fresh resource_url (tokens are single use). */
async function freshUrl(call: CallMatrix): Promise<string> {
  const envelope = parseJsonExact(await call({ abstract_domains: 'int8' })) as { resource_url: string };
  return envelope.resource_url;
}

function columnsNamed(names: readonly string[]): MatrixColumn[] {
  return names.map((name) => MATRIX.find((c) => c.name === name)!);
}

/** The source rows `ids` of `columns` as a polars frame, selected by polars itself. */
function sourceFrame(columns: readonly MatrixColumn[], ids: readonly number[]): DataFrame {
  const all = pl!.readIPCStream(Buffer.from(tableToIPC(matrixTable(columns), 'stream')));
  const decoded = all.withColumns(...columns.filter((c) => c.polars === 'cast-utf8').map((c) => pl!.col(c.name).cast(pl!.Utf8)));
  return decoded
    .withColumn(pl!.Series('_source_index', ALL_IDS, pl!.Int32))
    .filter(pl!.col('_source_index').isIn([...ids]))
    .drop('_source_index');
}

/** A cell as comparable data: arrow-js `get` results with typed arrays and bigints spelled out. */
function plain(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : value;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number | bigint>, plain);
  return value;
}

function cells(vector: Vector, ids: readonly number[]): unknown[] {
  return ids.map((i) => plain(vector.get(i)));
}

/**
 * The Arrow body equals the source: in polars when it can read every column
 * (it refuses a whole stream over one type it lacks), otherwise the types
 * polars cannot read are compared cell by cell through arrow-js.
 */
function assertArrowMatchesSource(bytes: Buffer, names: readonly string[], ids: readonly number[], label: string): void {
  const columns = columnsNamed(names);
  const decoded = tableFromIPC(bytes);
  assert.deepEqual(
    decoded.schema.fields.map((f) => f.name),
    ['_row_id', ...names],
    `${label}: columns`,
  );
  assert.deepEqual(Array.from(decoded.getChild('_row_id')!), [...ids], `${label}: _row_id`);
  const source = matrixTable();
  for (const column of columns) {
    const expectedType = DataType.isDictionary(column.data.type) ? column.data.type.dictionary : column.data.type;
    assert.equal(String(decoded.getChild(column.name)!.type), String(expectedType), `${label}: type of ${column.name}`);
    if (column.polars === 'unreadable') {
      assert.deepEqual(
        cells(
          decoded.getChild(column.name)!,
          ids.map((_, k) => k),
        ),
        cells(source.getChild(column.name)!, ids),
        `${label}: ${column.name}`,
      );
    }
  }
  if (columns.some((c) => c.polars === 'unreadable')) return;
  let frame: DataFrame;
  try {
    frame = pl!.readIPCStream(bytes);
  } catch (error) {
    throw new Error(`${label}: polars cannot read the body: ${(error as Error).message}`, { cause: error });
  }
  const response = frame.select(...names);
  const expected = sourceFrame(columns, ids);
  assert.equal(response.height, ids.length, label);
  assert.ok(response.frameEqual(expected, true), `${label}: polars frames differ\n${response}\n${expected}`);
}

function assertJsonBody(bytes: Buffer, ids: readonly number[], columns: readonly MatrixColumn[], label: string): void {
  const names = ['_row_id', ...columns.map((c) => c.name)];
  assert.equal(bytes.toString('utf8'), `{"body":${rowsText(ids, columns)},"total_rows":${ids.length},"columns_returned":${JSON.stringify(names)}}`, label);
}

/** Everything the matrix must survive, through one way of calling the tool. */
async function checkServed(call: CallMatrix, label: string): Promise<void> {
  // The abstract: every column, every row, as the encoding writes it.
  const envelopeText = await call({ abstract_domains: NAMES.join(',') });
  assert.ok(envelopeText.includes(`"abstract":${rowsText(ALL_IDS)}`), `${label}: abstract\n${envelopeText.slice(0, 2000)}`);
  const { resource_url: url } = parseJsonExact(envelopeText) as { resource_url: string };

  // The JSON body, whole and in part.
  assertJsonBody((await post(url, {})).bytes, ALL_IDS, MATRIX, `${label}: JSON body`);
  const someColumns = columnsNamed(['uint64', 'struct', 'ts_s_new_york', 'decimal256', 'dense_union', 'map_utf8_int32']);
  assertJsonBody(
    (await post(await freshUrl(call), { row_ids: [4, 0, 3, 0], columns: someColumns.map((c) => c.name) })).bytes,
    [0, 3, 4],
    someColumns,
    `${label}: JSON rows 0, 3, 4`,
  );
  assertJsonBody(
    (await post(await freshUrl(call), { row_ids: [1, 3, 5], columns: FLAT.map((c) => c.name) })).bytes,
    [1, 3, 5],
    FLAT,
    `${label}: JSON gathered`,
  );

  // Sync mode: the body rides in the envelope, in the same encoding.
  const syncDomains = ['int64', 'float64'];
  const bodyColumns = MATRIX.filter((c) => !syncDomains.includes(c.name));
  const syncText = await call({ abstract_domains: syncDomains.join(','), mode: 'sync' });
  assert.ok(syncText.includes(`"abstract":${rowsText(ALL_IDS, columnsNamed(syncDomains))}`), `${label}: sync abstract`);
  assert.ok(syncText.endsWith(`"body":${rowsText(ALL_IDS, bodyColumns)}}`), `${label}: sync body`);

  const accepts = ipcCodecAvailable('lz4') ? [ARROW, ARROW_LZ4] : [ARROW];
  // arrow-js decodes LZ4 bodies only with a decoder registered.
  if (ipcCodecAvailable('lz4')) registerArrowDecoder('lz4');
  for (const accept of accepts) {
    const all = await post(await freshUrl(call), {}, accept);
    assert.equal(all.contentType, accept);
    assertArrowMatchesSource(all.bytes, NAMES, ALL_IDS, `${label}: ${accept}, all rows`);
    const scattered = await post(await freshUrl(call), { row_ids: [4, 1] }, accept);
    assertArrowMatchesSource(scattered.bytes, NAMES, [1, 4], `${label}: ${accept}, all columns, rows 1, 4`);
    for (const names of [POLARS_READABLE, FLAT_READABLE]) {
      const whole = await post(await freshUrl(call), { columns: names }, accept);
      assertArrowMatchesSource(whole.bytes, names, ALL_IDS, `${label}: ${accept}, ${names.length} columns`);
      // Scattered rows: slices of the cached batches, or (flat columns only) a gather.
      const some = await post(await freshUrl(call), { row_ids: [5, 1, 3], columns: names }, accept);
      assertArrowMatchesSource(some.bytes, names, [1, 3, 5], `${label}: ${accept}, ${names.length} columns, rows 1, 3, 5`);
    }
    const gathered = await post(await freshUrl(call), { row_ids: [0, 2, 4], columns: FLAT.map((c) => c.name) }, accept);
    assertArrowMatchesSource(
      gathered.bytes,
      FLAT.map((c) => c.name),
      [0, 2, 4],
      `${label}: ${accept}, gathered`,
    );
  }

  // Our consumer reads either format into the same rows, exact.
  const expectedRows = parseJsonExact(rowsText(ALL_IDS));
  for (const format of ['json', 'arrow'] as const) {
    const fetched = await fetchBody(await freshUrl(call), { format });
    assert.equal(fetched.format, format);
    assert.deepEqual(fetched.rows(), expectedRows, `${label}: consumer rows over ${format}`);
  }
}

test('type matrix through a resource tool: abstract, JSON body and Arrow body exact', { skip: polarsSkip }, async (t: TestContext) => {
  const server = new S2SPServer({ name: 'matrix' });
  server.resourceTool('matrix', { description: 'every Arrow type' }, () => matrixTable());
  await server.listen();
  const client = await connectInMemory(server, t);
  await checkServed(async (args) => textOf(await client.callTool({ name: 'matrix', arguments: args })), 'resource tool');
  // Plain MCP: the table's own rows in the same encoding, no _row_id.
  const plainText = textOf(await client.callTool({ name: 'matrix', arguments: {} }));
  assert.equal(plainText, rowsText(ALL_IDS).replace(/\{"_row_id":\d+,/g, '{'));
});

test('type matrix through `s2sp serve file.arrow`: abstract, JSON body and Arrow body exact', { skip: polarsSkip }, async (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-matrix-'));
  const file = join(dir, 'matrix.arrow');
  writeFileSync(file, tableToIPC(matrixTable(), 'file'));
  const client = new Client({ name: 'matrix-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', file, '--tool', 'matrix'], stderr: 'ignore' }));
  t.after(() => client.close());
  await checkServed(async (args) => textOf(await client.callTool({ name: 'matrix', arguments: args })), 's2sp serve');
});
