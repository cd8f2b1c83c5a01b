/**
 * Regression: arrow-js trusted record batch headers read from outside. A
 * batch claiming 1,000,000,000 rows over buffers for 4,242 took `s2sp serve`
 * past 2 GB; a Utf8 offset past the data served `"BBBBCCCC\u0000\u0000\u0000\u0000"`.
 * Every batch read from outside now goes through checked-batch.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Field, FixedSizeList, Int32, List, Schema, Struct, Table, Utf8, tableFromArrays, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { checkedTable, decompressionBudget } from '../../../src/ipc/decode/checked-batch.js';
import { IpcStreamError, outlineIpcStream } from '../../../src/ipc/decode/stream-walk.js';
import { rowsFromTable } from '../../../src/table/rows-from-table.js';
import { allTypes } from '../../support/all-types-table.js';
import { lz4IpcOf, NEEDS_LZ4 } from '../../support/arrow-streams.js';
import { patchFirstBatch, setInt32 } from '../../support/corrupt-ipc.js';

const BUDGET = 1 << 30;

function read(bytes: Uint8Array): Table {
  return checkedTable(outlineIpcStream(bytes), decompressionBudget(BUDGET));
}

/** The IpcStreamError a read throws: its kind and column. */
function refusal(bytes: Uint8Array): { kind: string; column: string | undefined } {
  try {
    read(bytes);
  } catch (error) {
    assert.ok(error instanceof IpcStreamError, String(error));
    return { kind: error.kind, column: error.column };
  }
  return assert.fail('expected the batch to be refused');
}

/** Plain Utf8 (tableFromArrays would dictionary-encode the strings). */
function utf8Table(values: string[]): Table {
  return new Table({ s: vectorFromArray(values, new Utf8()) });
}

const letters = utf8Table(['AAAA', 'BBBB', 'CCCC']);

test('valid batches of every type, with and without nulls, nested ones and empty ones pass unchanged', () => {
  const nested = new Table({
    list: vectorFromArray([[1, 2], [], null, [3]], new List(new Field('item', new Int32(), true))),
    fixed: vectorFromArray([[1, 2], [3, 4], null, [5, 6]], new FixedSizeList(2, new Field('item', new Int32(), true))),
    struct: vectorFromArray(
      [{ a: 1, b: 'x' }, null, { a: 3, b: null }, { a: 4, b: 'y' }],
      new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]),
    ),
  });
  const empty = new Table(new Schema([new Field('s', new Utf8(), true), new Field('n', new Int32(), true)]));
  // A field named "" once made the checked table's schema differ from its batches'.
  const unnamed = new Table({ '': vectorFromArray([1.5, 2.5]) });
  for (const table of [allTypes(200), allTypes(200, 0, 3), nested, letters, empty, unnamed]) {
    const bytes = tableToIPC(table, 'stream');
    // arrow-js's own reading of valid bytes is the oracle (it reads a field named "" back as null).
    assert.deepEqual(rowsFromTable(read(bytes)), rowsFromTable(tableFromIPC(bytes)));
  }
});

test('a batch claiming 1,000,000,000 rows over buffers for 4,242 is refused, naming the column', () => {
  const table = new Table({
    n: vectorFromArray(Int32Array.from({ length: 4242 }, (_, i) => i)),
    s: vectorFromArray(
      Array.from({ length: 4242 }, (_, i) => `v${i}`),
      new Utf8(),
    ),
  });
  const bytes = tableToIPC(table, 'stream');
  assert.deepEqual(refusal(patchFirstBatch(bytes, { length: 1_000_000_000 })), { kind: 'invalid', column: 'n' });
  assert.deepEqual(refusal(patchFirstBatch(bytes, { length: 1_000_000_000, nodeLength: 1_000_000_000 })), { kind: 'invalid', column: 'n' });
});

test('a Utf8 offset past the data, or going backwards, is refused', () => {
  const bytes = tableToIPC(letters, 'stream');
  // Buffers of s: validity, offsets [0, 4, 8, 12], data (16 bytes as arrow-js lists it: 12 and padding).
  // The case that was served as ["AAAA", "BBBBCCCC\u0000\u0000\u0000\u0000", ""]: offsets [0, 4, 16, 12].
  const intoPadding = patchFirstBatch(bytes, { body: (body, regions) => setInt32(body, regions, 1, 2, 16) });
  assert.deepEqual(refusal(intoPadding), { kind: 'invalid', column: 's' });
  const pastData = patchFirstBatch(bytes, { body: (body, regions) => (setInt32(body, regions, 1, 2, 40), setInt32(body, regions, 1, 3, 40)) });
  assert.deepEqual(refusal(pastData), { kind: 'invalid', column: 's' });
});

test('buffers shorter than the header says, or outside the body, are refused', () => {
  const bytes = tableToIPC(tableFromArrays({ n: Int32Array.of(1, 2, 3) }), 'stream');
  // Buffers of n: validity, data (12 bytes).
  assert.deepEqual(refusal(patchFirstBatch(bytes, { bufferLength: { index: 1, length: 4 } })), { kind: 'invalid', column: 'n' });
  assert.deepEqual(refusal(patchFirstBatch(bytes, { bufferLength: { index: 1, length: 4096 } })), { kind: 'invalid', column: undefined });
});

test('a compressed batch is checked on its declared and its decompressed sizes', NEEDS_LZ4, () => {
  const bytes = lz4IpcOf(letters);
  assert.deepEqual(rowsFromTable(read(bytes)), rowsFromTable(letters));
  assert.deepEqual(refusal(patchFirstBatch(bytes, { length: 1_000_000_000, nodeLength: 1_000_000_000 })), { kind: 'invalid', column: 's' });
  const small = lz4IpcOf(utf8Table(Array.from({ length: 1000 }, () => 'x'.repeat(100))));
  assert.equal(
    (() => {
      try {
        checkedTable(outlineIpcStream(small), decompressionBudget(10_000));
      } catch (error) {
        return (error as IpcStreamError).kind;
      }
      return undefined;
    })(),
    'oversized',
  );
});
