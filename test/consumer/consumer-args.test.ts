import { WholeFloat } from '../../src/json/whole-float.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isGiven, parseAbstractData, parseBodyData } from '../../src/consumer/consumer-args.js';

function errorOf(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  assert.fail('expected a throw');
}

test('"*" means every row', () => {
  assert.equal(parseAbstractData('*'), '*');
  assert.equal(parseAbstractData('  * \n'), '*');
});

test('abstract rows parse', () => {
  assert.deepEqual(parseAbstractData('[{"_row_id":0,"a":1},{"_row_id":7}]'), [{ _row_id: 0, a: 1 }, { _row_id: 7 }]);
  assert.deepEqual(parseAbstractData('[]'), []);
});

test('malformed abstract_data is ARG_INVALID naming the parameter and row', () => {
  const cases: [string, RegExp][] = [
    ['', /abstract_data is missing/],
    ['[{', /abstract_data is not valid JSON/],
    ['{"_row_id":0}', /abstract_data must be a JSON array/],
    ['["a"]', /abstract_data row 0 is not a JSON object/],
    [
      '[{"_row_id":0},{"_row_id":1},{"_row_id":2},{"a":1}]',
      /abstract_data row 3 has no _row_id; pass the abstract rows exactly as the resource tool returned them/,
    ],
    ['[{"_row_id":"0"}]', /abstract_data row 0 has _row_id "0"/],
    ['[{"_row_id":-1}]', /abstract_data row 0/],
    ['[{"_row_id":0.5}]', /abstract_data row 0/],
    ['[{"_row_id":null}]', /abstract_data row 0/],
    ['[{"_row_id":4294967296}]', /abstract_data row 0/],
  ];
  for (const [text, pattern] of cases) {
    const error = errorOf(() => parseAbstractData(text));
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID', text);
    assert.match(error.message, pattern, text);
  }
});

test('abstract_data as a bare array of _row_ids', () => {
  assert.deepEqual(parseAbstractData('[3, 0, 7]'), [{ _row_id: 3 }, { _row_id: 0 }, { _row_id: 7 }]);
  for (const text of ['[1, {"_row_id":2}]', '[1, -1]', '[1, 2.5]', '[0, "1"]', '[0, null]', '[4294967296]']) {
    const error = errorOf(() => parseAbstractData(text));
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID', text);
    assert.match(error.message, /abstract_data item 1|abstract_data item 0/, text);
  }
});

test('abstract_data in the columns layout becomes row objects, _row_id first', () => {
  assert.deepEqual(parseAbstractData('[["_row_id","mag","place"],[4,5.1,"A"],[0,2,null]]'), [
    { _row_id: 4, mag: 5.1, place: 'A' },
    { _row_id: 0, mag: 2, place: null },
  ]);
  // _row_id anywhere in the header; a header alone selects nothing.
  assert.deepEqual(parseAbstractData('[["mag","_row_id"],[5.1,4]]'), [{ _row_id: 4, mag: 5.1 }]);
  assert.deepEqual(parseAbstractData('[["_row_id","mag"]]'), []);
  // A column named __proto__ stays a column, as it does in the rows shape.
  const [row] = parseAbstractData('[["_row_id","__proto__"],[1,{"x":1}]]') as Record<string, unknown>[];
  assert.deepEqual(Object.keys(row), ['_row_id', '__proto__']);
  assert.equal(Object.getPrototypeOf(row), Object.prototype);
});

test('a malformed columns layout is ARG_INVALID naming the row', () => {
  const cases: [string, RegExp][] = [
    ['[[4,5.1,"A"],[0,2,null]]', /abstract_data starts with an array, but that first array is not the header/],
    ['[["mag","place"],[5.1,"A"]]', /abstract_data header has no _row_id/],
    ['[["_row_id","mag","mag"],[1,2,3]]', /abstract_data header names column "mag" twice/],
    ['[["_row_id","mag"],[1,2],[3]]', /abstract_data row 1 has 1 values for 2 header columns/],
    ['[["_row_id","mag"],[1,2],{"_row_id":3}]', /abstract_data row 1 is not an array/],
    ['[["_row_id","mag"],["1",2]]', /abstract_data row 0 has _row_id "1"/],
    ['[["_row_id","mag"],[-1,2]]', /abstract_data row 0 has _row_id -1/],
  ];
  for (const [text, pattern] of cases) {
    const error = errorOf(() => parseAbstractData(text));
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID', text);
    assert.match(error.message, pattern, text);
  }
});

test('body_data has the same checks, under its own name, and no "*"', () => {
  assert.deepEqual(parseBodyData('[{"_row_id":1,"b":2}]'), [{ _row_id: 1, b: 2 }]);
  for (const text of ['*', '[{"b":2}]', 'nope', '{}']) {
    const error = errorOf(() => parseBodyData(text));
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID', text);
    assert.match(error.message, /body_data/, text);
  }
});

test('a non-string abstract_data (an array passed as is) says it must be a string', () => {
  const error = errorOf(() => parseAbstractData([{ _row_id: 0 }] as unknown as string));
  assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.match(error.message, /abstract_data must be a string holding a JSON array, got an array/);
});

test('isGiven treats blank strings as absent', () => {
  assert.equal(isGiven(undefined), false);
  assert.equal(isGiven(''), false);
  assert.equal(isGiven('  '), false);
  assert.equal(isGiven('x'), true);
});

test('body_data and abstract_data keep integers beyond 2^53 exact (sync-mode bodies pass through the agent as text), body_data its whole floats', () => {
  assert.deepStrictEqual(parseBodyData('[{"_row_id":0,"id":9007199254740993,"f":2.0}]'), [{ _row_id: 0, id: 9007199254740993n, f: new WholeFloat(2) }]);
  assert.deepStrictEqual(parseAbstractData('[{"_row_id":1,"id":-9223372036854775808}]'), [{ _row_id: 1, id: -9223372036854775808n }]);
  const error = errorOf(() => parseAbstractData('[{"_row_id":9007199254740993}]'));
  assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID');
});
