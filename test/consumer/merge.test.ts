import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeByRowId } from '../../src/consumer/merge.js';

test('body rows merge into abstract rows by _row_id, in the abstract order', () => {
  const abstract = [
    { _row_id: 5, event: 'Wind' },
    { _row_id: 1, event: 'Flood' },
  ];
  const body = [
    { _row_id: 1, description: 'river', instruction: 'move up' },
    { _row_id: 5, description: 'gusts', instruction: 'stay in' },
    { _row_id: 9, description: 'unselected', instruction: 'none' },
  ];
  assert.deepEqual(mergeByRowId(abstract, body), [
    { _row_id: 5, description: 'gusts', instruction: 'stay in', event: 'Wind' },
    { _row_id: 1, description: 'river', instruction: 'move up', event: 'Flood' },
  ]);
});

test('abstract values win on a clash; the key keeps the body position', () => {
  const [row] = mergeByRowId([{ _row_id: 0, event: 'edited by agent' }], [{ _row_id: 0, event: 'original', extra: 1 }]);
  assert.deepEqual(row, { _row_id: 0, event: 'edited by agent', extra: 1 });
  assert.deepEqual(Object.keys(row), ['_row_id', 'event', 'extra']);
});

test('_row_id is the first key even when neither side has it first', () => {
  const [row] = mergeByRowId([{ a: 1, _row_id: 2 }], [{ b: 2, _row_id: 2 }]);
  assert.deepEqual(Object.keys(row), ['_row_id', 'b', 'a']);
});

test('an abstract row without a body row keeps just its abstract values', () => {
  assert.deepEqual(mergeByRowId([{ _row_id: 3, a: 1 }], []), [{ _row_id: 3, a: 1 }]);
  assert.deepEqual(mergeByRowId([{ _row_id: 3, a: 1 }], [{ _row_id: 4, b: 2 }]), [{ _row_id: 3, a: 1 }]);
});

test('a repeated abstract id gets the body each time; inputs are not mutated', () => {
  const abstract = [
    { _row_id: 0, a: 1 },
    { _row_id: 0, a: 2 },
  ];
  const body = [{ _row_id: 0, b: 'x' }];
  const out = mergeByRowId(abstract, body);
  assert.deepEqual(out, [
    { _row_id: 0, b: 'x', a: 1 },
    { _row_id: 0, b: 'x', a: 2 },
  ]);
  assert.deepEqual(body, [{ _row_id: 0, b: 'x' }]);
  assert.notEqual(out[0], abstract[0]);
});

test('empty abstract gives no rows', () => {
  assert.deepEqual(mergeByRowId([], [{ _row_id: 0 }]), []);
});
