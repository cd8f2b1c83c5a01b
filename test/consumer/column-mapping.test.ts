import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyColumnMapping, parseColumnMapping, tableWithColumnMapping } from '../../src/consumer/column-mapping.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { codeThrownBy } from '../support/code-of.js';

test('absent or empty column_mapping is undefined', () => {
  assert.equal(parseColumnMapping(undefined), undefined);
  assert.equal(parseColumnMapping(''), undefined);
  assert.equal(parseColumnMapping('  '), undefined);
});

test('a JSON object of strings parses', () => {
  assert.deepEqual(parseColumnMapping('{"event": "alert_type", "mag": "magnitude"}'), { event: 'alert_type', mag: 'magnitude' });
  assert.deepEqual(parseColumnMapping('{}'), {});
});

test('malformed column_mapping is ARG_INVALID naming the parameter', () => {
  for (const text of ['{', '[]', '"a"', '3', 'null', '{"a": 1}', '{"a": null}', '{"a": ""}', '{"a": ["b"]}']) {
    let error: { code?: string; message: string } | undefined;
    try {
      parseColumnMapping(text);
    } catch (e) {
      error = e as { code?: string; message: string };
    }
    assert.equal(error?.code, 'S2SP_ERR_CONSUMER_ARG_INVALID', text);
    assert.match(error.message, /column_mapping/, text);
  }
});

test('two columns mapped to one name are ARG_INVALID', () => {
  assert.equal(
    codeThrownBy(() => parseColumnMapping('{"a": "x", "b": "x"}')),
    'S2SP_ERR_CONSUMER_ARG_INVALID',
  );
});

test('_row_id on either side is ARG_INVALID', () => {
  assert.equal(
    codeThrownBy(() => parseColumnMapping('{"_row_id": "id"}')),
    'S2SP_ERR_CONSUMER_ARG_INVALID',
  );
  assert.equal(
    codeThrownBy(() => parseColumnMapping('{"id": "_row_id"}')),
    'S2SP_ERR_CONSUMER_ARG_INVALID',
  );
});

test('applyColumnMapping renames keys in place, _row_id first', () => {
  const row = { _row_id: 4, event: 'Wind', severity: 'Moderate', area: 'CA' };
  const out = applyColumnMapping(row, { event: 'alert_type', area: 'region' });
  assert.deepEqual(out, { _row_id: 4, alert_type: 'Wind', severity: 'Moderate', region: 'CA' });
  assert.deepEqual(Object.keys(out), ['_row_id', 'alert_type', 'severity', 'region']);
  assert.deepEqual(row, { _row_id: 4, event: 'Wind', severity: 'Moderate', area: 'CA' }, 'input untouched');
});

test('applyColumnMapping puts _row_id first even when it was not', () => {
  const out = applyColumnMapping({ a: 1, _row_id: 0 }, { a: 'b' });
  assert.deepEqual(Object.keys(out), ['_row_id', 'b']);
});

test('applyColumnMapping without a mapping returns the row itself', () => {
  const row = { _row_id: 0, a: 1 };
  assert.equal(applyColumnMapping(row, undefined), row);
});

test('renames are simultaneous: a swap works', () => {
  assert.deepEqual(applyColumnMapping({ _row_id: 0, a: 1, b: 2 }, { a: 'b', b: 'a' }), { _row_id: 0, b: 1, a: 2 });
});

test('a renamed column replaces an unrenamed column of the same name', () => {
  assert.deepEqual(applyColumnMapping({ _row_id: 0, a: 1, b: 2 }, { a: 'b' }), { _row_id: 0, b: 1 });
  assert.deepEqual(applyColumnMapping({ _row_id: 0, b: 2, a: 1 }, { a: 'b' }), { _row_id: 0, b: 1 });
});

test('a mapping key from the prototype is not a rename', () => {
  const out = applyColumnMapping({ _row_id: 0, constructor: 'c', toString: 't' }, parseColumnMapping('{"x": "y"}'));
  assert.deepEqual(out, { _row_id: 0, constructor: 'c', toString: 't' });
});

test('a __proto__ column survives as data', () => {
  const mapping = parseColumnMapping('{"__proto__": "proto"}');
  const row = JSON.parse('{"_row_id": 0, "__proto__": {"polluted": true}}');
  const out = applyColumnMapping(row, mapping);
  assert.deepEqual(Object.keys(out), ['_row_id', 'proto']);
  assert.deepEqual(out.proto, { polluted: true });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('tableWithColumnMapping gives the rows applyColumnMapping gives, key order included', () => {
  const rows = [
    { _row_id: 0, event: 'Wind', severity: 'Moderate', area: 'CA', meta: { depth: 3 } },
    { _row_id: 1, event: 'Flood', severity: null, area: 'OR', meta: [1, 2] },
  ];
  const table = tableFromRows(rows, { preserveRowIds: true });
  const mappings: Record<string, string>[] = [
    { event: 'alert_type', area: 'region' },
    { event: 'severity' }, // shadows a later column
    { area: 'event' }, // shadows an earlier column
    { event: 'area', area: 'event' }, // a swap
    { meta: 'details', missing: 'severity' }, // a source the table lacks shadows nothing
  ];
  for (const mapping of mappings) {
    const renamed = tableWithColumnMapping(table, mapping);
    const expected = rowsFromTable(table).map((row) => applyColumnMapping(row, mapping));
    const got = rowsFromTable(renamed);
    assert.deepEqual(got, expected, JSON.stringify(mapping));
    assert.deepEqual(
      renamed.schema.fields.map((f) => f.name),
      Object.keys(expected[0]),
      JSON.stringify(mapping),
    );
  }
});

test('tableWithColumnMapping shares column buffers and puts _row_id first', () => {
  const table = tableFromRows([{ _row_id: 7, a: 'x', b: 1.5 }], { preserveRowIds: true });
  const renamed = tableWithColumnMapping(table, { a: 'alpha' });
  assert.equal(renamed.getChild('alpha')?.data[0], table.getChild('a')?.data[0], 'same Data, not a copy');
  assert.equal(tableWithColumnMapping(table, undefined), table);

  const idLast = table.selectAt([1, 2, 0]);
  assert.deepEqual(
    tableWithColumnMapping(idLast, { b: 'beta' }).schema.fields.map((f) => f.name),
    ['_row_id', 'a', 'beta'],
  );
  const empty = tableWithColumnMapping(tableFromRows([]), { a: 'alpha' });
  assert.equal(empty.numRows, 0);
});
