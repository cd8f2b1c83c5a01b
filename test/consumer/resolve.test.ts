import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mintToken } from '../../src/protocol/token.js';
import { resolveConsumerRows } from '../../src/consumer/resolve.js';
import { Table, TimestampMillisecond, Utf8, makeData, makeVector, vectorFromArray } from 'apache-arrow';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { ipcOf, sampleRows, sampleTable, sendBytes } from '../support/arrow-streams.js';
import { codeOf } from '../support/code-of.js';
import { sendJson, startDataPlane, startStandIn } from '../support/stand-in-server.js';

const ALERTS = [
  { event: 'Wind Advisory', severity: 'Moderate', description: 'North winds 25-35 mph' },
  { event: 'Flood Watch', severity: 'Minor', description: 'River rising' },
  { event: 'High Wind Warning', severity: 'Severe', description: 'Gusts up to 55 mph' },
];

test('async: fetches only the chosen rows, merges them in the abstract order, abstract wins', async (t) => {
  const { url } = await startDataPlane(t, ALERTS);
  const abstract = [
    { _row_id: 2, event: 'High Wind Warning (edited)' },
    { _row_id: 0, event: 'Wind Advisory' },
  ];
  const resolved = await resolveConsumerRows({ abstract_data: JSON.stringify(abstract), resource_url: url });
  assert.equal(resolved.source, 'resource_url');
  assert.ok(resolved.bytesReceived > 0);
  assert.deepEqual(resolved.rows, [
    { _row_id: 2, event: 'High Wind Warning (edited)', severity: 'Severe', description: 'Gusts up to 55 mph' },
    { _row_id: 0, event: 'Wind Advisory', severity: 'Moderate', description: 'North winds 25-35 mph' },
  ]);
  assert.deepEqual(rowsFromTable(resolved.table), resolved.rows);
  assert.equal(resolved.table.schema.fields[0].name, '_row_id');
});

test('async: the fetch asks for the chosen ids only', async (t) => {
  const standIn = await startStandIn(t, (req, res) => {
    const ids = JSON.parse(req.body).row_ids as number[];
    sendJson(res, 200, { body: ids.map((id) => ({ _row_id: id, x: id * 10 })), total_rows: ids.length });
  });
  const resolved = await resolveConsumerRows({
    abstract_data: '[{"_row_id":4},{"_row_id":1},{"_row_id":4}]',
    resource_url: standIn.url,
  });
  assert.deepEqual(JSON.parse(standIn.requests[0].body), { row_ids: [4, 1] });
  assert.deepEqual(resolved.rows, [
    { _row_id: 4, x: 40 },
    { _row_id: 1, x: 10 },
    { _row_id: 4, x: 40 },
  ]);
});

test('column_mapping applies to both sides before the merge', async (t) => {
  const { url } = await startDataPlane(t, ALERTS);
  const resolved = await resolveConsumerRows({
    abstract_data: '[{"_row_id":1,"event":"Flood Watch"}]',
    resource_url: url,
    column_mapping: '{"event":"alert_type","description":"text"}',
  });
  assert.deepEqual(resolved.rows, [{ _row_id: 1, alert_type: 'Flood Watch', severity: 'Minor', text: 'River rising' }]);
  assert.deepEqual(
    resolved.table.schema.fields.map((f) => f.name),
    ['_row_id', 'alert_type', 'severity', 'text'],
  );
});

test('"*" with resource_url fetches every row without row_ids', async (t) => {
  const { url } = await startDataPlane(t, ALERTS);
  const resolved = await resolveConsumerRows({ abstract_data: '*', resource_url: url, column_mapping: '{"event":"e"}' });
  assert.equal(resolved.source, 'resource_url');
  assert.equal(resolved.rows.length, 3);
  assert.deepEqual(resolved.rows[2], { _row_id: 2, e: 'High Wind Warning', severity: 'Severe', description: 'Gusts up to 55 mph' });
  assert.equal(resolved.table.numRows, 3);
});

test('"*" sends no row_ids', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [{ _row_id: 0, a: 1 }], total_rows: 1 }));
  const resolved = await resolveConsumerRows({ abstract_data: ' * ', resource_url: standIn.url });
  assert.deepEqual(JSON.parse(standIn.requests[0].body), {});
  assert.deepEqual(resolved.rows, [{ _row_id: 0, a: 1 }]);
});

test('sync: body_data is filtered by the chosen ids and merged', async () => {
  const body = [
    { _row_id: 0, description: 'a' },
    { _row_id: 1, description: 'b' },
    { _row_id: 2, description: 'c' },
  ];
  const resolved = await resolveConsumerRows({
    abstract_data: '[{"_row_id":2,"event":"x"},{"_row_id":0,"event":"y"}]',
    body_data: JSON.stringify(body),
  });
  assert.equal(resolved.source, 'body_data');
  assert.equal(resolved.bytesReceived, 0);
  assert.deepEqual(resolved.rows, [
    { _row_id: 2, description: 'c', event: 'x' },
    { _row_id: 0, description: 'a', event: 'y' },
  ]);
});

test('"*" with body_data takes every body row', async () => {
  const resolved = await resolveConsumerRows({ abstract_data: '*', body_data: '[{"_row_id":0,"a":1},{"_row_id":1,"a":2}]' });
  assert.equal(resolved.source, 'body_data');
  assert.deepEqual(resolved.rows, [
    { _row_id: 0, a: 1 },
    { _row_id: 1, a: 2 },
  ]);
  assert.equal(resolved.table.numRows, 2);
});

test('neither resource_url nor body_data: the abstract rows alone', async () => {
  const resolved = await resolveConsumerRows({ abstract_data: '[{"_row_id":1,"a":1}]', resource_url: '', body_data: '  ' });
  assert.equal(resolved.source, 'abstract_only');
  assert.deepEqual(resolved.rows, [{ _row_id: 1, a: 1 }]);
});

test('"*" without a body source is ARG_INVALID', async () => {
  assert.equal(await codeOf(resolveConsumerRows({ abstract_data: '*' })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
});

test('both resource_url and body_data is ARG_INVALID', async () => {
  const code = await codeOf(
    resolveConsumerRows({
      abstract_data: '[{"_row_id":0}]',
      resource_url: `http://127.0.0.1:9/s2sp/data/${mintToken()}`,
      body_data: '[{"_row_id":0}]',
    }),
  );
  assert.equal(code, 'S2SP_ERR_CONSUMER_ARG_INVALID');
});

test('malformed arguments are ARG_INVALID before any fetch', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [], total_rows: 0 }));
  assert.equal(await codeOf(resolveConsumerRows({ abstract_data: '[{"a":1}]', resource_url: standIn.url })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.equal(
    await codeOf(resolveConsumerRows({ abstract_data: '[{"_row_id":0}]', resource_url: standIn.url, column_mapping: '[1]' })),
    'S2SP_ERR_CONSUMER_ARG_INVALID',
  );
  assert.equal(await codeOf(resolveConsumerRows({ abstract_data: '[{"_row_id":0}]', body_data: 'x' })), 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.equal(standIn.requests.length, 0);
});

test('an empty selection fetches nothing and leaves the token alive', async (t) => {
  const { url, token, store } = await startDataPlane(t, ALERTS);
  const resolved = await resolveConsumerRows({ abstract_data: '[]', resource_url: url });
  assert.deepEqual(resolved.rows, []);
  assert.equal(resolved.table.numRows, 0);
  assert.equal(await store.has(token), true);
});

test('fetch errors pass through with their codes', async (t) => {
  const { url } = await startDataPlane(t, ALERTS);
  await resolveConsumerRows({ abstract_data: '[{"_row_id":0}]', resource_url: url });
  assert.equal(await codeOf(resolveConsumerRows({ abstract_data: '[{"_row_id":0}]', resource_url: url })), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  const foreign = `https://data.example.com/s2sp/data/${mintToken()}`;
  assert.equal(await codeOf(resolveConsumerRows({ abstract_data: '[{"_row_id":0}]', resource_url: foreign })), 'S2SP_ERR_CONSUMER_ORIGIN_REFUSED');
});

test('maxBodyBytes reaches the fetch', async (t) => {
  const { url } = await startDataPlane(t, ALERTS);
  const code = await codeOf(resolveConsumerRows({ abstract_data: '*', resource_url: url }, { maxBodyBytes: 10 }));
  assert.equal(code, 'S2SP_ERR_CONSUMER_BODY_TOO_LARGE');
});

test('an Arrow body merges like a JSON one, with column_mapping on the table', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendBytes(res, ipcOf(sampleTable(2, 3))));
  const resolved = await resolveConsumerRows({
    abstract_data: '[{"_row_id":4,"mag":-1},{"_row_id":1}]',
    resource_url: standIn.url,
    column_mapping: '{"name":"station"}',
  });
  const body = sampleRows(2, 3);
  assert.deepEqual(resolved.rows, [
    { _row_id: 4, station: body[4].name, mag: -1 },
    { _row_id: 1, station: body[1].name, mag: body[1].mag },
  ]);
  assert.deepEqual(rowsFromTable(resolved.table), resolved.rows);
});

test('"*" over Arrow: the fetched table, renamed, is the answer', async (t) => {
  const table = sampleTable(2, 3);
  const standIn = await startStandIn(t, (_req, res) => sendBytes(res, ipcOf(table)));
  const plain = await resolveConsumerRows({ abstract_data: '*', resource_url: standIn.url });
  assert.deepEqual(plain.rows, sampleRows(2, 3));
  assert.equal(plain.table.batches.length, 2, 'the decoded batches, not a rebuilt table');

  const renamed = await resolveConsumerRows({ abstract_data: '*', resource_url: standIn.url, column_mapping: '{"mag":"magnitude"}' });
  assert.deepEqual(
    renamed.table.schema.fields.map((f) => f.name),
    ['_row_id', 'name', 'magnitude'],
  );
  assert.equal(renamed.table.batches.length, 2);
  assert.deepEqual(rowsFromTable(renamed.table), renamed.rows);
  assert.deepEqual(renamed.rows[5], { _row_id: 5, name: sampleRows(2, 3)[5].name, magnitude: 7.5 });
});

test('regression: a resource server that answers fewer rows than chosen (the Python reference does, with 200) is RESPONSE_INVALID, not a silent merge', async (t) => {
  const standIn = await startStandIn(t, (req, res) => {
    const ids = (JSON.parse(req.body) as { row_ids: number[] }).row_ids.filter((id) => id < 3);
    sendJson(res, 200, { body: ids.map((id) => ({ _row_id: id, x: id })), total_rows: ids.length });
  });
  const code = await codeOf(resolveConsumerRows({ abstract_data: '[{"_row_id":1},{"_row_id":9}]', resource_url: standIn.url }));
  assert.equal(code, 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
});

test('regression: the handler table keeps the body Arrow types (a Float64 column of whole values stays Float64), abstract-only and changed columns inferred', async (t) => {
  const body = new Table({
    _row_id: makeVector(Int32Array.from([0, 1, 2])),
    mag: makeVector(Float64Array.from([2, 3.5, 4])),
    when: makeVector(makeData({ type: new TimestampMillisecond(), length: 3, nullCount: 0, data: BigInt64Array.from([0n, 1000n, 2000n]) })),
    name: vectorFromArray(['a', 'b', 'c'], new Utf8()),
  });
  const standIn = await startStandIn(t, (_req, res) => sendBytes(res, ipcOf(body)));
  const resolved = await resolveConsumerRows({
    // mag clashes unchanged; name is changed by the agent; note is the agent's own.
    abstract_data: '[{"_row_id":2,"mag":4,"name":"C","note":1},{"_row_id":0,"mag":2,"note":2}]',
    resource_url: standIn.url,
  });
  const types = Object.fromEntries(resolved.table.schema.fields.map((f) => [f.name, String(f.type)]));
  assert.deepEqual(Object.keys(types), ['_row_id', 'mag', 'when', 'name', 'note']);
  assert.equal(types.mag, 'Float64');
  assert.equal(types.when, 'Timestamp<MILLISECOND>');
  assert.equal(types.name, 'Utf8');
  assert.equal(types.note, 'Int32');
  assert.deepEqual(rowsFromTable(resolved.table), resolved.rows);
  assert.deepEqual(resolved.rows[0], { _row_id: 2, mag: 4, when: '1970-01-01T00:00:02.000', name: 'C', note: 1 });
});

test('regression: sync mode, the handler table types body_data as written: a column of whole floats (2.0) stays Float64', async () => {
  const resolved = await resolveConsumerRows({
    abstract_data: '[{"_row_id":1,"id":"b"},{"_row_id":0,"id":"a"}]',
    body_data: '[{"_row_id":0,"mag":2.0,"n":{"a":[1,2.0]}},{"_row_id":1,"mag":3.0,"n":null}]',
  });
  assert.equal(String(resolved.table.schema.fields.find((f) => f.name === 'mag')?.type), 'Float64');
  assert.deepEqual(resolved.rows, [
    { _row_id: 1, mag: 3, n: null, id: 'b' },
    { _row_id: 0, mag: 2, n: { a: [1, 2] }, id: 'a' },
  ]);
  assert.deepEqual(rowsFromTable(resolved.table), resolved.rows);
  const star = await resolveConsumerRows({ abstract_data: '*', body_data: '[{"_row_id":0,"mag":2.0}]' });
  assert.equal(String(star.table.schema.fields[1].type), 'Float64');
});
