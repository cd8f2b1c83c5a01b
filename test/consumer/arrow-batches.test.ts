import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Field, Float64, Int32, Int64, Schema, Table, Utf8, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { fetchBody, fetchBodyBatches } from '../../src/consumer/fetch-body.js';
import { registerIpcCodec } from '../../src/ipc/compression/codec-registry.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { ARROW_STREAM, NEEDS_LZ4, ipcOf, lz4IpcOf, sampleRows, sampleTable, sendBytes } from '../support/arrow-streams.js';
import { codeOf } from '../support/code-of.js';
import { startStandIn } from '../support/stand-in-server.js';
import { patchFirstBatch, setInt32 } from '../support/corrupt-ipc.js';

/** A stand-in that answers each request with the next of `answers` as Arrow. */
async function serveEach(t: Parameters<typeof startStandIn>[0], answers: readonly Uint8Array[]) {
  let next = 0;
  return startStandIn(t, (_req, res) => sendBytes(res, answers[next++]));
}

test('plain Arrow: rows, columns, format and byte count', async (t) => {
  const bytes = ipcOf(sampleTable(3, 4));
  const standIn = await serveEach(t, [bytes]);
  const fetched = await fetchBody(standIn.url);
  assert.equal(fetched.format, 'arrow');
  assert.equal(fetched.compressed, false);
  assert.equal(fetched.bytesReceived, bytes.byteLength);
  assert.equal(fetched.totalRows, 12);
  assert.deepEqual(fetched.columns, ['_row_id', 'name', 'mag']);
  assert.equal(fetched.table.batches.length, 3);
  assert.deepEqual(fetched.rows(), sampleRows(3, 4));
});

test('LZ4-compressed Arrow decodes with our lz4-napi decoder', NEEDS_LZ4, async (t) => {
  const table = sampleTable(2, 200);
  const bytes = lz4IpcOf(table);
  assert.ok(bytes.byteLength < ipcOf(table).byteLength / 2, 'precondition: the buffers really are compressed');
  const standIn = await serveEach(t, [bytes]);
  const fetched = await fetchBody(standIn.url);
  assert.equal(fetched.format, 'arrow');
  assert.equal(fetched.compressed, true);
  assert.equal(fetched.bytesReceived, bytes.byteLength);
  assert.deepEqual(fetched.rows(), sampleRows(2, 200));
});

test('LZ4 Arrow without lz4-napi is CODEC_UNAVAILABLE, and the Accept lists no codec', NEEDS_LZ4, async (t) => {
  const standIn = await serveEach(t, [lz4IpcOf(sampleTable(1, 50))]);
  const previous = registerIpcCodec('lz4', () => {
    throw new Error('simulated: no prebuilt binary');
  });
  t.after(() => registerIpcCodec('lz4', previous));
  assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CODEC_UNAVAILABLE');
  assert.equal(standIn.requests[0].headers.accept, `${ARROW_STREAM}, application/json;q=0.5`);
});

test('a stream without its EOS marker is RESPONSE_INVALID, though arrow-js reads it', NEEDS_LZ4, async (t) => {
  for (const full of [ipcOf(sampleTable(3, 4)), lz4IpcOf(sampleTable(3, 40))]) {
    const noEos = full.subarray(0, full.byteLength - 8);
    const standIn = await serveEach(t, [noEos]);
    const error = await fetchBody(standIn.url).then(
      () => assert.fail('expected a rejection'),
      (e: { code?: string; message: string }) => e,
    );
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
    assert.match(error.message, /cut short/);
  }
  assert.equal(tableFromIPC(ipcOf(sampleTable(3, 4)).subarray(0, -8)).numRows, 12, 'arrow-js alone accepts it');
});

test('a stream missing its last record batch and EOS is RESPONSE_INVALID, never fewer rows', async (t) => {
  const full = ipcOf(sampleTable(3, 4));
  // Without dictionaries, the stream of the first two batches is a byte prefix of the whole one.
  const twoBatches = ipcOf(new Table(sampleTable(3, 4).batches.slice(0, 2)));
  const cut = full.subarray(0, twoBatches.byteLength - 8);
  assert.deepEqual(Buffer.from(cut), Buffer.from(twoBatches.subarray(0, -8)), 'precondition: a boundary cut');
  assert.equal(tableFromIPC(cut).numRows, 8, 'arrow-js alone returns 8 of 12 rows');
  const standIn = await serveEach(t, [cut]);
  assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
});

test('a stream cut mid-message is RESPONSE_INVALID wherever the cut falls', async (t) => {
  const full = ipcOf(sampleTable(3, 4));
  const cuts = [
    full.subarray(0, 20), // inside the schema metadata
    full.subarray(0, full.byteLength - 30), // inside the last batch
    full.subarray(0, full.byteLength - 4), // inside the EOS marker: 0xFFFFFFFF alone
    full.subarray(0, full.byteLength - 1),
  ];
  const standIn = await serveEach(t, cuts);
  for (const [i] of cuts.entries()) {
    assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', `cut ${i}`);
  }
});

test('a connection cut mid-stream is FETCH_FAILED, never fewer rows', async (t) => {
  const full = ipcOf(sampleTable(3, 4));
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(200, { 'content-type': ARROW_STREAM }); // chunked: no length to check
    res.write(full.subarray(0, full.byteLength - 100), () => res.destroy()); // cut once those bytes went out
  });
  assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
});

test('a chunked stream that ends cleanly but early is RESPONSE_INVALID', async (t) => {
  const full = ipcOf(sampleTable(3, 4));
  const standIn = await startStandIn(t, (_req, res) => {
    res.writeHead(200, { 'content-type': ARROW_STREAM });
    res.end(full.subarray(0, full.byteLength - 8));
  });
  assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID');
});

test('garbage, JSON, an empty body, the Arrow file format and trailing bytes with the Arrow type are RESPONSE_INVALID', async (t) => {
  const answers = [
    Buffer.from('hello, this is not Arrow at all'),
    Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37 + 11) & 0xff)),
    Buffer.from('{"body":[{"_row_id":0}],"total_rows":1}'),
    Buffer.alloc(0),
    tableToIPC(sampleTable(1, 2), 'file'),
    Buffer.concat([ipcOf(sampleTable(1, 2)), Buffer.from('trailing')]),
  ];
  const standIn = await serveEach(t, answers);
  for (const [i] of answers.entries()) {
    assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', `answer ${i}`);
  }
});

test('a stream whose first field is not an integer _row_id is RESPONSE_INVALID', async (t) => {
  const names = vectorFromArray(['a', 'b'], new Utf8());
  const ids = vectorFromArray([0, 1], new Int32());
  const answers = [
    ipcOf(new Table({ name: names, _row_id: ids })),
    ipcOf(new Table({ name: names })),
    ipcOf(new Table({ _row_id: names })),
    ipcOf(new Table({ _row_id: vectorFromArray([0, 1], new Float64()) })),
    ipcOf(new Table(new Schema([]))),
  ];
  const standIn = await serveEach(t, answers);
  for (const [i] of answers.entries()) {
    assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', `answer ${i}`);
  }
});

test('null, negative, out-of-range, duplicate and descending row ids are RESPONSE_INVALID (ids ascend, SPEC 3.1)', async (t) => {
  const bad = [
    new Table({ _row_id: vectorFromArray([0, null, 2], new Int32()) }),
    new Table({ _row_id: vectorFromArray([0, -1], new Int32()) }),
    new Table({ _row_id: vectorFromArray([0n, 2n ** 31n], new Int64()) }),
    new Table({ _row_id: vectorFromArray([3, 1, 3], new Int32()) }),
    new Table({ _row_id: vectorFromArray([1, 1], new Int32()) }),
    new Table({ _row_id: vectorFromArray([5n, 0n, 2n], new Int64()) }),
  ];
  const standIn = await serveEach(
    t,
    bad.map((table) => ipcOf(table)),
  );
  for (const [i] of bad.entries()) assert.equal(await codeOf(fetchBody(standIn.url)), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', `table ${i}`);
});

test('any integer _row_id type is accepted, ids kept as sent', async (t) => {
  const table = new Table({
    _row_id: vectorFromArray([0n, 2n, 5n], new Int64()),
    x: vectorFromArray([1, 2, 3], new Int32()),
  });
  const standIn = await serveEach(t, [ipcOf(table)]);
  const body = await fetchBody(standIn.url);
  assert.deepEqual(rowsFromTable(body.table), [
    { _row_id: 0, x: 1 },
    { _row_id: 2, x: 2 },
    { _row_id: 5, x: 3 },
  ]);
  assert.equal(body.totalRows, 3);
  assert.equal(body.compressed, false);
});

test('an empty stream (schema, no batches) is zero rows with the columns', async (t) => {
  const schema = new Schema([new Field('_row_id', new Int32(), false), new Field('name', new Utf8(), true)]);
  const standIn = await serveEach(t, [ipcOf(new Table(schema))]);
  const body = await fetchBody(standIn.url);
  assert.equal(body.table.numRows, 0);
  assert.deepEqual(body.columns, ['_row_id', 'name']);
});

test('media-type parameters and case are ignored: Arrow is still Arrow', NEEDS_LZ4, async (t) => {
  const table = sampleTable(1, 30);
  const answers: [Uint8Array, string][] = [
    [lz4IpcOf(table), `${ARROW_STREAM}; codecs=lz4`],
    [ipcOf(table), 'Application/Vnd.Apache.Arrow.Stream ; charset=binary'],
  ];
  let next = 0;
  const standIn = await startStandIn(t, (_req, res) => {
    const [bytes, type] = answers[next++];
    sendBytes(res, bytes, type);
  });
  for (const [bytes] of answers) {
    const fetched = await fetchBody(standIn.url);
    assert.equal(fetched.format, 'arrow');
    assert.equal(fetched.bytesReceived, bytes.byteLength);
    assert.deepEqual(fetched.rows(), sampleRows(1, 30));
  }
});

test('a peer batch that claims more rows than its buffers hold, or whose Utf8 offsets leave its data, is RESPONSE_INVALID naming the column', async (t) => {
  const table = new Table({ _row_id: vectorFromArray(Int32Array.of(0, 1, 2)), s: vectorFromArray(['AAAA', 'BBBB', 'CCCC'], new Utf8()) });
  const stream = ipcOf(table);
  // Buffers: _row_id validity, data; s validity, offsets [0, 4, 8, 12], data.
  const lying = [
    patchFirstBatch(stream, { length: 1_000_000_000, nodeLength: 1_000_000_000 }),
    patchFirstBatch(stream, { body: (body, regions) => setInt32(body, regions, 3, 2, 16) }),
  ];
  for (const [i, bytes] of lying.entries()) {
    const whole = await serveEach(t, [bytes]);
    const error = await fetchBody(whole.url).then(
      () => assert.fail('expected a rejection'),
      (e: { code?: string; message: string }) => e,
    );
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', `answer ${i}: ${error.message}`);
    assert.match(error.message, /column "(_row_id|s)"/);
    const streamed = await serveEach(t, [bytes]);
    const batches = async () => {
      for await (const batch of await fetchBodyBatches(streamed.url)) assert.fail(`a batch of ${batch.numRows} rows came through`);
    };
    assert.equal(await codeOf(batches()), 'S2SP_ERR_CONSUMER_RESPONSE_INVALID', `answer ${i}, batch by batch`);
  }
});
