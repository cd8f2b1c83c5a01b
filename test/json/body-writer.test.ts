import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Table, tableFromArrays } from 'apache-arrow';
import { jsonBodyChunks, jsonRowChunks } from '../../src/json/body-writer.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { withRowIds } from '../../src/table/with-row-ids.js';
import { takeRows } from '../../src/table/take-rows.js';

function documentOf(table: Table, chunkChars?: number): { chunks: string[]; doc: any } {
  const chunks = [...jsonBodyChunks(table, chunkChars)];
  return { chunks, doc: JSON.parse(chunks.join('')) };
}

const rows = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `name-${i}`, score: i / 4, nested: i % 2 ? [i] : { i } }));
const expectedBody = rows.map((r, i) => ({ _row_id: i, ...r }));

test('small chunkChars gives many chunks whose concatenation equals the whole document', () => {
  const table = tableFromRows(rows);
  const whole = documentOf(table);
  assert.deepEqual(whole.doc.body, expectedBody);
  assert.equal(whole.chunks.length, 3, 'the default chunk size holds this small body in one row chunk');
  // chunkChars 1: one chunk per row, plus the document's head and tail.
  assert.equal(documentOf(table, 1).chunks.length, rows.length + 2);
  const text = whole.chunks.join('');
  const longestRow = Math.max(...expectedBody.map((r) => JSON.stringify(r).length + 1));
  for (const chunkChars of [16, 100, 1000]) {
    const { chunks, doc } = documentOf(table, chunkChars);
    assert.ok(chunks.length >= Math.floor(text.length / (chunkChars + longestRow)), `chunkChars ${chunkChars}: ${chunks.length} chunks`);
    assert.equal(chunks.join(''), text);
    assert.deepEqual(doc, whole.doc);
  }
});

test('row chunks stay near chunkChars (no giant string)', () => {
  const table = tableFromRows(rows);
  const chunkChars = 500;
  const chunks = [...jsonRowChunks(table, chunkChars)];
  const longestRow = Math.max(...expectedBody.map((r) => JSON.stringify(r).length + 1));
  for (const chunk of chunks) assert.ok(chunk.length < chunkChars + longestRow, `chunk of ${chunk.length} chars`);
});

test('total_rows and columns_returned describe the encoded table', () => {
  const { doc } = documentOf(new Table([takeRows(tableFromRows(rows), Int32Array.of(3, 4, 150))]));
  assert.equal(doc.total_rows, 3);
  assert.deepEqual(doc.columns_returned, ['_row_id', 'id', 'name', 'score', 'nested']);
  assert.deepEqual(
    doc.body.map((r: { _row_id: number }) => r._row_id),
    [3, 4, 150],
  );
});

test('an empty table encodes an empty body', () => {
  const { doc } = documentOf(tableFromRows([]));
  assert.deepEqual(doc, { body: [], total_rows: 0, columns_returned: ['_row_id'] });
});

test('NaN and the infinities in a Float64 column come out as the strings "NaN", "Infinity", "-Infinity"; -0 as -0.0', () => {
  const table = withRowIds(tableFromArrays({ x: Float64Array.from([1.5, NaN, Infinity, -Infinity, -0, 2]) }));
  const text = [...jsonBodyChunks(table)].join('');
  assert.ok(
    text.includes('"x":1.5},{"_row_id":1,"x":"NaN"},{"_row_id":2,"x":"Infinity"},{"_row_id":3,"x":"-Infinity"},{"_row_id":4,"x":-0.0},{"_row_id":5,"x":2.0}'),
    text,
  );
  const { doc } = documentOf(table);
  assert.deepEqual(
    doc.body.map((r: { x: unknown }) => r.x),
    [1.5, 'NaN', 'Infinity', '-Infinity', -0, 2],
  );
});

test('NaN and Infinity in rows land in a Float64 column, so they come out as strings too', () => {
  const { doc } = documentOf(tableFromRows([{ x: NaN }, { x: Infinity }, { x: 2.5 }]));
  assert.deepEqual(doc.body, [
    { _row_id: 0, x: 'NaN' },
    { _row_id: 1, x: 'Infinity' },
    { _row_id: 2, x: 2.5 },
  ]);
});

test('a whole-number float keeps its fraction (Python reads 2.0 as float, 2 as int)', () => {
  const table = withRowIds(tableFromArrays({ f: Float64Array.from([2, -3, 1e20, 1e21, 0.5]), f32: Float32Array.from([2, 0.5, 0, 0, 0]) }));
  const text = [...jsonBodyChunks(table)].join('');
  for (const fragment of ['"f":2.0,"f32":2.0', '"f":-3.0,"f32":0.5', '"f":100000000000000000000.0,', '"f":1e+21,', '"f":0.5,"f32":0.0']) {
    assert.ok(text.includes(fragment), `${fragment} in ${text}`);
  }
});

test('strings with quotes, backslashes, control characters and unicode are escaped', () => {
  const texts = ['say "hi"', 'back\\slash', 'line\nbreak\r\n', 'tab\tand\u0001ctl', '\u2028 \u2029', 'émoji 🌋 日本', '</script>', ''];
  const table = tableFromRows(texts.map((s) => ({ s, inJson: { s } })));
  const { chunks, doc } = documentOf(table, 7);
  assert.deepEqual(
    doc.body,
    texts.map((s, i) => ({ _row_id: i, s, inJson: { s } })),
  );
  assert.ok(!chunks.join('').includes('\n'), 'a raw newline leaked into the JSON text');
});

test('column names are escaped as JSON keys', () => {
  const { doc } = documentOf(tableFromRows([{ 'a"b': 1, 'c\\d': 2, 'new\nline': 3 }]));
  assert.deepEqual(doc.body, [{ _row_id: 0, 'a"b': 1, 'c\\d': 2, 'new\nline': 3 }]);
  assert.deepEqual(doc.columns_returned, ['_row_id', 'a"b', 'c\\d', 'new\nline']);
});

test('int64, bool and null columns encode as JSON scalars', () => {
  const { doc } = documentOf(
    tableFromRows([
      { t: 1517966773840, b: true, z: null },
      { t: null, b: false },
    ]),
  );
  assert.deepEqual(doc.body, [
    { _row_id: 0, t: 1517966773840, b: true, z: null },
    { _row_id: 1, t: null, b: false, z: null },
  ]);
});
