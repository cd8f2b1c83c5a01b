/**
 * Hardening of the data plane: single use under concurrency, dropped
 * transfers that lose nothing, and hostile input that never consumes a token
 * nor takes the server down.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import Fastify from 'fastify';
import type { Table } from 'apache-arrow';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { httpRequest, type HttpOutcome } from '../../bench/lib/raw-http.js';
import { expectConsumed } from '../support/expect-consumed.js';
import { watchLeases } from '../support/lease-watch.js';
import { waitUntilIdle } from '../support/wait-until-idle.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const ARROW_LZ4 = `${ARROW}; codecs="lz4"`;

function rows(n: number) {
  return Array.from({ length: n }, (_, i) => ({ id: i, name: `name-${i}`, score: i / 3, tags: i % 3 ? null : [i, 'x'] }));
}

async function setup(t: TestContext, options: { bodyLimit?: number } = {}) {
  const store = watchLeases(new MemoryStore());
  const app = Fastify();
  await app.register(s2spDataPlane, { store, bodyLimit: options.bodyLimit, chunkRows: 4096 });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  t.after(async () => {
    await app.close();
    await store.close();
  });
  const mint = async (table: Table) => (await store.put(table)).token;
  return { store, base, mint, url: (token: string) => `${base}/s2sp/data/${token}` };
}

for (const [format, accept] of [
  ['JSON', undefined],
  ['Arrow', ARROW],
] as const) {
  test(`100 concurrent fetches of one token (${format}): exactly one complete 200, the rest 404/409, no 5xx`, async (t) => {
    const s = await setup(t);
    const table = tableFromRows(rows(30_000));
    const reference = await httpRequest(s.url(await s.mint(table)), { headers: accept ? { accept } : {} });
    const token = await s.mint(table);
    const agent = new Agent({ maxSockets: 200 });
    t.after(() => agent.destroy());
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => httpRequest(s.url(token), { agent, headers: accept ? { accept } : {} })));
    const statuses = outcomes.map((o) => o.status);
    assert.equal(statuses.filter((st) => st === 200).length, 1, `statuses: ${statuses}`);
    assert.ok(
      statuses.every((st) => st === 200 || st === 404 || st === 409),
      `statuses: ${statuses}`,
    );
    const winner = outcomes.find((o) => o.status === 200)!;
    assert.ok(winner.complete);
    assert.deepEqual(winner.body, reference.body, 'the one 200 carries the full body');
    for (const loser of outcomes.filter((o) => o.status !== 200)) {
      const code = JSON.parse(loser.body.toString()).error.code;
      assert.equal(code, loser.status === 404 ? 'S2SP_ERR_TOKEN_NOT_FOUND' : 'S2SP_ERR_TOKEN_IN_FLIGHT');
    }
    await expectConsumed(s.url(token), s.store);
    assert.equal(await s.store.has(token), false, 'the entry is gone');
  });
}

for (const [format, accept] of [
  ['JSON', undefined],
  ['Arrow', ARROW],
  ['Arrow+LZ4', ARROW_LZ4],
] as const) {
  test(`a client that hangs up mid-stream (${format}) loses nothing: retry is byte-identical, then 404`, async (t) => {
    const s = await setup(t);
    // Far larger than what loopback socket buffers hold (a few MB): a response that fits in them
    // is written in full before the hang-up, and is then rightly consumed (SPEC 3.4).
    const table = tableFromRows(rows(800_000));
    const headers: Record<string, string> = accept ? { accept } : {};
    const reference = await httpRequest(s.url(await s.mint(table)), { headers });
    assert.ok(reference.complete && reference.body.length > 15_000_000, `a body of many chunks (${reference.body.length} bytes)`);
    const token = await s.mint(table);
    const cut = await httpRequest(s.url(token), { headers, hangUpAfterBytes: 64 * 1024 });
    assert.equal(cut.complete, false);
    await waitUntilIdle(s.store, token);
    const retry = await httpRequest(s.url(token), { headers });
    assert.equal(retry.status, 200);
    assert.ok(retry.complete);
    assert.deepEqual(retry.body, reference.body);
    await expectConsumed(s.url(token), s.store);
  });
}

interface HostileCase {
  name: string;
  status: number;
  code: string;
  send(s: Awaited<ReturnType<typeof setup>>, token: string): Promise<HttpOutcome>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const post = (s: { url(t: string): string }, token: string, body: string, headers: Record<string, string> = JSON_HEADERS) =>
  httpRequest(s.url(token), { body, headers });
const raw = (s: { base: string }, path: string, method = 'POST', body = '{}') =>
  httpRequest(s.base, { rawPath: path, method, body: method === 'GET' || method === 'DELETE' ? undefined : body, headers: JSON_HEADERS });

const BODY = 'S2SP_ERR_REQUEST_BODY_INVALID';
const IDS = 'S2SP_ERR_REQUEST_ROW_IDS_INVALID';
const COLS = 'S2SP_ERR_REQUEST_COLUMNS_INVALID';
const NOT_FOUND = 'S2SP_ERR_TOKEN_NOT_FOUND';

const HOSTILE: HostileCase[] = [
  // Malformed, truncated and non-object JSON
  { name: 'malformed JSON', status: 400, code: BODY, send: (s, t) => post(s, t, '{row_ids: [1]}') },
  { name: 'truncated JSON', status: 400, code: BODY, send: (s, t) => post(s, t, '{"row_ids": [1, 2') },
  { name: 'trailing garbage', status: 400, code: BODY, send: (s, t) => post(s, t, '{"row_ids": [1]} x') },
  { name: 'JSON array', status: 400, code: BODY, send: (s, t) => post(s, t, '[1, 2]') },
  { name: 'JSON string', status: 400, code: BODY, send: (s, t) => post(s, t, '"row_ids"') },
  { name: 'JSON number', status: 400, code: BODY, send: (s, t) => post(s, t, '42') },
  { name: 'JSON true', status: 400, code: BODY, send: (s, t) => post(s, t, 'true') },
  { name: 'JSON null', status: 400, code: BODY, send: (s, t) => post(s, t, 'null') },
  {
    name: 'invalid UTF-8 bytes',
    status: 400,
    code: BODY,
    send: (s, t) => httpRequest(s.url(t), { body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), headers: JSON_HEADERS }),
  },
  // row_ids of the wrong type or out of range
  { name: 'row_ids a string', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": "1,2"}') },
  { name: 'row_ids an object', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": {"0": 1}}') },
  { name: 'row_ids a number', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": 3}') },
  { name: 'negative id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [0, -1]}') },
  { name: 'fractional id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [1.5]}') },
  { name: 'NaN-like string id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": ["NaN"]}') },
  { name: 'overflowing id (1e400)', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [1e400]}') },
  { name: 'string id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": ["1"]}') },
  { name: 'null id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [null]}') },
  { name: 'boolean id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [true]}') },
  { name: 'nested array id', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [[1]]}') },
  { name: 'huge id (2^53)', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [9007199254740992]}') },
  { name: 'id = 2^31', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [2147483648]}') },
  { name: 'id = total_rows', status: 400, code: IDS, send: (s, t) => post(s, t, '{"row_ids": [1000]}') },
  {
    name: 'a 10^6-element row_ids, all out of range but the first thousand',
    status: 400,
    code: IDS,
    send: (s, t) => post(s, t, JSON.stringify({ row_ids: Array.from({ length: 1_000_000 }, (_, i) => i) })),
  },
  // columns
  { name: 'columns a string', status: 400, code: COLS, send: (s, t) => post(s, t, '{"columns": "name"}') },
  { name: 'columns with a number', status: 400, code: COLS, send: (s, t) => post(s, t, '{"columns": ["name", 1]}') },
  { name: 'columns with null', status: 400, code: COLS, send: (s, t) => post(s, t, '{"columns": [null]}') },
  { name: 'unknown column', status: 400, code: COLS, send: (s, t) => post(s, t, '{"columns": ["nope"]}') },
  { name: 'unknown column among known', status: 400, code: COLS, send: (s, t) => post(s, t, '{"columns": ["name", "name", "Name"]}') },
  { name: '__proto__ column', status: 400, code: COLS, send: (s, t) => post(s, t, '{"columns": ["__proto__"]}') },
  // Content type and size
  { name: 'body without a content type', status: 415, code: 'S2SP_ERR_CONTENT_TYPE_UNSUPPORTED', send: (s, t) => post(s, t, '{}', {}) },
  { name: 'text/plain body', status: 415, code: 'S2SP_ERR_CONTENT_TYPE_UNSUPPORTED', send: (s, t) => post(s, t, '{}', { 'content-type': 'text/plain' }) },
  {
    name: 'form body',
    status: 415,
    code: 'S2SP_ERR_CONTENT_TYPE_UNSUPPORTED',
    send: (s, t) => post(s, t, 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }),
  },
  {
    name: 'body over the limit',
    status: 413,
    code: 'S2SP_ERR_REQUEST_TOO_LARGE',
    send: (s, t) => post(s, t, JSON.stringify({ row_ids: [0], pad: 'x'.repeat(20_000) })),
  },
  // Tokens
  { name: 'short token', status: 404, code: NOT_FOUND, send: (s) => raw(s, '/s2sp/data/abc') },
  { name: 'long token', status: 404, code: NOT_FOUND, send: (s, t) => raw(s, `/s2sp/data/${t}${t}`) },
  { name: 'token with a non-base64url character', status: 404, code: NOT_FOUND, send: (s, t) => raw(s, `/s2sp/data/${t.slice(0, 42)}!`) },
  {
    name: 'URL-encoded token',
    status: 404,
    code: NOT_FOUND,
    send: (s, t) => raw(s, `/s2sp/data/${[...t].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}`),
  },
  { name: 'path traversal', status: 404, code: NOT_FOUND, send: (s) => raw(s, '/s2sp/data/..%2F..%2Fetc%2Fpasswd') },
  { name: 'path traversal after the token', status: 404, code: NOT_FOUND, send: (s, t) => raw(s, `/s2sp/data/${t}/../${t}`) },
  { name: 'empty token', status: 404, code: NOT_FOUND, send: (s) => raw(s, '/s2sp/data/') },
  // Methods
  { name: 'GET', status: 405, code: 'S2SP_ERR_METHOD_NOT_ALLOWED', send: (s, t) => raw(s, `/s2sp/data/${t}`, 'GET') },
  { name: 'PUT', status: 405, code: 'S2SP_ERR_METHOD_NOT_ALLOWED', send: (s, t) => raw(s, `/s2sp/data/${t}`, 'PUT') },
  { name: 'DELETE', status: 405, code: 'S2SP_ERR_METHOD_NOT_ALLOWED', send: (s, t) => raw(s, `/s2sp/data/${t}`, 'DELETE') },
  { name: 'PATCH', status: 405, code: 'S2SP_ERR_METHOD_NOT_ALLOWED', send: (s, t) => raw(s, `/s2sp/data/${t}`, 'PATCH') },
  // Accept
  { name: 'Accept text/html', status: 406, code: 'S2SP_ERR_ACCEPT_UNSUPPORTED', send: (s, t) => post(s, t, '{}', { ...JSON_HEADERS, accept: 'text/html' }) },
  { name: 'Accept text/csv', status: 406, code: 'S2SP_ERR_ACCEPT_UNSUPPORTED', send: (s, t) => post(s, t, '{}', { ...JSON_HEADERS, accept: 'text/csv' }) },
  {
    name: 'Accept Arrow file format',
    status: 406,
    code: 'S2SP_ERR_ACCEPT_UNSUPPORTED',
    send: (s, t) => post(s, t, '{}', { ...JSON_HEADERS, accept: 'application/vnd.apache.arrow.file' }),
  },
  {
    name: 'unsupported codec',
    status: 406,
    code: 'S2SP_ERR_ACCEPT_UNSUPPORTED',
    send: (s, t) => post(s, t, '{}', { ...JSON_HEADERS, accept: `${ARROW}; codecs="brotli"` }),
  },
  {
    name: 'JSON refused with q=0',
    status: 406,
    code: 'S2SP_ERR_ACCEPT_UNSUPPORTED',
    send: (s, t) => post(s, t, '{}', { ...JSON_HEADERS, accept: 'application/json;q=0' }),
  },
];

test(`hostile input on the data plane (${HOSTILE.length} cases): SPEC 3.3 status and code, server up, token kept`, async (t) => {
  assert.ok(HOSTILE.length >= 40);
  const s = await setup(t, { bodyLimit: 16 * 1024 * 1024 });
  const small = await setup(t, { bodyLimit: 10_000 });
  const table = tableFromRows(rows(1000));
  for (const hostile of HOSTILE) {
    const target = hostile.status === 413 ? small : s;
    const token = await target.mint(table);
    const outcome = await hostile.send(target, token);
    assert.equal(outcome.status, hostile.status, `${hostile.name}: ${outcome.body.toString().slice(0, 200)}`);
    assert.equal(JSON.parse(outcome.body.toString()).error.code, hostile.code, hostile.name);
    assert.equal(await target.store.has(token), true, `${hostile.name}: token consumed`);
    const health = await httpRequest(`${target.base}/s2sp/health`, { method: 'GET' });
    assert.equal(health.status, 200, `${hostile.name}: server down`);
    const ok = await httpRequest(target.url(token), { body: '{"row_ids":[0]}', headers: JSON_HEADERS });
    assert.equal(ok.status, 200, `${hostile.name}: the token no longer serves`);
  }
});

test('duplicated columns and ids collapse (no error), and the transfer counts', async (t) => {
  const s = await setup(t);
  const token = await s.mint(tableFromRows(rows(10)));
  const outcome = await post(s, token, '{"row_ids":[3,3,1],"columns":["name","name","id"]}');
  assert.equal(outcome.status, 200);
  assert.deepEqual(JSON.parse(outcome.body.toString()), {
    body: [
      { _row_id: 1, name: 'name-1', id: 1 },
      { _row_id: 3, name: 'name-3', id: 3 },
    ],
    total_rows: 2,
    columns_returned: ['_row_id', 'name', 'id'],
  });
});
