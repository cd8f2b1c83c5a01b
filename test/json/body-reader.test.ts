/**
 * The consumer's JSON path keeps every value: integers beyond 2^53 come back
 * exact (JSON.parse would round them without a word), Python's bare NaN is
 * read, and what cannot be a body still fails the transfer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type Int } from 'apache-arrow';
import { bodyFromJson } from '../../src/json/body-reader.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { codeThrownBy } from '../support/code-of.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

test('int64 and uint64 digits beyond 2^53 come back exact, in Int64/UInt64 columns', () => {
  const doc =
    '{"body":[{"_row_id":0,"id":9007199254740993,"u":18446744073709551615,"small":1},' +
    '{"_row_id":1,"id":-9223372036854775808,"u":0,"small":2}],"total_rows":2,"columns_returned":["_row_id","id","u","small"]}';
  const { table, totalRows } = bodyFromJson(utf8(doc));
  assert.equal(totalRows, 2);
  const types = table.schema.fields.map((f) => [f.name, f.type.typeId, (f.type as Int).bitWidth, (f.type as Int).isSigned]);
  assert.deepEqual(types, [
    ['_row_id', Type.Int, 32, true],
    ['id', Type.Int, 64, true],
    ['u', Type.Int, 64, false],
    ['small', Type.Int, 32, true],
  ]);
  assert.deepStrictEqual(rowsFromTable(table), [
    { _row_id: 0, id: 9007199254740993n, u: 18446744073709551615n, small: 1 },
    { _row_id: 1, id: -9223372036854775808n, u: 0, small: 2 },
  ]);
  // The control: the digits JSON.parse would have given.
  assert.equal(JSON.parse(doc).body[0].id, 9007199254740992);
});

test('an integer beyond 64 bits (a Python server may send one) stays exact as JSON text', () => {
  const { table } = bodyFromJson(utf8('{"body":[{"_row_id":0,"n":1180591620717411303424},{"_row_id":1,"n":5}],"total_rows":2}'));
  assert.deepStrictEqual(
    rowsFromTable(table).map((r) => r.n),
    [1180591620717411303424n, 5],
  );
});

test("Python's bare NaN and Infinity are read; floats come back as the JSON encoding spells them", () => {
  const { table } = bodyFromJson(utf8('{"body":[{"_row_id":0,"x":NaN},{"_row_id":1,"x":-Infinity},{"_row_id":2,"x":2.5}],"total_rows":3}'));
  assert.equal(table.schema.fields[1].type.typeId, Type.Float);
  assert.deepStrictEqual(
    rowsFromTable(table).map((r) => r.x),
    ['NaN', '-Infinity', 2.5],
  );
});

test('our own "NaN" strings beside numbers keep every value (a JSON-text column)', () => {
  const { table } = bodyFromJson(utf8('{"body":[{"_row_id":0,"x":"NaN"},{"_row_id":1,"x":2.0},{"_row_id":2,"x":-0.0}],"total_rows":3}'));
  assert.deepStrictEqual(
    rowsFromTable(table).map((r) => r.x),
    ['NaN', 2, -0],
  );
});

test('a _row_id beyond 2^53, or a body cut short after a big integer, fails the transfer', () => {
  assert.equal(
    codeThrownBy(() => bodyFromJson(utf8('{"body":[{"_row_id":9007199254740993}],"total_rows":1}'))),
    'S2SP_ERR_CONSUMER_RESPONSE_INVALID',
  );
  assert.equal(
    codeThrownBy(() => bodyFromJson(utf8('{"body":[{"_row_id":0,"id":9007199254740993}'))),
    'S2SP_ERR_CONSUMER_RESPONSE_INVALID',
  );
  assert.equal(
    codeThrownBy(() => bodyFromJson(utf8('{"body":[{"_row_id":0,"id":9007199254740993}],"total_rows":1}'))),
    undefined,
  );
});
