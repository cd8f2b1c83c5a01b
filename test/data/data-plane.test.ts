import { mock, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { mintToken } from '../../src/protocol/token.js';
import type { BodyStore } from '../../src/cache/body-store.js';
import { isS2SPError } from '../../src/errors.js';
import { expectConsumed } from '../support/expect-consumed.js';
import { watchLeases, type WatchedStore } from '../support/lease-watch.js';
import { waitUntilIdle } from '../support/wait-until-idle.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';

type Row = Record<string, unknown>;
type Response = Awaited<ReturnType<FastifyInstance['inject']>>;

const QUAKES: Row[] = [
  { time: 1517966773840, mag: 2, place: '4km W of Castaic, CA', depth: 7.5, felt: null, tsunami: false, ids: [',ci1', ',us2'] },
  { time: 1517966773999, mag: 3.25, place: 'Ōkuma, Japan "east"', depth: 10, felt: 12, tsunami: true, ids: { ci: 1 } },
  { time: 1517966774000, mag: 1.1, place: 'line\nbreak', depth: 0.25, felt: 3, tsunami: false },
  { time: 1517966775000, mag: 4, place: '日本', depth: 33, felt: null, tsunami: true, ids: [] },
  { time: 1517966776000, mag: 0.5, place: '', depth: 1, felt: 1, tsunami: false, ids: null },
];
const COLUMNS = ['_row_id', 'time', 'mag', 'place', 'depth', 'felt', 'tsunami', 'ids'];
/** Every row as the data plane returns it: `_row_id` first, missing keys null. */
const FULL_BODY = QUAKES.map((row, i) => Object.fromEntries(COLUMNS.map((c) => [c, c === '_row_id' ? i : (row[c] ?? null)])));

interface Setup {
  app: FastifyInstance;
  /** The store given (or a MemoryStore), with its leases watched. */
  store: WatchedStore;
  mint(rows?: Row[], ttlMs?: number): Promise<string>;
  post(token: string, payload?: string | object, headers?: Record<string, string>): Promise<Response>;
}

/** A fastify app with the data plane over a MemoryStore (or the store given), watched, both closed after the test. */
async function setup(
  t: TestContext,
  options: { bodyLimit?: number; store?: BodyStore; logLines?: string[]; beforeRegister?: (app: FastifyInstance) => void } = {},
): Promise<Setup> {
  const store = watchLeases(options.store ?? new MemoryStore());
  const lines = options.logLines;
  const app = Fastify({ logger: lines ? { level: 'trace', stream: { write: (line: string) => void lines.push(line) } } : false });
  options.beforeRegister?.(app);
  await app.register(s2spDataPlane, { store, bodyLimit: options.bodyLimit });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  return {
    app,
    store,
    mint: async (rows = QUAKES, ttlMs) => (await store.put(tableFromRows(rows), ttlMs ? { ttlMs } : {})).token,
    post: (token, payload, headers = {}) => {
      const request: InjectOptions = { method: 'POST', url: `/s2sp/data/${token}`, headers: { ...headers } };
      if (payload !== undefined) {
        request.payload = typeof payload === 'string' ? payload : JSON.stringify(payload);
        request.headers = { 'content-type': 'application/json', ...headers };
      }
      return app.inject(request);
    },
  };
}

function assertError(res: Response, status: number, code: string): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const doc = res.json();
  assert.equal(doc.error.code, code, res.body);
  assert.equal(typeof doc.error.message, 'string');
  assert.ok(doc.error.message.length > 0);
}

/** A 4xx never consumes the token: it is still live and a valid fetch succeeds. */
async function assertStillFetchable(s: Setup, token: string): Promise<void> {
  assert.equal(await s.store.has(token), true, 'token was consumed by a refused request');
  const res = await s.post(token, { row_ids: [1] });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().body, [FULL_BODY[1]]);
}

/** The parsed JSON of a fetch Response (typed loosely: tests check it). */
async function jsonOf(res: globalThis.Response): Promise<any> {
  return res.json();
}

function project(rows: Row[], columns: string[]): Row[] {
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])));
}

// ---- SPEC 3.3, row by row ----

interface ErrorCase {
  name: string;
  status: number;
  code: string;
  /** Sends the refused request; `token` is a live token it must not consume. */
  send(s: Setup, token: string): Promise<Response>;
}

const json = (name: string, payload: string, code: string): ErrorCase => ({
  name,
  status: 400,
  code,
  send: (s, token) => s.post(token, payload, { 'content-type': 'application/json' }),
});
const BODY = 'S2SP_ERR_REQUEST_BODY_INVALID';
const IDS = 'S2SP_ERR_REQUEST_ROW_IDS_INVALID';
const COLS = 'S2SP_ERR_REQUEST_COLUMNS_INVALID';
const NOT_FOUND = 'S2SP_ERR_TOKEN_NOT_FOUND';

const ERROR_CASES: ErrorCase[] = [
  json('malformed JSON', '{"row_ids": [1,', BODY),
  json('JSON array body', '[0, 1]', BODY),
  json('JSON string body', '"row_ids"', BODY),
  json('JSON number body', '42', BODY),
  json('JSON null body', 'null', BODY),
  json('row_ids a number', '{"row_ids": 1}', IDS),
  json('row_ids a string', '{"row_ids": "0,1"}', IDS),
  json('row_ids an object', '{"row_ids": {"0": 1}}', IDS),
  json('row_ids negative', '{"row_ids": [0, -1]}', IDS),
  json('row_ids fractional', '{"row_ids": [0.5]}', IDS),
  json('row_ids strings', '{"row_ids": ["1"]}', IDS),
  json('row_ids booleans and nulls', '{"row_ids": [true, null]}', IDS),
  json('row_ids nested arrays', '{"row_ids": [[1]]}', IDS),
  json('row_ids out of range', '{"row_ids": [0, 5]}', IDS),
  json('row_ids beyond int32', '{"row_ids": [2147483648]}', IDS),
  json('row_ids huge', '{"row_ids": [1e300]}', IDS),
  json('columns a string', '{"columns": "mag"}', COLS),
  json('columns an object', '{"columns": {"mag": true}}', COLS),
  json('columns with non-strings', '{"columns": ["mag", 1, null]}', COLS),
  json('columns nested arrays', '{"columns": [["mag"]]}', COLS),
  json('unknown column', '{"columns": ["mag", "nope"]}', COLS),
  json('unknown column with valid row_ids', '{"row_ids": [0], "columns": ["Mag"]}', COLS),
  { name: 'unknown well-formed token', status: 404, code: NOT_FOUND, send: (s) => s.post(mintToken(), {}) },
  { name: 'malformed token (short)', status: 404, code: NOT_FOUND, send: (s) => s.post('abc', {}) },
  { name: 'malformed token (44 chars)', status: 404, code: NOT_FOUND, send: (s, token) => s.post(`${token}x`, {}) },
  { name: 'malformed token (bad char)', status: 404, code: NOT_FOUND, send: (s, token) => s.post(`${token.slice(0, 42)}.`, {}) },
  { name: 'token with a trailing path', status: 404, code: NOT_FOUND, send: (s, token) => s.post(`${token}/extra`, {}) },
  {
    name: 'consumed token',
    status: 404,
    code: NOT_FOUND,
    send: async (s) => {
      const other = await s.mint();
      assert.equal((await s.post(other)).statusCode, 200);
      return s.post(other, {});
    },
  },
  {
    name: 'expired token',
    status: 404,
    code: NOT_FOUND,
    send: async (s) => {
      // Minted on node:test's fake setTimeout and Date, which then jump past its TTL: the store's
      // expiry timer fires exactly then, however loaded the machine. The request runs on real ones.
      mock.timers.enable({ apis: ['Date', 'setTimeout'] });
      let other: string;
      try {
        other = await s.mint(QUAKES, 20);
        mock.timers.tick(20);
      } finally {
        mock.timers.reset();
      }
      return s.post(other, {});
    },
  },
  {
    name: 'GET on a resource url',
    status: 405,
    code: 'S2SP_ERR_METHOD_NOT_ALLOWED',
    send: (s, token) => s.app.inject({ method: 'GET', url: `/s2sp/data/${token}` }),
  },
  {
    name: 'DELETE on a resource url',
    status: 405,
    code: 'S2SP_ERR_METHOD_NOT_ALLOWED',
    send: (s, token) => s.app.inject({ method: 'DELETE', url: `/s2sp/data/${token}` }),
  },
  {
    name: 'Accept: text/html',
    status: 406,
    code: 'S2SP_ERR_ACCEPT_UNSUPPORTED',
    send: (s, token) => s.post(token, {}, { accept: 'text/html' }),
  },
  {
    name: 'Accept: application/json;q=0, text/html',
    status: 406,
    code: 'S2SP_ERR_ACCEPT_UNSUPPORTED',
    send: (s, token) => s.post(token, {}, { accept: 'application/json;q=0, text/html' }),
  },
  {
    name: 'body over the limit (Content-Length)',
    status: 413,
    code: 'S2SP_ERR_REQUEST_TOO_LARGE',
    send: (s, token) => s.post(token, { row_ids: Array.from({ length: 200 }, () => 0) }),
  },
  {
    name: 'text/plain body',
    status: 415,
    code: 'S2SP_ERR_CONTENT_TYPE_UNSUPPORTED',
    send: (s, token) => s.post(token, '{"row_ids": [0]}', { 'content-type': 'text/plain' }),
  },
  {
    name: 'form body',
    status: 415,
    code: 'S2SP_ERR_CONTENT_TYPE_UNSUPPORTED',
    send: (s, token) => s.post(token, 'row_ids=0', { 'content-type': 'application/x-www-form-urlencoded' }),
  },
  {
    name: 'body without Content-Type',
    status: 415,
    code: 'S2SP_ERR_CONTENT_TYPE_UNSUPPORTED',
    send: (s, token) => s.app.inject({ method: 'POST', url: `/s2sp/data/${token}`, payload: '{}' }),
  },
];

test('SPEC 3.3: every refused request has its status and code, and never consumes the token', async (t) => {
  const s = await setup(t, { bodyLimit: 256 });
  for (const errorCase of ERROR_CASES) {
    await t.test(`${errorCase.status} ${errorCase.name}`, async () => {
      const token = await s.mint();
      assertError(await errorCase.send(s, token), errorCase.status, errorCase.code);
      await assertStillFetchable(s, token);
    });
  }
});

test('409 while the token is leased; 200 after release', async (t) => {
  const s = await setup(t);
  const token = await s.mint();
  const lease = await s.store.lease(token);
  assertError(await s.post(token, {}), 409, 'S2SP_ERR_TOKEN_IN_FLIGHT');
  await lease.release();
  const res = await s.post(token, {});
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().body, FULL_BODY);
});

test('Accept for Arrow IPC: 406 for now, or 200 once Arrow is served', async (t) => {
  const s = await setup(t);
  const token = await s.mint();
  const res = await s.post(token, {}, { accept: 'application/vnd.apache.arrow.stream' });
  assert.ok(res.statusCode === 406 || res.statusCode === 200, `status ${res.statusCode}`);
  if (res.statusCode === 406) {
    assert.equal(res.json().error.code, 'S2SP_ERR_ACCEPT_UNSUPPORTED');
    await assertStillFetchable(s, token);
  }
});

test('500 names no internals, and the error code is S2SP_ERR_INTERNAL', async (t) => {
  const secret = 'ECONNREFUSED redis://10.0.0.7:6379 password=hunter2';
  const broken: BodyStore = {
    put: async () => ({ token: mintToken(), expiresAt: 0 }),
    lease: async () => {
      throw new Error(secret);
    },
    delete: async () => false,
    has: async () => false,
    stats: async () => ({ entries: 0, bytes: 0, maxBytes: 0 }),
    close: async () => {},
  };
  const s = await setup(t, { store: broken });
  const res = await s.post(mintToken(), { row_ids: [0] });
  assertError(res, 500, 'S2SP_ERR_INTERNAL');
  assert.ok(!res.body.includes('hunter2') && !res.body.includes('ECONNREFUSED'), res.body);
});

// ---- happy paths ----

test('an empty body without Content-Type returns every row and column', async (t) => {
  const s = await setup(t);
  const res = await s.app.inject({ method: 'POST', url: `/s2sp/data/${await s.mint()}` });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(res.json(), { body: FULL_BODY, total_rows: 5, columns_returned: COLUMNS });
});

test('bodies that mean "everything": empty JSON body, {}, empty arrays', async (t) => {
  const s = await setup(t);
  for (const payload of ['', '  ', '{}', '{"row_ids": [], "columns": []}']) {
    const res = await s.post(await s.mint(), payload, { 'content-type': 'application/json' });
    assert.equal(res.statusCode, 200, `${JSON.stringify(payload)}: ${res.body}`);
    assert.deepEqual(res.json(), { body: FULL_BODY, total_rows: 5, columns_returned: COLUMNS });
  }
});

test('Accept values that mean JSON', async (t) => {
  const s = await setup(t);
  for (const accept of ['*/*', 'application/json', 'application/json; charset=utf-8', 'text/html, application/*;q=0.5', 'APPLICATION/JSON']) {
    const res = await s.post(await s.mint(), { row_ids: [0] }, { accept });
    assert.equal(res.statusCode, 200, `${accept}: ${res.body}`);
    assert.deepEqual(res.json().body, [FULL_BODY[0]]);
  }
});

test('row_ids come back ascending and unique', async (t) => {
  const s = await setup(t);
  const res = await s.post(await s.mint(), { row_ids: [2, 0, 0] });
  assert.deepEqual(res.json(), { body: [FULL_BODY[0], FULL_BODY[2]], total_rows: 2, columns_returned: COLUMNS });
  const all = await s.post(await s.mint(), { row_ids: [4, 3, 2, 1, 0, 4] });
  assert.deepEqual(all.json().body, FULL_BODY);
});

test('columns come back in the order asked, _row_id first and once', async (t) => {
  const s = await setup(t);
  const res = await s.post(await s.mint(), { columns: ['place', 'mag', '_row_id', 'place'] });
  const doc = res.json();
  assert.deepEqual(doc.columns_returned, ['_row_id', 'place', 'mag']);
  for (const row of doc.body) assert.deepEqual(Object.keys(row), ['_row_id', 'place', 'mag']);
  assert.deepEqual(doc.body, project(FULL_BODY, ['_row_id', 'place', 'mag']));
});

test('the exact document for {"row_ids":[0,2],"columns":["mag"]}; a second fetch is 404', async (t) => {
  const s = await setup(t);
  const token = await s.mint();
  const res = await s.post(token, '{"row_ids":[0,2],"columns":["mag"]}', { 'content-type': 'application/json' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  const expected = {
    body: [
      { _row_id: 0, mag: 2 },
      { _row_id: 2, mag: 1.1 },
    ],
    total_rows: 2,
    columns_returned: ['_row_id', 'mag'],
  };
  assert.deepEqual(res.json(), expected);
  // mag is a Float64 column: a whole value keeps its fraction (README, "JSON encoding of Arrow types").
  assert.equal(res.body, JSON.stringify(expected).replace('"mag":2}', '"mag":2.0}'));
  assert.equal(await s.store.has(token), false);
  assertError(await s.post(token, '{"row_ids":[0,2],"columns":["mag"]}', { 'content-type': 'application/json' }), 404, NOT_FOUND);
});

test('null row_ids and columns mean "omitted"', async (t) => {
  const s = await setup(t);
  const res = await s.post(await s.mint(), { row_ids: null, columns: null });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json().body, FULL_BODY);
});

test('a zero-row body answers an empty document', async (t) => {
  const s = await setup(t);
  const res = await s.post(await s.mint([]), {});
  assert.deepEqual(res.json(), { body: [], total_rows: 0, columns_returned: ['_row_id'] });
});

test('GET /s2sp/health reports ok with entries and bytes', async (t) => {
  const s = await setup(t);
  const empty = await s.app.inject({ method: 'GET', url: '/s2sp/health' });
  assert.equal(empty.statusCode, 200);
  assert.deepEqual(empty.json(), { status: 'ok', entries: 0, bytes: 0, bodies: 0 });
  await s.mint();
  const one = (await s.app.inject({ method: 'GET', url: '/s2sp/health' })).json();
  assert.equal(one.status, 'ok');
  assert.equal(one.entries, 1);
  assert.ok(one.bytes > 0);
});

test('the plugin is encapsulated: other routes keep fastify defaults', async (t) => {
  const s = await setup(t, {
    beforeRegister: (app) => {
      app.post('/echo', async (request) => ({ got: request.body }));
    },
  });
  const res = await s.app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { got: { a: 1 } });
});

// ---- over real HTTP ----

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}

function bigRows(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({ time: 1517966773840 + i, mag: (i % 90) / 10, place: `${i} km NNE of Somewhere, CA` }));
}

test('real HTTP: fetch, 404 after consumption, 405 for GET, health', async (t) => {
  const s = await setup(t);
  const base = await listen(s.app);
  const token = await s.mint();
  const url = `${base}/s2sp/data/${token}`;

  const get = await fetch(url);
  assert.equal(get.status, 405);
  assert.equal((await jsonOf(get)).error.code, 'S2SP_ERR_METHOD_NOT_ALLOWED');

  const bad = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"row_ids":[99]}' });
  assert.equal(bad.status, 400);
  assert.equal((await jsonOf(bad)).error.code, IDS);

  const ok = await fetch(url, { method: 'POST' });
  assert.equal(ok.status, 200);
  assert.deepEqual(await jsonOf(ok), { body: FULL_BODY, total_rows: 5, columns_returned: COLUMNS });

  await expectConsumed(url, s.store);
  const again = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal((await jsonOf(again)).error.code, NOT_FOUND);

  const health = await fetch(`${base}/s2sp/health`);
  assert.deepEqual(await jsonOf(health), { status: 'ok', entries: 0, bytes: 0, bodies: 0 });
});

test('real HTTP: a chunked body over the limit is 413', async (t) => {
  const s = await setup(t, { bodyLimit: 64 });
  const base = await listen(s.app);
  const token = await s.mint();
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(JSON.stringify({ row_ids: Array.from({ length: 100 }, () => 0) })));
      controller.close();
    },
  });
  const res = await fetch(`${base}/s2sp/data/${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
  assert.equal(res.status, 413);
  assert.equal((await jsonOf(res)).error.code, 'S2SP_ERR_REQUEST_TOO_LARGE');
  await assertStillFetchable(s, token);
});

test('real HTTP: a client that drops mid-stream does not consume the token; the retry gets everything', async (t) => {
  const n = 200_000;
  const s = await setup(t);
  const base = await listen(s.app);
  const token = await s.mint(bigRows(n));
  const url = new URL(`${base}/s2sp/data/${token}`);

  const firstChunkBytes = await new Promise<number>((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      assert.equal(res.statusCode, 200);
      res.once('data', (chunk: Buffer) => {
        req.destroy();
        resolve(chunk.length);
      });
    });
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end('{}');
  });
  assert.ok(firstChunkBytes > 0);

  await waitUntilIdle(s.store, token);
  assert.equal(await s.store.has(token), true, 'the dropped transfer consumed the token');

  const retry = await fetch(url, { method: 'POST' });
  assert.equal(retry.status, 200);
  const text = await retry.text();
  assert.ok(text.length > 5_000_000, `only ${text.length} chars`);
  const doc = JSON.parse(text);
  assert.equal(doc.total_rows, n);
  assert.equal(doc.body.length, n);
  assert.deepEqual(doc.body[n - 1], { _row_id: n - 1, time: 1517966773840 + n - 1, mag: ((n - 1) % 90) / 10, place: `${n - 1} km NNE of Somewhere, CA` });

  await waitUntilIdle(s.store, token).then(
    () => assert.fail('token still live after a complete transfer'),
    (error) => assert.ok(isS2SPError(error, 'S2SP_ERR_TOKEN_NOT_FOUND')),
  );
  const third = await fetch(url, { method: 'POST' });
  assert.equal(third.status, 404);
  assert.equal((await jsonOf(third)).error.code, NOT_FOUND);
});

test('real HTTP: concurrent fetches of one token: exactly one complete transfer', async (t) => {
  const n = 100_000;
  const s = await setup(t);
  const base = await listen(s.app);
  const token = await s.mint(bigRows(n));
  const url = `${base}/s2sp/data/${token}`;
  const responses = await Promise.all([1, 2, 3, 4].map(() => fetch(url, { method: 'POST' })));
  const docs = await Promise.all(responses.map(jsonOf));
  const winners = responses.filter((r) => r.status === 200);
  assert.equal(winners.length, 1, `statuses ${responses.map((r) => r.status)}`);
  responses.forEach((r, i) => {
    if (r.status === 200) return assert.equal(docs[i].body.length, n);
    // 409 while the winner streams; 404 if it already finished.
    const expected = r.status === 409 ? 'S2SP_ERR_TOKEN_IN_FLIGHT' : NOT_FOUND;
    assert.ok(r.status === 409 || r.status === 404, `status ${r.status}`);
    assert.equal(docs[i].error.code, expected);
  });
  await expectConsumed(url, s.store);
});

test('regression: a client gone before the lease is taken does not leave the token stuck in flight', { timeout: 10_000 }, async (t) => {
  // An async preHandler (an embedding app's auth hook) lets the socket close
  // before the route handler leases the token and listens for 'close'.
  let clientGone: () => void = () => {};
  const gone = new Promise<void>((resolve) => (clientGone = resolve));
  let inHook: (socket: Socket) => void = () => {};
  const held = new Promise<Socket>((resolve) => (inHook = resolve));
  const s = await setup(t, {
    beforeRegister: (app) => {
      app.addHook('preHandler', async (request) => {
        if (request.headers['x-slow'] !== '1') return;
        inHook(request.raw.socket);
        await gone;
      });
    },
  });
  const base = await listen(s.app);
  const token = await s.mint();
  const req = http.request(`${base}/s2sp/data/${token}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-slow': '1' } });
  req.on('error', () => {});
  req.end('{}');
  const socket = await held; // the request waits in the hook
  const closed = once(socket, 'close');
  req.destroy();
  await closed; // the server saw the client go, before any lease
  clientGone();
  // The handler leases the token and must let it go (a stuck lease never settles: the test times out).
  assert.deepEqual(await s.store.settled(token), ['release']);
  const res = await fetch(`${base}/s2sp/data/${token}`, { method: 'POST' });
  assert.equal(res.status, 200);
  assert.deepEqual((await jsonOf(res)).body, FULL_BODY);
});

// ---- logs ----

test('no log line contains a full token', async (t) => {
  const lines: string[] = [];
  const s = await setup(t, { logLines: lines });
  const base = await listen(s.app);
  const token = await s.mint();
  const other = await s.mint();

  assert.equal((await s.post(token, {})).statusCode, 200);
  assert.equal((await s.post(token, {})).statusCode, 404);
  assert.equal((await s.post(other, { row_ids: [-1] })).statusCode, 400);
  assert.equal((await s.post(other, 'x', { 'content-type': 'text/plain' })).statusCode, 415);
  assert.equal((await s.app.inject({ method: 'GET', url: `/s2sp/data/${other}` })).statusCode, 405);
  assert.equal((await s.app.inject({ method: 'GET', url: `/s2sp/data/${other}?x=1` })).statusCode, 405);
  assert.equal((await s.post(`${other}/extra`, {})).statusCode, 404);
  assert.equal((await s.post(`/${other}`, {})).statusCode, 404); // a doubled slash still reaches our routes
  assert.equal((await fetch(`${base}/s2sp/data/${other}/extra`, { method: 'POST' })).status, 404);
  assert.equal((await fetch(`${base}/s2sp/data/${other}`)).status, 405);
  assert.equal((await fetch(`${base}/s2sp/data/${other}`, { method: 'POST' })).status, 200);

  const all = lines.join('');
  assert.ok(lines.length >= 20, `only ${lines.length} log lines`);
  assert.ok(all.includes(`/s2sp/data/${token.slice(0, 6)}`), 'request URLs are logged, redacted');
  for (const line of lines) {
    assert.ok(!line.includes(token) && !line.includes(other), `token in log line: ${line}`);
  }
});

test('no log line contains a full token when a transfer is dropped', async (t) => {
  const lines: string[] = [];
  const s = await setup(t, { logLines: lines });
  const base = await listen(s.app);
  const token = await s.mint(bigRows(100_000));
  await new Promise<void>((resolve) => {
    const req = http.request(`${base}/s2sp/data/${token}`, { method: 'POST' }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => {});
    req.end();
  });
  await waitUntilIdle(s.store, token);
  assert.ok(lines.length > 0);
  for (const line of lines) assert.ok(!line.includes(token), `token in log line: ${line}`);
});
