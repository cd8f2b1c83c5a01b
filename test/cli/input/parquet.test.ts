import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFile } from 'node:fs/promises';
import {
  Binary,
  Bool,
  Float64,
  Int32,
  Int64,
  LargeBinary,
  LargeUtf8,
  Table,
  TimeUnit,
  Timestamp,
  Type,
  Utf8,
  makeVector,
  tableToIPC,
  vectorFromArray,
} from 'apache-arrow';
import { PARQUET_PROGRESS_MIN_BYTES, tableFromParquetBytes } from '../../../src/cli/input/parquet.js';
import { readTableFile } from '../../../src/cli/input/read-table-file.js';
import { formatFromBytes } from '../../../src/cli/input/table-file-format.js';
import { rowsFromTable } from '../../../src/table/rows-from-table.js';
import { createTempDir, vegaData, type TempDir } from './fixtures.js';

type ParquetWasm = typeof import('parquet-wasm');
type Builder = InstanceType<ParquetWasm['WriterPropertiesBuilder']>;

let tmp: TempDir;
before(async () => {
  tmp = await createTempDir('s2sp-parquet-');
});
after(async () => {
  await tmp.remove();
});

/** Writes `table` as Parquet with parquet-wasm's writer (ZSTD unless `configure` says otherwise). */
async function parquetBytes(table: Table, configure?: (b: Builder, pw: ParquetWasm) => Builder): Promise<Uint8Array> {
  const pw = await import('parquet-wasm');
  let builder = new pw.WriterPropertiesBuilder().setCompression(pw.Compression.ZSTD);
  if (configure) builder = configure(builder, pw);
  return pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(table, 'stream')), builder.build());
}

const T0_MS = 978307260000; // 2001-01-01T00:01:00Z

/** Ints, floats, strings with nulls, and the types the reader narrows or keeps. */
const MIXED = new Table({
  i32: vectorFromArray([1, -2, null, 2147483647], new Int32()),
  i64: vectorFromArray([2n ** 40n, null, -5n, 0n], new Int64()),
  f64: vectorFromArray([1.5, null, -0.25, 1e300], new Float64()),
  name: vectorFromArray(['Oslo', null, '', 'Zürich 🚀'], new Utf8()),
  large: vectorFromArray(['a', null, 'bc', ''], new LargeUtf8()),
  blob: vectorFromArray([Uint8Array.of(1, 2), null, Uint8Array.of(), Uint8Array.of(255)], new LargeBinary()),
  // arrow-js's builder takes epoch ms and stores microseconds.
  when: vectorFromArray([T0_MS, T0_MS + 1500, null, T0_MS + 7], new Timestamp(TimeUnit.MICROSECOND)),
  flag: vectorFromArray([true, false, null, true], new Bool()),
});

const MIXED_ROWS = [
  { _row_id: 0, i32: 1, i64: 2 ** 40, f64: 1.5, name: 'Oslo', large: 'a', blob: 'AQI=', when: '2001-01-01T00:01:00.000000', flag: true },
  { _row_id: 1, i32: -2, i64: null, f64: null, name: null, large: null, blob: null, when: '2001-01-01T00:01:01.500000', flag: false },
  { _row_id: 2, i32: null, i64: -5, f64: -0.25, name: '', large: 'bc', blob: '', when: null, flag: null },
  { _row_id: 3, i32: 2147483647, i64: 0, f64: 1e300, name: 'Zürich 🚀', large: '', blob: '/w==', when: '2001-01-01T00:01:00.007000', flag: true },
];

/** Asserts `S2SP_ERR_INPUT_UNREADABLE` naming the file. */
async function assertUnreadable(path: string): Promise<void> {
  await assert.rejects(readTableFile(path), (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, 'S2SP_ERR_INPUT_UNREADABLE');
    assert.ok((err as Error).message.includes(JSON.stringify(path)), (err as Error).message);
    return true;
  });
}

describe('Parquet: values round-trip', () => {
  test('ints, floats, strings with nulls, large types, timestamps, booleans', async () => {
    const loaded = await readTableFile(await tmp.write('mixed.parquet', await parquetBytes(MIXED)));
    assert.equal(loaded.format, 'parquet');
    assert.deepEqual(rowsFromTable(loaded.table), MIXED_ROWS);
  });

  test('LargeUtf8 -> Utf8 and LargeBinary -> Binary; Timestamp keeps its unit', async () => {
    const table = await tableFromParquetBytes(await parquetBytes(MIXED));
    const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, f.type]));
    assert.ok(types._row_id instanceof Int32);
    assert.equal(types.large.typeId, Type.Utf8);
    assert.equal(types.blob.typeId, Type.Binary);
    assert.ok(types.blob instanceof Binary);
    assert.ok(types.when instanceof Timestamp);
    assert.equal((types.when as Timestamp).unit, TimeUnit.MICROSECOND);
    // The narrowed column survives an IPC round trip through arrow-js's writer.
    assert.deepEqual(rowsFromTable(table), rowsFromTable(await tableFromParquetBytes(await parquetBytes(table))));
  });

  test('several row groups in a small file: one read, rows in order, no progress', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => i * 10);
    const bytes = await parquetBytes(new Table({ n: vectorFromArray(rows, new Int32()) }), (b) => b.setMaxRowGroupSize(2));
    const messages: string[] = [];
    const table = await tableFromParquetBytes(bytes, (m) => messages.push(m));
    assert.deepEqual(
      rowsFromTable(table),
      rows.map((n, i) => ({ _row_id: i, n })),
    );
    assert.deepEqual(messages, []);
  });

  test('a file with no rows keeps its columns', async () => {
    const empty = new Table({ a: vectorFromArray([], new Int32()), s: vectorFromArray([], new Utf8()) });
    const table = await tableFromParquetBytes(await parquetBytes(empty));
    assert.equal(table.numRows, 0);
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['_row_id', 'a', 's'],
    );
  });

  test(`over ${PARQUET_PROGRESS_MIN_BYTES} bytes with many row groups: read a few groups per call, with progress`, async () => {
    const n = 1_200_000;
    const values = Float64Array.from({ length: n }, (_, i) => i * 0.5);
    const bytes = await parquetBytes(new Table({ x: makeVector(values) }), (b, pw) =>
      b.setCompression(pw.Compression.UNCOMPRESSED).setDictionaryEnabled(false).setMaxRowGroupSize(10_000),
    );
    assert.ok(bytes.length > PARQUET_PROGRESS_MIN_BYTES, `${bytes.length} bytes`);
    const messages: string[] = [];
    const table = await tableFromParquetBytes(bytes, (m) => messages.push(m));
    assert.equal(table.numRows, n);
    for (const i of [0, 39_999, 40_000, 777_777, n - 1]) {
      assert.equal(table.getChild('_row_id')!.get(i), i);
      assert.equal(table.getChild('x')!.get(i), i * 0.5);
    }
    // 120 row groups, at most 32 reads: 4 groups per read.
    assert.equal(messages.length, 30);
    assert.equal(messages[0], 'row group 4/120, 40,000 of 1,200,000 rows');
    assert.equal(messages.at(-1), 'row group 120/120, 1,200,000 of 1,200,000 rows');
  });
});

describe('Parquet: detection', () => {
  for (const name of ['t.parquet', 't.pq', 'T.PARQUET']) {
    test(`by extension: ${name}`, async () => {
      const loaded = await readTableFile(await tmp.write(name, await parquetBytes(MIXED)));
      assert.equal(loaded.format, 'parquet');
      assert.equal(loaded.table.numRows, 4);
    });
  }

  test('by the PAR1 magic at both ends, without an extension', async () => {
    const messages: string[] = [];
    const loaded = await readTableFile(await tmp.write('mixed.bin', await parquetBytes(MIXED)), {
      onProgress: (m) => messages.push(m),
    });
    assert.equal(loaded.format, 'parquet');
    assert.ok(
      messages.some((m) => m.includes('format parquet (from content)')),
      messages.join('\n'),
    );
    assert.deepEqual(rowsFromTable(loaded.table), MIXED_ROWS);
  });

  test('PAR1 at the start only is not Parquet: a CSV may have a column named PAR1', async () => {
    assert.equal(formatFromBytes(Buffer.from('PAR1,PAR2\n1,2\n')), 'csv');
    const loaded = await readTableFile(await tmp.write('params', 'PAR1,PAR2\n1,2\n'));
    assert.equal(loaded.format, 'csv');
    assert.deepEqual(rowsFromTable(loaded.table), [{ _row_id: 0, PAR1: 1, PAR2: 2 }]);
  });
});

describe('Parquet: unreadable files are S2SP_ERR_INPUT_UNREADABLE', () => {
  test('junk between the magics, empty, no closing magic, encrypted footer', async () => {
    await assertUnreadable(await tmp.write('junk.parquet', 'PAR1 this is not a parquet file PAR1'));
    await assertUnreadable(await tmp.write('junk-noext', 'PAR1 this is not a parquet file PAR1'));
    await assertUnreadable(await tmp.write('empty.parquet', ''));
    await assertUnreadable(await tmp.write('csv.parquet', 'a,b\n1,2\n'));
    const bytes = await parquetBytes(MIXED);
    await assertUnreadable(await tmp.write('cut.parquet', bytes.subarray(0, bytes.length - 10)));
    const encrypted = Uint8Array.from(bytes);
    encrypted.set(Buffer.from('PARE'), encrypted.length - 4);
    await assertUnreadable(await tmp.write('encrypted.parquet', encrypted));
  });

  test('corrupt column data', async () => {
    const corrupt = Uint8Array.from(await parquetBytes(MIXED));
    for (let i = 4; i < 200; i++) corrupt[i] ^= 0x5a;
    await assertUnreadable(await tmp.write('corrupt.parquet', corrupt));
  });

  // parquet-wasm's async reader throws a Rust panic from a microtask, which
  // killed the process; found by fuzzing flights-3m's footer.
  test('a footer that makes the Rust reader panic is an error, not a crashed process', async () => {
    const bytes = Uint8Array.from(await readFile(vegaData('flights-3m.parquet')));
    bytes[bytes.length - 442] = 86;
    await assert.rejects(
      tableFromParquetBytes(bytes, () => {}),
      (err: unknown) => {
        assert.equal((err as { code?: unknown }).code, 'S2SP_ERR_INPUT_UNREADABLE');
        return true;
      },
    );
    // The wasm instance still reads after the panic.
    const loaded = await readTableFile(await tmp.write('after-panic.parquet', await parquetBytes(MIXED)));
    assert.deepEqual(rowsFromTable(loaded.table), MIXED_ROWS);
  });
});

describe('Parquet: flights-3m.parquet (vega-datasets)', () => {
  test('3,000,000 rows in 11 row groups, _row_id first, dates as ISO 8601 text, progress per row group', async () => {
    const path = vegaData('flights-3m.parquet');
    assert.ok((await readFile(path)).length > PARQUET_PROGRESS_MIN_BYTES);
    const messages: string[] = [];
    const { table, format } = await readTableFile(path, { onProgress: (m) => messages.push(m) });
    assert.equal(format, 'parquet');
    assert.equal(table.numRows, 3_000_000);
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['_row_id', 'date', 'delay', 'distance', 'origin', 'destination'],
    );
    assert.ok(table.schema.fields[0].type instanceof Int32);
    assert.equal(table.schema.fields[4].type.typeId, Type.Utf8);
    const ids = table.getChild('_row_id')!;
    for (const i of [0, 1, 272_726, 272_727, 1_500_000, 2_999_999]) assert.equal(ids.get(i), i);

    const [first] = rowsFromTable(table.slice(0, 1));
    assert.equal(typeof first.date, 'string');
    assert.match(first.date as string, /^2001-\d\d-\d\dT\d\d:\d\d:\d\d/);
    assert.deepEqual({ ...first, date: undefined }, { _row_id: 0, date: undefined, delay: 33, distance: 2176, origin: 'LAS', destination: 'PHL' });

    const groups = messages.filter((m) => m.includes('row group'));
    assert.equal(groups.length, 11, messages.join('\n'));
    assert.ok(groups[2].endsWith('row group 3/11, 818,181 of 3,000,000 rows'), groups[2]);
    assert.ok(groups[2].startsWith(`reading ${JSON.stringify(path)}: `), groups[2]);
  });
});
