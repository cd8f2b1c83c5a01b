import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Table, tableFromArrays, type RecordBatch } from 'apache-arrow';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { fetchBodyBatches, type StreamedBody } from '../../src/consumer/fetch-body.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { NEEDS_LZ4, ipcOf, lz4IpcOf, sampleRows, sampleTable, sendBytes } from '../support/arrow-streams.js';
import { codeOf } from '../support/code-of.js';
import { sendJson, startDataPlane, startStandIn } from '../support/stand-in-server.js';
import { expectConsumed } from '../support/expect-consumed.js';
import { waitUntilIdle } from '../support/wait-until-idle.js';

/** Reads every batch; resolves with them, or rejects with the error the iteration threw. */
async function readAll(body: StreamedBody): Promise<RecordBatch[]> {
  const batches: RecordBatch[] = [];
  for await (const batch of body) batches.push(batch);
  return batches;
}

/** Reads until the iteration throws; the batches before it, and its code. */
async function readUntilError(body: StreamedBody): Promise<{ before: number; code?: string }> {
  let before = 0;
  try {
    for await (const batch of body) before += batch.numRows;
  } catch (error) {
    return { before, code: (error as { code?: string }).code };
  }
  return { before };
}

const ROWS = sampleRows(1, 150_000).map(({ _row_id, ...row }) => row);

/** A resource_url for another copy of the plane's body (tokens are single use). */
async function freshUrl(plane: Awaited<ReturnType<typeof startDataPlane>>): Promise<string> {
  const { token } = await plane.store.put(tableFromRows(ROWS));
  return plane.url.replace(plane.token, token);
}

test('the batches of a real data plane are the rows fetchBody returns, as Arrow and as JSON', async (t) => {
  const plane = await startDataPlane(t, ROWS);
  const ids = [3, 70_000, 70_001, 149_999];
  const whole = await fetchBody(plane.url, { rowIds: ids, columns: ['name'] });
  for (const format of ['arrow', 'json'] as const) {
    const body = await fetchBodyBatches(await freshUrl(plane), { rowIds: ids, columns: ['name'], format });
    assert.equal(body.format, format);
    assert.deepEqual(
      body.schema.fields.map((f) => f.name),
      ['_row_id', 'name'],
    );
    const table = new Table(await readAll(body));
    assert.deepEqual(rowsFromTable(table), whole.rows());
    assert.ok(body.bytesReceived > 0);
  }
});

test('the codec option reaches the Accept: none by default on loopback, LZ4 when asked, the same rows', NEEDS_LZ4, async (t) => {
  const plane = await startDataPlane(t, ROWS);
  const ids = [3, 70_000, 149_999];
  const plain = await fetchBodyBatches(await freshUrl(plane), { rowIds: ids, format: 'arrow' });
  const plainRows = rowsFromTable(new Table(await readAll(plain)));
  assert.equal(plain.compressed, false, 'loopback: no codec asked for');
  const lz4 = await fetchBodyBatches(await freshUrl(plane), { rowIds: ids, format: 'arrow', codec: 'lz4' });
  assert.deepEqual(rowsFromTable(new Table(await readAll(lz4))), plainRows);
  assert.equal(lz4.compressed, true, 'asked for LZ4, got LZ4');
});

test('every row arrives in several batches, then the token is consumed', async (t) => {
  const plane = await startDataPlane(t, ROWS);
  const body = await fetchBodyBatches(plane.url);
  const batches = await readAll(body);
  assert.ok(batches.length >= 3, `${batches.length} batches`);
  assert.equal(
    batches.reduce((n, b) => n + b.numRows, 0),
    ROWS.length,
  );
  assert.equal(batches[2].get(0)?.toJSON()._row_id, batches[0].numRows + batches[1].numRows);
  await expectConsumed(plane.url, plane.store);
});

test('leaving the loop early stops the transfer and leaves the token unconsumed', async (t) => {
  // 40 MB uncompressed: far more than the socket buffers, so the server cannot finish before the client leaves.
  const plane = await startDataPlane(
    t,
    Array.from({ length: 400_000 }, (_, i) => ({ name: `station ${i} `.repeat(8), mag: i })),
  );
  const body = await fetchBodyBatches(plane.url, { format: 'arrow' });
  for await (const batch of body) {
    assert.ok(batch.numRows > 0);
    break;
  }
  await waitUntilIdle(plane.store, plane.token);
  assert.equal((await fetchBody(plane.url)).table.numRows, 400_000, 'a whole transfer still works');
});

test('cancel() before any batch was read stops the transfer too', { timeout: 30_000 }, async (t) => {
  const plane = await startDataPlane(
    t,
    Array.from({ length: 400_000 }, (_, i) => ({ name: `station ${i} `.repeat(8), mag: i })),
  );
  const body = await fetchBodyBatches(plane.url, { format: 'arrow' });
  await body.cancel();
  await waitUntilIdle(plane.store, plane.token);
  assert.equal((await fetchBody(plane.url)).table.numRows, 400_000);
});

test('LZ4-compressed answers decode batch by batch', NEEDS_LZ4, async (t) => {
  const table = sampleTable(3, 50);
  const standIn = await startStandIn(t, (_req, res) => sendBytes(res, lz4IpcOf(table)));
  const body = await fetchBodyBatches(standIn.url);
  assert.deepEqual(rowsFromTable(new Table(await readAll(body))), sampleRows(3, 50));
  assert.equal(body.compressed, true);
});

test('a stream cut before its end-of-stream marker throws from the batches, after the whole ones', async (t) => {
  const bytes = ipcOf(sampleTable(3, 40));
  const standIn = await startStandIn(t, (_req, res) => sendBytes(res, bytes.subarray(0, bytes.byteLength - 8)));
  const result = await readUntilError(await fetchBodyBatches(standIn.url));
  assert.deepEqual(result, { before: 120, code: 'S2SP_ERR_CONSUMER_RESPONSE_INVALID' });
  const cutInBatch = await startStandIn(t, (_req, res) => sendBytes(res, bytes.subarray(0, bytes.byteLength - 100)));
  assert.equal((await readUntilError(await fetchBodyBatches(cutInBatch.url))).code, 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
});

test('a connection closed mid-body throws FETCH_FAILED from the batches', async (t) => {
  const bytes = ipcOf(sampleTable(3, 40));
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.apache.arrow.stream', 'content-length': bytes.byteLength });
    res.write(bytes.subarray(0, bytes.byteLength - 50), () => res.destroy());
  });
  assert.equal((await readUntilError(await fetchBodyBatches(standIn.url))).code, 'S2SP_ERR_CONSUMER_FETCH_FAILED');
});

test('errors before the body reject (404, not Arrow); Arrow ids that do not ascend throw from the batches', async (t) => {
  const missing = await startStandIn(t, (_req, res) => sendJson(res, 404, { error: { code: 'S2SP_ERR_TOKEN_NOT_FOUND', message: 'gone' } }));
  assert.equal(await codeOf(fetchBodyBatches(missing.url)), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  const garbage = await startStandIn(t, (_req, res) => sendBytes(res, new TextEncoder().encode('definitely not arrow')));
  assert.equal(await codeOf(fetchBodyBatches(garbage.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
  const descending = ipcOf(tableFromArrays({ _row_id: Int32Array.from([2, 1]), v: Float64Array.from([0.5, 1.5]) }));
  const unordered = await startStandIn(t, (_req, res) => sendBytes(res, descending));
  assert.equal((await readUntilError(await fetchBodyBatches(unordered.url))).code, 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
});

test('regression: streamed batches that lack requested rows or columns end in RESPONSE_INVALID, in both formats', async (t) => {
  // As the Python reference answers: 200 and only the rows (and columns) it holds.
  const jsonStandIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [{ _row_id: 0, a: 1 }], total_rows: 1 }));
  const table = tableFromRows([{ a: 1 }]);
  const arrowStandIn = await startStandIn(t, (_req, res) => sendBytes(res, ipcOf(table)));
  const drain = async (body: Promise<StreamedBody>): Promise<void> => {
    for await (const _batch of await body);
  };
  for (const url of [jsonStandIn.url, arrowStandIn.url]) {
    assert.equal(await codeOf(drain(fetchBodyBatches(url, { rowIds: [0, 3] }))), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', url);
    assert.equal(await codeOf(drain(fetchBodyBatches(url, { rowIds: [0], columns: ['a', 'b'] }))), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', url);
    await drain(fetchBodyBatches(url, { rowIds: [0], columns: ['a'] }));
  }
});
