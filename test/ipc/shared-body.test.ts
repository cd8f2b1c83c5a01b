import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { tableFromArrays, type RecordBatch } from 'apache-arrow';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { createDataPlane } from '../../src/data/data-plane-handle.js';
import { sharedIpcFromBatches } from '../../src/ipc/shared-body.js';
import { sharedIpcFromTable } from '../support/shared-ipc.js';
import { openBodyBatches } from '../../src/table/batch-stream.js';
import { withRowIds } from '../../src/table/with-row-ids.js';
import { codeOf } from '../support/code-of.js';

async function* batchesOf(batches: readonly RecordBatch[]): AsyncGenerator<RecordBatch> {
  yield* batches;
}

/** `n` batches of 65,536 rows: x = row number, label text. */
async function* generated(n: number): AsyncGenerator<RecordBatch> {
  for (let b = 0; b < n; b++) {
    const x = Float64Array.from({ length: 65_536 }, (_, i) => b * 65_536 + i);
    yield* tableFromArrays({ x, label: Array.from(x, (v) => `r${v % 11}`) }).batches;
  }
}

test('batches written as they come are the very bytes of the whole table, in a growable shared buffer', async () => {
  const table = withRowIds(
    tableFromArrays({ x: Float64Array.from({ length: 150_000 }, (_, i) => i), s: Array.from({ length: 150_000 }, (_, i) => `v${i % 5}`) }),
  );
  let claimed = 0;
  const streamed = await sharedIpcFromBatches(table.schema, batchesOf(table.batches), { maxByteLength: 2 ** 30, claim: (n) => (claimed += n) });
  const whole = sharedIpcFromTable(table);
  assert.deepEqual(Buffer.from(streamed), Buffer.from(whole));
  assert.equal(claimed, streamed.byteLength, 'every byte claimed once');
  assert.ok(streamed.buffer instanceof SharedArrayBuffer);
  assert.equal((streamed.buffer as SharedArrayBuffer & { growable: boolean }).growable, true);
});

test('a refused claim stops the writing, and past maxByteLength is S2SP_ERR_TABLE_TOO_LARGE', async () => {
  const table = withRowIds(tableFromArrays({ x: Float64Array.from({ length: 1000 }, (_, i) => i) }));
  const refusing = sharedIpcFromBatches(table.schema, batchesOf(table.batches), {
    maxByteLength: 2 ** 30,
    claim: (n) => {
      if (n > 1000) throw new RangeError('no');
    },
  });
  await assert.rejects(refusing, RangeError);
  const small = sharedIpcFromBatches(table.schema, batchesOf(table.batches), { maxByteLength: 1024, claim: () => {} });
  assert.equal(await codeOf(small), 'S2SP_ERR_TABLE_TOO_LARGE');
});

test('a streamed body kept in its growable buffer (over 16 MiB) is served by worker threads, JSON and Arrow', async (t) => {
  const store = new MemoryStore();
  const plane = createDataPlane({ store, workers: 2 });
  const app = Fastify();
  await app.register(plane.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  for (const format of ['json', 'arrow'] as const) {
    const { token, table } = await store.putBatches(await openBodyBatches(generated(40)));
    assert.equal(table.numRows, 40 * 65_536);
    const buffer = table.batches[0].data.children[1].values.buffer as SharedArrayBuffer & { growable: boolean };
    assert.equal(buffer.growable, true, 'not compacted: over 16 MiB');
    const body = await fetchBody(plane.resourceUrlFor(token), { format, rowIds: [0, 70_000, 2_621_439], columns: ['label'] });
    assert.deepEqual(body.rows(), [
      { _row_id: 0, label: 'r0' },
      { _row_id: 70_000, label: `r${70_000 % 11}` },
      { _row_id: 2_621_439, label: `r${2_621_439 % 11}` },
    ]);
  }
});
