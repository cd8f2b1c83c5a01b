import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mintToken } from '../../src/protocol/token.js';
import { fetchBody, type BodyCodec, type BodyFormat } from '../../src/consumer/fetch-body.js';
import { codecsToAsk } from '../../src/consumer/body-format.js';
import { registerIpcCodec } from '../../src/ipc/compression/codec-registry.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { ARROW_STREAM, DEFAULT_ACCEPT, NEEDS_LZ4, NEEDS_ZSTD, ipcOf, sampleRows, sampleTable, sendBytes } from '../support/arrow-streams.js';
import { codeOf } from '../support/code-of.js';
import { sendJson, startDataPlane, startStandIn } from '../support/stand-in-server.js';

const ROWS = [
  { name: 'a', mag: 1.5, tags: ['x'], meta: { depth: 3 } },
  { name: 'b', mag: 2, tags: [], meta: null },
  { name: 'c', mag: 3.25, tags: ['y', 'z'], meta: { depth: 1 } },
  { name: 'd', mag: -1, tags: null, meta: { depth: 0 } },
];

async function errorOf(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  assert.fail('expected a rejection');
}

test('fetches selected rows and columns from the real data plane, as Arrow and as JSON', async (t) => {
  const expected = [
    { _row_id: 1, name: 'b', meta: null },
    { _row_id: 3, name: 'd', meta: { depth: 0 } },
  ];
  for (const format of ['auto', 'json'] as const) {
    const { url } = await startDataPlane(t, ROWS);
    const fetched = await fetchBody(url, { rowIds: [3, 1], columns: ['name', 'meta'], format });
    assert.equal(fetched.format, format === 'auto' ? 'arrow' : 'json');
    assert.equal(fetched.compressed, false, 'loopback: uncompressed by default');
    assert.equal(fetched.totalRows, 2);
    assert.deepEqual(fetched.columns, ['_row_id', 'name', 'meta']);
    assert.ok(fetched.bytesReceived > 0);
    assert.equal(fetched.table.schema.fields[0].name, '_row_id');
    assert.deepEqual(rowsFromTable(fetched.table), expected, format);
    assert.deepEqual(fetched.rows(), expected, format);
  }
});

test('fetches every row when rowIds is undefined; nested values round-trip in both formats', async (t) => {
  for (const format of ['arrow', 'json'] as const) {
    const { url } = await startDataPlane(t, ROWS);
    const fetched = await fetchBody(url, { format });
    assert.equal(fetched.format, format);
    assert.equal(fetched.totalRows, 4);
    assert.deepEqual(
      fetched.rows(),
      ROWS.map((row, i) => ({ _row_id: i, ...row })),
      format,
    );
  }
});

test('rows() converts the table on demand, a fresh array each call', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendBytes(res, ipcOf(sampleTable(2, 3))));
  const fetched = await fetchBody(standIn.url);
  const first = fetched.rows();
  assert.deepEqual(first, sampleRows(2, 3));
  assert.deepEqual(fetched.rows(), first);
  assert.notEqual(fetched.rows(), first, 'not a shared, mutable cache');
});

test('a consumed token gives FETCH_FAILED carrying the server code and advice', async (t) => {
  const { url } = await startDataPlane(t, ROWS);
  await fetchBody(url, { rowIds: [0] });
  const error = await errorOf(fetchBody(url, { rowIds: [0] }));
  assert.equal(error.code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.match(error.message, /404/);
  assert.match(error.message, /S2SP_ERR_TOKEN_NOT_FOUND/);
  assert.match(error.message, /call the resource tool again/);
});

test('a 400 from the data plane carries its message', async (t) => {
  const { url, token, store } = await startDataPlane(t, ROWS);
  const error = await errorOf(fetchBody(url, { rowIds: [0], columns: ['nope'] }));
  assert.equal(error.code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.match(error.message, /S2SP_ERR_REQUEST_COLUMNS_INVALID/);
  assert.match(error.message, /nope/);
  assert.equal(await store.has(token), true, 'a 4xx never consumes the token');
});

test('sends POST, JSON headers and the request body of SPEC 3.1', async (t) => {
  // Answers what was asked for: the consumer checks that it all came back.
  const standIn = await startStandIn(t, (req, res) => {
    const { row_ids: ids = [], columns = [] } = JSON.parse(req.body) as { row_ids?: number[]; columns?: string[] };
    const body = ids.map((id) => Object.fromEntries([['_row_id', id], ...columns.map((c) => [c, null])]));
    sendJson(res, 200, { body, total_rows: body.length, columns_returned: ['_row_id', ...columns] });
  });
  await fetchBody(standIn.url, { rowIds: [5, 2], columns: [] });
  await fetchBody(standIn.url, { columns: ['a', 'b'] });
  await fetchBody(standIn.url);
  const [first, second, third] = standIn.requests;
  assert.equal(first.method, 'POST');
  assert.match(String(first.headers['content-type']), /^application\/json/);
  assert.equal(first.url, new URL(standIn.url).pathname);
  assert.deepEqual(JSON.parse(first.body), { row_ids: [5, 2] });
  assert.deepEqual(JSON.parse(second.body), { columns: ['a', 'b'] });
  assert.deepEqual(JSON.parse(third.body), {});
});

test('falls back to JSON: the Python reference ignores Accept and omits columns_returned', async (t) => {
  const body = [
    { _row_id: 2, description: 'Gusts up to 55 mph', severity: 'Severe' },
    { _row_id: 0, description: 'North winds', severity: 'Moderate' },
  ];
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body, total_rows: body.length }));
  const fetched = await fetchBody(standIn.url, { rowIds: [0, 2] });
  assert.match(String(standIn.requests[0].headers.accept), /^application\/vnd\.apache\.arrow\.stream/, 'Arrow was asked for');
  assert.equal(fetched.format, 'json');
  assert.equal(fetched.compressed, false);
  assert.equal(fetched.totalRows, 2);
  assert.deepEqual(fetched.columns, ['_row_id', 'description', 'severity']);
  assert.deepEqual(rowsFromTable(fetched.table), body, 'ids kept as the server sent them, in its order');
});

test(
  'the Accept header: Arrow, JSON at q=0.5; json or arrow alone when forced; codecs only when asked (loopback)',
  { skip: NEEDS_LZ4.skip || NEEDS_ZSTD.skip },
  async (t) => {
    const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [], total_rows: 0 }));
    const acceptFor = async (format?: BodyFormat, codec?: BodyCodec) => {
      await fetchBody(standIn.url, { format, codec }).catch(() => undefined);
      return standIn.requests.at(-1)?.headers.accept;
    };
    assert.equal(await acceptFor(), DEFAULT_ACCEPT);
    assert.equal(await acceptFor('auto', 'auto'), DEFAULT_ACCEPT);
    assert.equal(await acceptFor('arrow'), ARROW_STREAM, 'format arrow is uncompressed Arrow (it used to ask for LZ4)');
    assert.equal(await acceptFor('arrow', 'none'), ARROW_STREAM);
    assert.equal(await acceptFor('arrow', 'lz4'), `${ARROW_STREAM}; codecs="lz4"`);
    assert.equal(await acceptFor('arrow', 'zstd'), `${ARROW_STREAM}; codecs="zstd"`);
    assert.equal(await acceptFor('auto', 'zstd'), `${ARROW_STREAM}; codecs="zstd", application/json;q=0.5`);
    assert.equal(await acceptFor('json'), 'application/json');
    assert.equal(await acceptFor('json', 'lz4'), 'application/json', 'no codec applies to JSON');
  },
);

test('codec auto: none on loopback; elsewhere every codec that loads here, ZSTD first', () => {
  assert.deepEqual(codecsToAsk(undefined, true), []);
  assert.deepEqual(codecsToAsk('auto', true), []);
  const expected = [...(NEEDS_ZSTD.skip ? [] : ['zstd']), ...(NEEDS_LZ4.skip ? [] : ['lz4'])];
  assert.deepEqual(codecsToAsk(undefined, false), expected);
  assert.deepEqual(codecsToAsk('none', false), []);
});

test('a codec that does not load here: auto leaves it out, asking for it by name is CODEC_UNAVAILABLE before any request', async (t) => {
  const previous = registerIpcCodec('lz4', null);
  t.after(() => registerIpcCodec('lz4', previous));
  assert.ok(!codecsToAsk('auto', false).includes('lz4'));
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [], total_rows: 0 }));
  assert.equal(await codeOf(fetchBody(standIn.url, { codec: 'lz4' })), 'S2SP_ERR_CODEC_UNAVAILABLE');
  assert.equal(standIn.requests.length, 0, 'nothing was sent');
  assert.equal(await codeOf(fetchBody(standIn.url, { codec: 'gzip' as BodyCodec })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
});

test(
  'fetches compressed Arrow from the real data plane when asked (LZ4 and ZSTD), the same rows as uncompressed',
  { skip: NEEDS_LZ4.skip || NEEDS_ZSTD.skip },
  async (t) => {
    for (const codec of ['lz4', 'zstd', 'none'] as const) {
      const { url } = await startDataPlane(t, ROWS);
      const fetched = await fetchBody(url, { format: 'arrow', codec });
      assert.equal(fetched.compressed, codec !== 'none', codec);
      assert.deepEqual(
        fetched.rows().map((r) => r.name),
        ROWS.map((r) => r.name),
        codec,
      );
    }
  },
);

test('format json forces JSON; an answer in the other format than the forced one is RESPONSE_INVALID', async (t) => {
  // Answers what the Accept prefers, like our data plane; or always one format.
  let mode: 'negotiate' | 'arrow' | 'json' = 'negotiate';
  const standIn = await startStandIn(t, (req, res) => {
    const arrow = mode === 'arrow' || (mode === 'negotiate' && String(req.headers.accept).startsWith(ARROW_STREAM));
    if (arrow) sendBytes(res, ipcOf(sampleTable(1, 2)));
    else sendJson(res, 200, { body: sampleRows(1, 2), total_rows: 2 });
  });
  assert.equal((await fetchBody(standIn.url)).format, 'arrow');
  const forced = await fetchBody(standIn.url, { format: 'json' });
  assert.equal(forced.format, 'json');
  assert.deepEqual(forced.rows(), sampleRows(1, 2));
  mode = 'arrow';
  assert.equal(await codeOf(fetchBody(standIn.url, { format: 'json' })), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
  mode = 'json';
  assert.equal(await codeOf(fetchBody(standIn.url, { format: 'arrow' })), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
  assert.equal((await fetchBody(standIn.url)).format, 'json', 'auto takes either');
});

test('an unknown format option is ARG_INVALID and sends nothing', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [], total_rows: 0 }));
  assert.equal(await codeOf(fetchBody(standIn.url, { format: 'csv' as BodyFormat })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.equal(standIn.requests.length, 0);
});

test('garbage, truncated JSON and wrong shapes are RESPONSE_INVALID', async (t) => {
  const answers: string[] = [
    'hello, not json',
    '{"body":[{"_row_id":0,"a":1},{"_row_id":1,',
    '',
    '[1,2,3]',
    '{"rows":[]}',
    '{"body":{"_row_id":0}}',
    '{"body":[1]}',
    '{"body":[{"a":1}]}',
    '{"body":[{"_row_id":"0"}]}',
    '{"body":[{"_row_id":1.5}]}',
    '{"body":[{"_row_id":-1}]}',
    '{"body":[{"_row_id":0},{"_row_id":0}]}',
    '{"body":[],"total_rows":"3"}',
    '{"body":[],"columns_returned":[1]}',
  ];
  let next = 0;
  const standIn = await startStandIn(t, (_req, res) => {
    const text = answers[next++];
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  for (const answer of answers) {
    assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', answer);
  }
});

test('a 404 error document gives FETCH_FAILED saying to call the resource tool again', async (t) => {
  const standIn = await startStandIn(t, (_req, res) =>
    sendJson(res, 404, { error: { code: 'S2SP_ERR_TOKEN_NOT_FOUND', message: 'unknown, expired or already consumed token' } }),
  );
  const error = await errorOf(fetchBody(standIn.url, { rowIds: [1] }));
  assert.equal(error.code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.match(error.message, /S2SP_ERR_TOKEN_NOT_FOUND/);
  assert.match(error.message, /call the resource tool again/);
  assert.ok(!error.message.includes(new URL(standIn.url).pathname.slice(11)), 'no token in the message');
});

test("the reference's string error and non-JSON errors are FETCH_FAILED", async (t) => {
  let next = 0;
  const standIn = await startStandIn(t, (_req, res) => {
    if (next++ === 0) sendJson(res, 404, { error: 'Resource not found or expired' });
    else {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html>Internal Server Error</html>');
    }
  });
  const first = await errorOf(fetchBody(standIn.url));
  assert.equal(first.code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.match(first.message, /Resource not found or expired/);
  const second = await errorOf(fetchBody(standIn.url));
  assert.equal(second.code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.match(second.message, /500/);
});

test('redirects are not followed', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(302, { location: 'http://10.0.0.1/s2sp/data/x' });
    res.end();
  });
  assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.equal(standIn.requests.length, 1);
});

test('a Content-Length over maxBytes is BODY_TOO_LARGE before the body is read', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10_000_000 });
    res.write('{"body":[');
    // never finishes: the client must give up on the header alone
  });
  assert.equal(await codeOf(fetchBody(standIn.url, { maxBytes: 1000, timeoutMs: 5000 })), 'S2SP_ERR_CONSUMER_BODY_TOO_LARGE');
});

test('a chunked body growing past maxBytes is BODY_TOO_LARGE', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const row = (i: number) => JSON.stringify({ _row_id: i, text: 'x'.repeat(1000) });
    res.write('{"body":[');
    for (let i = 0; i < 50; i++) res.write(row(i) + ',');
    res.end(`${row(50)}],"total_rows":51}`);
  });
  assert.equal(await codeOf(fetchBody(standIn.url, { maxBytes: 10_000 })), 'S2SP_ERR_CONSUMER_BODY_TOO_LARGE');
  // The same answer fits a larger limit (this is not a parse failure).
  assert.equal(await codeOf(fetchBody(standIn.url, { maxBytes: 1_000_000 })), undefined);
});

test('a connection cut mid-body is FETCH_FAILED, never fewer rows', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"body":[{"_row_id":0,"a":1}', () => res.destroy()); // cut once those bytes went out
  });
  assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
});

test('a server that never answers is FETCH_FAILED after timeoutMs', async (t) => {
  const standIn = await startStandIn(t, () => {
    /* never answers */
  });
  const started = Date.now();
  assert.equal(await codeOf(fetchBody(standIn.url, { timeoutMs: 150 })), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.ok(Date.now() - started < 5000);
});

test('an abort signal ends the fetch with FETCH_FAILED', async (t) => {
  const controller = new AbortController();
  // Never answers: the signal aborts once the request arrived, while the fetch waits for the answer.
  const standIn = await startStandIn(t, () => controller.abort());
  assert.equal(await codeOf(fetchBody(standIn.url, { signal: controller.signal })), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.equal(await codeOf(fetchBody(standIn.url, { signal: AbortSignal.abort() })), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
});

test('a refused URL sends nothing', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [], total_rows: 0 }));
  const foreign = `http://203.0.113.7/s2sp/data/${mintToken()}`;
  assert.equal(await codeOf(fetchBody(foreign)), 'S2SP_ERR_CONSUMER_ORIGIN_REFUSED');
  assert.equal(await codeOf(fetchBody(`${standIn.origin}/s2sp/data/short`)), 'S2SP_ERR_CONSUMER_URL_INVALID');
  assert.equal(standIn.requests.length, 0);
});

test('an unreachable server is FETCH_FAILED', async () => {
  // Port 1 (tcpmux) on loopback: nothing listens there, so the connection is refused.
  const code = await codeOf(fetchBody(`http://127.0.0.1:1/s2sp/data/${mintToken()}`, { timeoutMs: 2000 }));
  assert.equal(code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
});

test('empty or malformed rowIds are ARG_INVALID and send nothing', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [], total_rows: 0 }));
  assert.equal(await codeOf(fetchBody(standIn.url, { rowIds: [] })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.equal(await codeOf(fetchBody(standIn.url, { rowIds: [1.5] })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.equal(await codeOf(fetchBody(standIn.url, { rowIds: [-1] })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.equal(standIn.requests.length, 0);
});

test('regression: an answer that lacks requested rows or columns (the Python reference answers 200 with less) is RESPONSE_INVALID', async (t) => {
  // The reference drops ids and columns it does not hold, and omits columns_returned.
  const standIn = await startStandIn(t, (req, res) => {
    const { row_ids: ids } = JSON.parse(req.body) as { row_ids?: number[] };
    const held = (ids ?? [0, 1]).filter((id) => id < 2);
    sendJson(res, 200, { body: held.map((id) => ({ _row_id: id, a: id })), total_rows: held.length });
  });
  for (const format of ['auto', 'json'] as const) {
    assert.equal(await codeOf(fetchBody(standIn.url, { rowIds: [0, 7], format })), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
    assert.equal(await codeOf(fetchBody(standIn.url, { rowIds: [1], columns: ['a', 'nope'], format })), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
    const whole = await fetchBody(standIn.url, { rowIds: [1, 0], columns: ['a'], format });
    assert.equal(whole.table.numRows, 2);
  }
});
