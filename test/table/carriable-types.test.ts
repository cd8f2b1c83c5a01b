/**
 * A column no body can carry exactly is refused when the table is cached,
 * with S2SP_ERR_TABLE_UNSUPPORTED_TYPE naming it, never served garbled; the
 * resource tool answers that as a tool error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Dictionary, Field, Int32, List, Struct, Table, TimeUnit, Timestamp, Utf8, makeData, makeVector, vectorFromArray, type Vector } from 'apache-arrow';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { ERROR_CODE_META_KEY } from '../../src/control/tool-results.js';
import { withRowIds } from '../../src/table/with-row-ids.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { codeThrownBy } from '../support/code-of.js';

const dictionaryType = new Dictionary(new Utf8(), new Int32());
const colors = vectorFromArray(['red', 'green', 'red'], dictionaryType);

/** A List<Dictionary<Int32, Utf8>> column: three one-element lists. */
function nestedDictionary(): Vector {
  const listType = new List(new Field('item', dictionaryType, true));
  return makeVector(makeData({ type: listType, length: 3, nullCount: 0, valueOffsets: Int32Array.of(0, 1, 2, 3), child: colors.data[0] }));
}

function zoned(zone: string): Vector {
  return vectorFromArray([0, 1000], new Timestamp(TimeUnit.MILLISECOND, zone));
}

function duplicateFields(): Vector {
  const type = new Struct([new Field('a', new Int32(), true), new Field('a', new Utf8(), true)]);
  const children = [vectorFromArray([1, 2], new Int32()).data[0], vectorFromArray(['x', 'y'], new Utf8()).data[0]];
  return makeVector(makeData({ type, length: 2, nullCount: 0, children }));
}

const REFUSED: Array<[string, () => Table]> = [
  ['a dictionary inside a list', () => new Table({ tags: nestedDictionary() })],
  [
    'a dictionary inside a struct',
    () =>
      new Table({ s: makeVector(makeData({ type: new Struct([new Field('c', dictionaryType, true)]), length: 3, nullCount: 0, children: [colors.data[0]] })) }),
  ],
  ['an unknown time zone', () => new Table({ when: zoned('Mars/Olympus_Mons') })],
  ['a struct with two fields named a', () => new Table({ s: duplicateFields() })],
];

for (const [label, build] of REFUSED) {
  test(`refused at put: ${label}`, () => {
    assert.equal(
      codeThrownBy(() => withRowIds(build())),
      'S2SP_ERR_TABLE_UNSUPPORTED_TYPE',
    );
  });
}

test('carried: a top-level dictionary (decoded when cached), known zones, fixed offsets', () => {
  const table = withRowIds(
    new Table({ color: vectorFromArray(['red', 'green'], dictionaryType), ny: zoned('America/New_York'), fixed: zoned('+05:30'), utc: zoned('UTC') }),
  );
  assert.deepEqual(rowsFromTable(table), [
    { _row_id: 0, color: 'red', ny: '1969-12-31T19:00:00.000-05:00', fixed: '1970-01-01T05:30:00.000+05:30', utc: '1970-01-01T00:00:00.000+00:00' },
    { _row_id: 1, color: 'green', ny: '1969-12-31T19:00:01.000-05:00', fixed: '1970-01-01T05:30:01.000+05:30', utc: '1970-01-01T00:00:01.000+00:00' },
  ]);
});

test('a resource tool returning such a table answers a tool error with the code, and caches nothing', async (t) => {
  const server = new S2SPServer({ name: 'refuse' });
  server.resourceTool('tags', { description: 'nested dictionary' }, () => new Table({ tags: nestedDictionary() }));
  await server.listen();
  const client = await connectInMemory(server, t);
  for (const mode of ['async', 'sync']) {
    const result = (await client.callTool({ name: 'tags', arguments: { abstract_domains: 'tags', mode } })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.equal(result._meta?.[ERROR_CODE_META_KEY], 'S2SP_ERR_TABLE_UNSUPPORTED_TYPE');
    assert.match((result.content[0] as { text: string }).text, /"tags\.item"/);
  }
});

test('store.put refuses such a table even when it already carries _row_id (so withRowIds is skipped)', async (t) => {
  const store = new MemoryStore();
  t.after(() => store.close());
  const body = new Table({ _row_id: makeVector(Int32Array.of(0, 1)), when: zoned('Mars/Olympus_Mons') });
  await assert.rejects(store.put(body), { code: 'S2SP_ERR_TABLE_UNSUPPORTED_TYPE' });
  const fine = new Table({ _row_id: makeVector(Int32Array.of(0, 1)), when: zoned('UTC') });
  assert.ok((await store.put(fine)).token);
});
