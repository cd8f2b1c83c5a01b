import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordBatchReader, Table, TimeUnit, Timestamp, tableFromArrays, tableToIPC, vectorFromArray, type RecordBatch } from 'apache-arrow';
import { openBodyBatches, tableFromBatchStream } from '../../src/table/batch-stream.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { codeOf } from '../support/code-of.js';

/** Batches of `tableFromArrays` (its strings are dictionary-encoded, a dictionary per batch). */
async function* batchesOf(...tables: Table[]): AsyncGenerator<RecordBatch> {
  for (const table of tables) yield* table.batches;
}

const A = tableFromArrays({ x: Float64Array.from([1, 2]), s: ['a', 'b'] });
const B = tableFromArrays({ x: Float64Array.from([3]), s: ['c'] });

test('batches get _row_id numbered across them and plain (decoded) dictionary columns', async () => {
  const stream = await openBodyBatches(batchesOf(A, B));
  assert.deepEqual(
    stream.schema.fields.map((f) => `${f.name}:${f.type}`),
    ['_row_id:Int32', 'x:Float64', 's:Utf8'],
  );
  const table = await tableFromBatchStream(stream);
  assert.deepEqual(rowsFromTable(table), [
    { _row_id: 0, x: 1, s: 'a' },
    { _row_id: 1, x: 2, s: 'b' },
    { _row_id: 2, x: 3, s: 'c' },
  ]);
});

test('an arrow-js RecordBatchReader is a source; an empty one still gives its schema', async () => {
  const reader = RecordBatchReader.from(tableToIPC(tableFromArrays({ a: Int32Array.from([7, 8]) })));
  const table = await tableFromBatchStream(await openBodyBatches(reader));
  assert.deepEqual(rowsFromTable(table), [
    { _row_id: 0, a: 7 },
    { _row_id: 1, a: 8 },
  ]);
  const empty = RecordBatchReader.from(tableToIPC(new Table(tableFromArrays({ a: Int32Array.from([1]) }).schema)));
  const stream = await openBodyBatches(empty);
  assert.deepEqual(
    stream.schema.fields.map((f) => f.name),
    ['_row_id', 'a'],
  );
  assert.equal((await tableFromBatchStream(stream)).numRows, 0);
});

test('a batch with other columns, or an item that is not a batch, is S2SP_ERR_TABLE_INVALID', async () => {
  const other = tableFromArrays({ y: Float64Array.from([1]) });
  assert.equal(await codeOf(openBodyBatches(batchesOf(A, other)).then(tableFromBatchStream)), 'S2SP_ERR_TABLE_INVALID');
  async function* notBatches() {
    yield { rows: 1 };
  }
  assert.equal(await codeOf(openBodyBatches(notBatches() as AsyncIterable<RecordBatch>)), 'S2SP_ERR_TABLE_INVALID');
});

test('close() stops the source, before or during the iteration', async () => {
  let closed = 0;
  async function* source() {
    try {
      yield* A.batches;
      yield* B.batches;
    } finally {
      closed++;
    }
  }
  const unread = await openBodyBatches(source());
  await unread.close();
  assert.equal(closed, 1, 'closed before any batch was taken from the stream');
  const partly = await openBodyBatches(source());
  for await (const batch of partly) {
    assert.equal(batch.numRows, 2);
    break;
  }
  assert.equal(closed, 2, 'leaving the loop early closes the source');
});

test('a streamed column no body can carry exactly is refused before any batch is cached, and the source is closed', async () => {
  const zoned = new Table({ when: vectorFromArray([0, 1000], new Timestamp(TimeUnit.MILLISECOND, 'Mars/Olympus_Mons')) });
  let closed = false;
  async function* source(): AsyncGenerator<RecordBatch> {
    try {
      yield* zoned.batches;
    } finally {
      closed = true;
    }
  }
  assert.equal(await codeOf(openBodyBatches(source())), 'S2SP_ERR_TABLE_UNSUPPORTED_TYPE');
  assert.equal(closed, true);
});

test('a _row_id of the source must be the row positions across batches, as for a Table', async () => {
  const ok = [
    tableFromArrays({ _row_id: Int32Array.from([0, 1]), x: Float64Array.from([1, 2]) }),
    tableFromArrays({ _row_id: Int32Array.from([2]), x: Float64Array.from([3]) }),
  ];
  assert.equal((await tableFromBatchStream(await openBodyBatches(batchesOf(...ok)))).numRows, 3);
  const restarted = [ok[0], tableFromArrays({ _row_id: Int32Array.from([0]), x: Float64Array.from([3]) })];
  assert.equal(await codeOf(openBodyBatches(batchesOf(...restarted)).then(tableFromBatchStream)), 'S2SP_ERR_TABLE_INVALID');
});
