import { readFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Int32, Table, Utf8, tableFromArrays, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { arrowIpcKind, tableFromArrowBytes } from '../../../src/cli/input/arrow-file.js';
import { vegaData } from './fixtures.js';
import { fileOf, patchFirstBatch, setInt32 } from '../../support/corrupt-ipc.js';

function assertUnreadable(fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => (err as { code?: unknown }).code === 'S2SP_ERR_INPUT_UNREADABLE');
}

const sample = tableFromArrays({ a: Int32Array.from([10, 20, 30]), b: ['x', 'y', 'z'] });

describe('tableFromArrowBytes', () => {
  test('flights-200k.arrow: 200000 rows, _row_id first, values untouched', async () => {
    const bytes = await readFile(vegaData('flights-200k.arrow'));
    const table = tableFromArrowBytes(bytes);
    assert.equal(table.numRows, 200000);
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['_row_id', 'delay', 'distance', 'time'],
    );
    assert.ok(table.schema.fields[0].type instanceof Int32);
    const ids = table.getChild('_row_id')!;
    assert.equal(ids.get(0), 0);
    assert.equal(ids.get(199999), 199999);
    const direct = tableFromIPC(bytes);
    assert.equal(table.getChild('distance')!.get(12345), direct.getChild('distance')!.get(12345));
    assert.equal(table.getChild('delay')!.get(199999), direct.getChild('delay')!.get(199999));
  });

  for (const format of ['file', 'stream'] as const) {
    test(`reads what tableToIPC writes in the ${format} format`, () => {
      const bytes = tableToIPC(sample, format);
      assert.equal(arrowIpcKind(bytes), format);
      const table = tableFromArrowBytes(bytes);
      assert.equal(table.numRows, 3);
      assert.deepEqual(
        table.schema.fields.map((f) => f.name),
        ['_row_id', 'a', 'b'],
      );
      assert.deepEqual(
        table.toArray().map((r) => r.toJSON()),
        [
          { _row_id: 0, a: 10, b: 'x' },
          { _row_id: 1, a: 20, b: 'y' },
          { _row_id: 2, a: 30, b: 'z' },
        ],
      );
    });
  }

  test('an existing _row_id column is replaced by positions', () => {
    const withIds = tableFromArrays({ b: ['x', 'y'], _row_id: Int32Array.from([7, 9]) });
    const table = tableFromArrowBytes(tableToIPC(withIds, 'stream'));
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['_row_id', 'b'],
    );
    assert.deepEqual(Array.from(table.getChild('_row_id')!), [0, 1]);
  });

  test('a table with a schema and no rows is read as zero rows', () => {
    const empty = tableFromArrays({ a: new Int32Array(0) });
    const table = tableFromArrowBytes(tableToIPC(empty, 'file'));
    assert.equal(table.numRows, 0);
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['_row_id', 'a'],
    );
  });

  // arrow-js itself returns a shorter table for a stream cut on a message
  // boundary; reading fewer rows than were written must be an error.
  test('a stream without its end-of-stream marker is an error, not fewer rows', () => {
    const bytes = tableToIPC(sample, 'stream');
    assert.equal(tableFromIPC(bytes.subarray(0, bytes.length - 8)).numRows, 3);
    assertUnreadable(() => tableFromArrowBytes(bytes.subarray(0, bytes.length - 8)));
  });

  test('a file without its closing magic is an error', () => {
    const bytes = tableToIPC(sample, 'file');
    assertUnreadable(() => tableFromArrowBytes(bytes.subarray(0, bytes.length - 20)));
    assertUnreadable(() => tableFromArrowBytes(bytes.subarray(0, 8)));
  });

  test('a file whose middle is damaged is an error', () => {
    const bytes = Uint8Array.from(tableToIPC(sample, 'file'));
    bytes.fill(0x7f, 8, bytes.length - 10);
    assertUnreadable(() => tableFromArrowBytes(bytes));
  });

  test('empty input, junk, Feather v1 and bare markers are errors', () => {
    assertUnreadable(() => tableFromArrowBytes(new Uint8Array(0)));
    assertUnreadable(() => tableFromArrowBytes(Buffer.from('hello, this is not arrow')));
    assertUnreadable(() => tableFromArrowBytes(Buffer.from('FEA1 and then some bytes FEA1')));
  });

  test('a bare end-of-stream marker (no schema) is an error, though arrow-js reads it as an empty table', () => {
    const eos = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    assert.equal(tableFromIPC(eos).schema.fields.length, 0);
    assertUnreadable(() => tableFromArrowBytes(eos));
  });
});

/** Peak resident set size of this process so far, in bytes. */
function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

describe('tableFromArrowBytes: corrupt batches are refused before anything is built from them', () => {
  const rows = 4242;
  const table = new Table({
    n: vectorFromArray(Int32Array.from({ length: rows }, (_, i) => i)),
    s: vectorFromArray(
      Array.from({ length: rows }, (_, i) => `v${i}`),
      new Utf8(),
    ),
  });
  const stream = tableToIPC(table, 'stream');
  const corrupt: Record<string, Uint8Array> = {
    'claims 1,000,000,000 rows': patchFirstBatch(stream, { length: 1_000_000_000, nodeLength: 1_000_000_000 }),
    'has a Utf8 offset past its data': patchFirstBatch(stream, { body: (body, regions) => setInt32(body, regions, 3, rows, 1 << 30) }),
    'has a buffer shorter than its column': patchFirstBatch(stream, { bufferLength: { index: 1, length: 64 } }),
  };
  for (const [what, bytes] of Object.entries(corrupt)) {
    for (const format of ['stream', 'file'] as const) {
      test(`a ${format} whose batch ${what}: S2SP_ERR_INPUT_UNREADABLE, without a memory blow-up`, () => {
        const before = peakRss();
        assert.throws(
          () => tableFromArrowBytes(format === 'file' ? fileOf(bytes) : bytes),
          (err: unknown) => {
            const { code, message } = err as { code?: unknown; message: string };
            return code === 'S2SP_ERR_INPUT_UNREADABLE' && /column "(n|s)"/.test(message);
          },
        );
        const growth = peakRss() - before;
        assert.ok(growth < 64 * 2 ** 20, `peak RSS grew by ${(growth / 2 ** 20).toFixed(0)} MiB`);
      });
    }
  }

  test('the file writer of these tests makes files the reader takes', () => {
    assert.equal(tableFromArrowBytes(fileOf(stream)).numRows, rows);
  });
});
