/**
 * Rows put together from cell texts (src/json/json-rows.ts): the bytes of
 * each layout, commas between rows but before the document's first, texts
 * long and short (copied by `set` and word by word), a stop at the limit and
 * the rest written after it, and no rows at all.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteWriter } from '../../src/json/byte-writer.js';
import { CellTexts } from '../../src/json/cell-texts.js';
import { arrayRowLayout, objectRowLayout, writeRows } from '../../src/json/json-rows.js';

/** Cell texts holding `texts`, one cell each. */
function column(texts: string[]): CellTexts {
  const out = new CellTexts(1, 8);
  out.clear(texts.length);
  for (const text of texts) {
    out.writer.utf8(text);
    out.endCell();
  }
  return out;
}

const long = `"${'x'.repeat(100)}é"`; // longer than a word-by-word copy
const a = column(['1', '-22', '333', long]);
const b = column([long, '"é"', 'null', '4.5']);

test('object and array rows: keys before each text, a comma between rows, the texts whole however long', () => {
  const w = new ByteWriter(16);
  assert.equal(writeRows(w, objectRowLayout(['a', 'b "q"']), [a, b], 0, 4, true), 4);
  const expected = [0, 1, 2, 3].map((k) => `{"a":${['1', '-22', '333', long][k]},"b \\"q\\"":${[long, '"é"', 'null', '4.5'][k]}}`).join(',');
  assert.equal(Buffer.from(w.take()).toString(), expected);
  assert.deepEqual(JSON.parse(`[${expected}]`)[1], { a: -22, 'b "q"': 'é' });

  w.pos = 0;
  writeRows(w, arrayRowLayout(2), [a, b], 1, 3, false);
  assert.equal(Buffer.from(w.take()).toString(), ',[-22,"é"],[333,null]');
  writeRows(w, objectRowLayout([]), [], 0, 2, true);
  assert.equal(Buffer.from(w.take()).toString(), '{},{}');
});

test('a limit stops after the row that reaches it; the rest follow from where it stopped; no rows write nothing', () => {
  const w = new ByteWriter(16);
  const layout = objectRowLayout(['a', 'b']);
  const first = writeRows(w, layout, [a, b], 0, 4, true, 10);
  assert.equal(first, 1, 'the first row is longer than the limit');
  const rest = writeRows(w, layout, [a, b], first, 4, false);
  assert.equal(rest, 4);
  const whole = new ByteWriter(16);
  writeRows(whole, layout, [a, b], 0, 4, true);
  assert.equal(Buffer.from(w.take()).toString(), Buffer.from(whole.take()).toString());
  assert.equal(writeRows(w, layout, [a, b], 2, 2, false), 2);
  assert.equal(w.pos, 0);
});
