import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteWriter } from '../../src/json/byte-writer.js';
import { columnCodec } from '../../src/json/column-codec.js';
import { parseJsonExact } from '../../src/json/exact-json.js';
import { MATRIX, MATRIX_ROWS, matrixTable } from '../support/type-matrix.js';

test('every type of the matrix: write gives its JSON text, and read gives what an exact reader takes that text for', () => {
  const table = matrixTable();
  for (const column of MATRIX) {
    const c = table.schema.fields.findIndex((f) => f.name === column.name);
    const field = table.schema.fields[c];
    const data = table.batches[0].data.children[c];
    const codec = columnCodec(field, data);
    for (let i = 0; i < MATRIX_ROWS; i++) {
      const w = new ByteWriter(64);
      codec.write(w, i);
      const text = Buffer.from(w.take()).toString('utf8');
      assert.equal(text, column.json[i], `${column.name}[${i}] written`);
      assert.deepEqual(codec.read(i), parseJsonExact(text), `${column.name}[${i}] read`);
    }
  }
});
