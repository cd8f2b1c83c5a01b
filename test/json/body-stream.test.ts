/**
 * The streamed JSON decoder gives exactly what bodyFromJson gives for the
 * whole body, wherever the chunks are cut: inside strings, escapes,
 * multi-byte UTF-8 and numbers; for every type of the type matrix; and for
 * bodies that are cut short or not ours, the same error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyFromJson } from '../../src/json/body-reader.js';
import type { DecodedBody } from '../../src/json/decoded-body.js';
import { JsonBodyStream } from '../../src/json/body-stream.js';
import { bodyTableOf } from '../../src/table/body-table.js';
import { jsonBodyChunks } from '../../src/json/body-writer.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { matrixTable } from '../support/type-matrix.js';

type Outcome = { ok: true; schema: string; rows: unknown; totalRows: number; columns: string[] } | { ok: false; code: string; message: string };

function outcome(decode: () => DecodedBody): Outcome {
  try {
    const { table, totalRows, columns } = decode();
    const schema = JSON.stringify(table.schema.fields.map((f) => [f.name, String(f.type), f.nullable, [...f.metadata]]));
    return { ok: true, schema, rows: rowsFromTable(table), totalRows, columns };
  } catch (error) {
    const e = error as { code?: string; message: string };
    assert.ok(e.code, `not an S2SPError: ${e.message}`);
    return { ok: false, code: e.code, message: e.message };
  }
}

/** Runs of rows decoded: the default, and tiny ones, so runs are cut (and boundaries searched) everywhere. */
const RUN_SIZES = [undefined, 1, 7, 40];

function streamed(bytes: Buffer, cuts: readonly number[], runBytes?: number): DecodedBody {
  const stream = new JsonBodyStream(runBytes);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    // Copies, as the network gives: no chunk shares memory with the next.
    stream.write(Buffer.from(bytes.subarray(from, cut)));
    from = cut;
  }
  return stream.end();
}

/** The decoder fed in one chunk, and cut in two at every byte. */
function assertSameAtEveryCut(text: string | Buffer): void {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const expected = outcome(() => bodyFromJson(bytes));
  for (const runBytes of RUN_SIZES) {
    assert.deepStrictEqual(
      outcome(() => streamed(bytes, [], runBytes)),
      expected,
      `whole: ${bytes.toString('utf8', 0, 200)}`,
    );
    for (let cut = 0; cut <= bytes.length; cut++) {
      const at = `cut at ${cut}, runs of ${runBytes}: ${bytes.toString('utf8', 0, 200)}`;
      assert.deepStrictEqual(
        outcome(() => streamed(bytes, [cut], runBytes)),
        expected,
        at,
      );
    }
  }
}

/** The decoder fed one byte at a time (every boundary at once, state carried through each). */
function assertSameByteByByte(bytes: Buffer): void {
  const cuts = Array.from({ length: bytes.length }, (_, i) => i);
  for (const runBytes of RUN_SIZES)
    assert.deepStrictEqual(
      outcome(() => streamed(bytes, cuts, runBytes)),
      outcome(() => bodyFromJson(bytes)),
    );
}

const SAMPLE =
  '{"body":[{"_row_id":0,"s":"h\\u00e9\\"llo\\\\","u":"日本語 🎉","n":-12.5e-3,"big":9007199254740993,"w":2.0,"o":{"a":[1,{"b":2.0}]}},' +
  ' {"_row_id":1,"s":"","u":"ü","n":7,"big":-9223372036854775808,"w":3.0,"o":null,"extra":true},\n' +
  '{"_row_id":2,"n":NaN,"w":-Infinity,"big":18446744073709551615}],"total_rows":3,"columns_returned":["_row_id","s","u","n","big","w","o","extra"]}';

test('a sample with escapes, multi-byte UTF-8, big integers, floats written whole and nested values: the same at every cut', () => {
  assertSameAtEveryCut(SAMPLE);
  assertSameByteByByte(Buffer.from(SAMPLE, 'utf8'));
});

test('every type of the type matrix, as the data plane writes it: the same at every cut', () => {
  const table = bodyTableOf(matrixTable());
  const text = [...jsonBodyChunks(table)].join('');
  const bytes = Buffer.from(text, 'utf8');
  assertSameByteByByte(bytes);
  // Every cut of a large document is slow: every cut of the first rows, then a stride.
  for (let cut = 0; cut <= bytes.length; cut += cut < 2000 ? 1 : 7) {
    for (const runBytes of [undefined, 40])
      assert.deepStrictEqual(
        outcome(() => streamed(bytes, [cut], runBytes)),
        outcome(() => bodyFromJson(bytes)),
        `cut at ${cut}`,
      );
  }
  assert.equal(outcome(() => bodyFromJson(bytes)).ok, true);
});

test('rows beyond one decoding run (many rows, chunks of many sizes) come out whole and in order', () => {
  const rows = Array.from({ length: 30_000 }, (_, i) => `{"_row_id":${i},"i":${i * 7},"s":"row ${i} é","f":${i}.5${i % 97 === 0 ? ',"late":1' : ''}}`);
  const bytes = Buffer.from(`{"body":[${rows.join(',')}],"total_rows":30000}`, 'utf8');
  const expected = outcome(() => bodyFromJson(bytes));
  for (const size of [1, 4093, 65536, 1 << 20]) {
    const cuts = Array.from({ length: Math.floor((bytes.length - 1) / size) }, (_, k) => (k + 1) * size);
    assert.deepStrictEqual(
      outcome(() => streamed(bytes, cuts)),
      expected,
      `chunks of ${size}`,
    );
  }
});

test('documents that are cut short, malformed or not ours: the same error (or result) as the whole-body decoder', () => {
  const cases = [
    '',
    '   ',
    '\ufeff{"body":[]}',
    '[]',
    '"body"',
    'null',
    '{}',
    '{"body":{}}',
    '{"body":[]}',
    '{"body":[],"total_rows":-1}',
    '{"body":[],"total_rows":1.5}',
    '{"body":[],"columns_returned":[1]}',
    '{"body":[1,2]}',
    '{"body":[{"x":1}]}',
    '{"body":[{"_row_id":-1}]}',
    '{"body":[{"_row_id":0},{"_row_id":0}]}',
    '{"body":[{"_row_id":0},{"_row_id":1},null]}',
    '{"body":[{"_row_id":0}],"body":5}',
    '{"body":7,"body":[{"_row_id":3,"a":2.0}]}',
    '{"body":[{"_row_id":0,"a":1}],"other":[{"a":2.0}]}',
    '{"b\\u006fdy":[{"_row_id":0}]}',
    '{"body":[{"_row_id":0}],"total_rows":1}x',
    '{"body":[{"_row_id":0}],"total_rows":1}  \n',
    '{"body":[{"_row_id":0},]}',
    '{"body":[,{"_row_id":0}]}',
    '{"body":[{"_row_id":0}}',
    '{"body":[{"_row_id":0]]}',
    '{"body":[{"_row_id":0,"s":"a\u0001"}]}',
    '{"body":[{"_row_id":0,"s":"\\x"}]}',
    '{"body":[{"_row_id":0}] "total_rows":1}',
    '{"body" [{"_row_id":0}]}',
    '{body:[]}',
    '{"body":[{"_row_id":0,"n":01}]}',
    '{"body":[{"_row_id":0,"n":1.}]}',
    '{"body":[{"_row_id":0,"n":tru}]}',
    '{"body":[{"_row_id":0}],"total_rows":1,}',
    '{"body":[{"_row_id":0,"__proto__":1}]}',
    '{"total_rows":1}',
    '{"body":[{"_row_id":2147483648}]}',
    '{"body":[{"_row_id":67108864},{"_row_id":67108864}]}',
  ];
  for (const text of cases) assertSameAtEveryCut(text);
  // Cut short anywhere: never fewer rows, always the same error.
  const whole = Buffer.from(SAMPLE, 'utf8');
  for (let end = 0; end < whole.length; end++) {
    const cutShort = whole.subarray(0, end);
    const expected = outcome(() => bodyFromJson(cutShort));
    assert.equal(expected.ok, false);
    for (const runBytes of RUN_SIZES)
      assert.deepStrictEqual(
        outcome(() => streamed(cutShort, [end >> 1], runBytes)),
        expected,
        `cut short at ${end}`,
      );
  }
});

test('invalid UTF-8 inside a string reads as bodyFromJson reads it (replacement characters)', () => {
  const bytes = Buffer.concat([Buffer.from('{"body":[{"_row_id":0,"s":"a'), Buffer.from([0xe6, 0x97, 0xff, 0xc3]), Buffer.from('"}]}')]);
  assertSameAtEveryCut(bytes);
});

test('regression: whole floats nested in cells or in mixed columns keep their .0, and non-finite ones their strings, through the consumer', () => {
  // What a Python server writes for [{"a":{"a":[1,2.0,None]},"m":2.0,"v":{"v":inf}}, {"a":None,"m":"s","v":[nan,inf,1]}].
  const text = '{"body":[{"_row_id":0,"a":{"a":[1,2.0,null]},"m":2.0,"v":{"v":Infinity}},{"_row_id":1,"a":null,"m":"s","v":[NaN,Infinity,1]}]}';
  for (const decode of [() => bodyFromJson(Buffer.from(text)), () => streamed(Buffer.from(text), [], 1)]) {
    const written = [...jsonBodyChunks(decode().table)].join('');
    assert.ok(written.includes('{"_row_id":0,"a":{"a":[1,2.0,null]},"m":2.0,"v":{"v":"Infinity"}}'), written);
    assert.ok(written.includes('{"_row_id":1,"a":null,"m":"s","v":["NaN","Infinity",1]}'), written);
  }
});

test('a body spaced as Python json.dumps writes it (", " and ": ") is cut at its rows like ours: the same rows, whatever the chunks', () => {
  const rows = Array.from({ length: 20_000 }, (_, i) => `{"_row_id": ${i}, "o": {"a": [{"b": ${i}}, {"c": "x}, {y"}]}, "s": "row ${i}"}`);
  const bytes = Buffer.from(`{"body": [${rows.join(', ')}], "total_rows": 20000}`, 'utf8');
  const expected = outcome(() => bodyFromJson(bytes));
  assert.equal(expected.ok, true);
  for (const size of [1, 4093, 65536, 1 << 20]) {
    const cuts = Array.from({ length: Math.floor(bytes.length / size) }, (_, k) => (k + 1) * size);
    for (const runBytes of [undefined, 4096])
      assert.deepStrictEqual(
        outcome(() => streamed(bytes, cuts, runBytes)),
        expected,
        `chunks of ${size}, runs of ${runBytes}`,
      );
  }
});
