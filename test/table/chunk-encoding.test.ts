import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeChunk } from '../../src/table/chunk-encoding.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { codeThrownBy } from '../support/code-of.js';

test('a compressed chunk asked for without its compressor is an invariant error from the catalogue', () => {
  const table = tableFromRows([{ a: 1 }, { a: 2 }]);
  const code = codeThrownBy(() => encodeChunk(table, { start: 0, end: 2 }, { kind: 'arrow', codec: 'lz4' }));
  assert.equal(code, 'S2SP_ERR_INTERNAL_INVARIANT');
});
