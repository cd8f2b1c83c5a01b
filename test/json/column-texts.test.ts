/**
 * The texts writers of columns (src/json/column-texts.ts): for every type of
 * the type matrix, the texts of consecutive rows and of rows scattered over
 * several chunks are the JSON the README gives for each element, nulls
 * included; a CellTexts takes several runs after one another.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  Type,
  Utf8,
  vectorFromArray,
  type Data,
  type Field,
} from 'apache-arrow';
import { CellTexts } from '../../src/json/cell-texts.js';
import { columnTexts, integerTexts } from '../../src/json/column-texts.js';
import { MATRIX, MATRIX_ROWS, matrixTable } from '../support/type-matrix.js';

/** Every cell `out` holds, as text. */
function cells(out: CellTexts): string[] {
  const bytes = Buffer.from(out.writer.buf.buffer, out.writer.buf.byteOffset, out.writer.pos);
  return Array.from({ length: out.count }, (_, k) => bytes.toString('utf8', out.startOf(k), out.ends[k]));
}

/**
 * `data` in buffers of its own: strings built again from their values (an
 * IPC stream of a slice keeps the whole value buffer), the others through
 * an IPC stream.
 */
function ownBuffers(field: Field, data: Data): Data {
  if (data.typeId === Type.Utf8) return vectorFromArray([...makeVector(data)], new Utf8()).data[0];
  const batch = new RecordBatch(new Schema([field]), makeData({ type: new Struct([field]), length: data.length, children: [data] }));
  return tableFromIPC(tableToIPC(new Table(batch), 'stream')).batches[0].data.children[0];
}

/** The matrix column `name`: its field, and its one chunk. */
function matrixColumn(name: string) {
  const table = matrixTable();
  const c = table.schema.fields.findIndex((f) => f.name === name);
  return { field: table.schema.fields[c], data: table.batches[0].data.children[c] };
}

test('every type of the matrix: the texts of consecutive rows are the JSON of each element', () => {
  for (const column of MATRIX) {
    const { field, data } = matrixColumn(column.name);
    const texts = columnTexts(field, [data]);
    const out = new CellTexts(1, 16);
    out.clear(MATRIX_ROWS);
    texts(null, 0, MATRIX_ROWS, out);
    assert.deepEqual(cells(out), column.json, `${column.name}: every row`);
    out.clear(MATRIX_ROWS);
    texts(null, 2, 5, out);
    assert.deepEqual(cells(out), column.json.slice(2, 5), `${column.name}: rows 2..4`);
  }
});

test('every type of the matrix: rows scattered over several chunks (sliced, so with offsets), in any order, repeated', () => {
  // Chunks as a body's stored batches: rows 0..1, 2..4 and 5 (the null row) of the matrix.
  const bounds = [0, 2, 5, MATRIX_ROWS];
  const rows = [4, 5, 0, 0, 3, 1, 2, 5];
  const batchAt = Int32Array.from(rows, (r) => bounds.findIndex((_, b) => r < bounds[b + 1]));
  const rowAt = Int32Array.from(rows, (r, k) => r - bounds[batchAt[k]]);
  for (const column of MATRIX) {
    const { field, data } = matrixColumn(column.name);
    // The types with loops of their own get each chunk in buffers of its own (an IPC round trip), as a
    // body's stored batches may be; the others are written per chunk by their codecs. (arrow-js does not
    // write a slice of a view type back as the same values, so those stay slices.)
    const own = [Type.Int, Type.Float, Type.Utf8].includes(data.typeId);
    const chunks = [0, 1, 2].map((b) => data.slice(bounds[b], bounds[b + 1] - bounds[b])).map((d) => (own ? ownBuffers(field, d) : d));
    const texts = columnTexts(field, chunks);
    const out = new CellTexts(1, 16);
    out.clear(rows.length);
    texts({ batchAt, rowAt }, 0, rows.length, out);
    assert.deepEqual(
      cells(out),
      rows.map((r) => column.json[r]),
      `${column.name}: scattered`,
    );
    // Runs appended one after another to the same texts, the first from the middle of the list.
    out.clear(rows.length);
    texts({ batchAt, rowAt }, 3, 6, out);
    texts({ batchAt, rowAt }, 6, rows.length, out);
    assert.deepEqual(
      cells(out),
      rows.slice(3).map((r) => column.json[r]),
      `${column.name}: two runs`,
    );
  }
});

test('integerTexts: the texts of ids, signs and the 2^31 and 2^53 edges included, NaN as null; the writer grows as it needs', () => {
  const values = [0, 7, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 53 - 1, -(2 ** 53 - 1), 100_000_000, NaN, 99_999_999];
  const out = new CellTexts(1, 16);
  out.clear(values.length);
  integerTexts(values, 0, values.length, out);
  assert.deepEqual(
    cells(out),
    values.map((v) => (Number.isNaN(v) ? 'null' : String(v))),
  );
});
