import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Type, tableFromIPC, tableToIPC, type Field, type Int, type Table } from 'apache-arrow';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { jsonBodyChunks } from '../../src/json/body-writer.js';
import { isJsonField } from '../../src/json/json-text-field.js';
import { parseJsonExact } from '../../src/json/exact-json.js';
import { WholeFloat } from '../../src/json/whole-float.js';

type Row = Record<string, unknown>;

/** The storage kind of a field, named like column-kind.ts does. */
function kindOf(field: Field): string {
  if (isJsonField(field)) return 'json';
  switch (field.type.typeId) {
    case Type.Null:
      return 'null';
    case Type.Bool:
      return 'bool';
    case Type.Int:
      return `int${(field.type as Int).bitWidth}`;
    case Type.Float:
      return 'float64';
    case Type.Utf8:
      return 'utf8';
    default:
      return String(field.type);
  }
}

function kinds(table: Table): Record<string, string> {
  return Object.fromEntries(table.schema.fields.map((f) => [f.name, kindOf(f)]));
}

/** The JSON document the data plane would send for `table`, read exactly (int64 beyond 2^53 as bigints). */
function wireDocument(table: Table, chunkChars?: number): { body: Row[]; total_rows: number; columns_returned: string[] } {
  return parseJsonExact([...jsonBodyChunks(table, chunkChars)].join('')) as { body: Row[]; total_rows: number; columns_returned: string[] };
}

function ipcRoundTrip(table: Table): Table {
  return tableFromIPC(tableToIPC(table, 'stream'));
}

/** Defines `key` as an own enumerable property, so `__proto__` is a key like any other. */
function setOwn(obj: Row, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

test('infers each column kind', () => {
  const table = tableFromRows([
    { i32: 1, i64: 1517966773840, f64: 1, flag: true, text: 'a', obj: { x: 1 }, arr: [1, 'a'], mixed: 1, nothing: null, negBig: -(2 ** 31) - 1 },
    { i32: -5, i64: 1517966773841, f64: 2.5, flag: false, text: 'b', obj: { y: [null] }, arr: [], mixed: 'one', nothing: null, negBig: 0 },
  ]);
  assert.deepEqual(kinds(table), {
    _row_id: 'int32',
    i32: 'int32',
    i64: 'int64',
    f64: 'float64',
    flag: 'bool',
    text: 'utf8',
    obj: 'json',
    arr: 'json',
    mixed: 'json',
    nothing: 'null',
    negBig: 'int64',
  });
});

test('int32 bounds: 2^31-1 stays int32, 2^31 widens to int64, unsafe integers to float64', () => {
  const t = tableFromRows([{ a: 2 ** 31 - 1, b: 2 ** 31, c: 2 ** 53 + 2, d: -(2 ** 31) }]);
  assert.deepEqual(kinds(t), { _row_id: 'int32', a: 'int32', b: 'int64', c: 'float64', d: 'int32' });
  assert.deepEqual(rowsFromTable(t), [{ _row_id: 0, a: 2 ** 31 - 1, b: 2 ** 31, c: 2 ** 53 + 2, d: -(2 ** 31) }]);
});

test('values come back unchanged for every kind', () => {
  const rows = [
    { time: 1517966773840, mag: 2, depth: 7.5, ok: true, place: '4km W of Castaic, CA', tags: ['a', { b: null }], changes: 1 },
    { time: 1517966773999, mag: 3.25, depth: -1, ok: false, place: '', tags: { nested: { deep: [1, 2.5, true] } }, changes: false },
    { time: 1, mag: 0, depth: 0, ok: null, place: null, tags: null, changes: 'x' },
  ];
  const t = tableFromRows(rows);
  assert.deepEqual(kinds(t), {
    _row_id: 'int32',
    time: 'int64',
    mag: 'float64',
    depth: 'float64',
    ok: 'bool',
    place: 'utf8',
    tags: 'json',
    changes: 'json',
  });
  const expected = rows.map((r, i) => ({ _row_id: i, ...r }));
  assert.deepEqual(rowsFromTable(t), expected);
  assert.deepEqual(wireDocument(t).body, expected);
});

test('a missing key is null, columns keep first-seen order', () => {
  const t = tableFromRows([{ b: 1 }, { a: 'x', b: 2 }, { c: true }]);
  assert.deepEqual(
    t.schema.fields.map((f) => f.name),
    ['_row_id', 'b', 'a', 'c'],
  );
  assert.deepEqual(rowsFromTable(t), [
    { _row_id: 0, b: 1, a: null, c: null },
    { _row_id: 1, b: 2, a: 'x', c: null },
    { _row_id: 2, b: null, a: null, c: true },
  ]);
});

test('a null-only column is Null and reads null', () => {
  const t = tableFromRows([{ a: null }, {}, { a: undefined }]);
  assert.deepEqual(kinds(t), { _row_id: 'int32', a: 'null' });
  assert.deepEqual(rowsFromTable(t), [
    { _row_id: 0, a: null },
    { _row_id: 1, a: null },
    { _row_id: 2, a: null },
  ]);
});

test('incoming _row_id is ignored: ids are positions, _row_id stays first', () => {
  const t = tableFromRows([
    { x: 1, _row_id: 42 },
    { _row_id: 'junk', x: 2 },
  ]);
  assert.deepEqual(
    t.schema.fields.map((f) => f.name),
    ['_row_id', 'x'],
  );
  assert.deepEqual(rowsFromTable(t), [
    { _row_id: 0, x: 1 },
    { _row_id: 1, x: 2 },
  ]);
});

test('preserveRowIds keeps incoming _row_id values', () => {
  const t = tableFromRows(
    [
      { _row_id: 7, x: 'a' },
      { x: 'b', _row_id: 3 },
    ],
    { preserveRowIds: true },
  );
  assert.equal(kindOf(t.schema.fields[0]), 'int32');
  assert.deepEqual(rowsFromTable(t), [
    { _row_id: 7, x: 'a' },
    { _row_id: 3, x: 'b' },
  ]);
});

test('preserveRowIds without a valid integer _row_id is S2SP_ERR_TABLE_INVALID', () => {
  for (const bad of [{ x: 1 }, { _row_id: '1' }, { _row_id: 1.5 }, { _row_id: -1 }, { _row_id: null }, { _row_id: 2 ** 31 }]) {
    assert.throws(() => tableFromRows([{ _row_id: 0 }, bad], { preserveRowIds: true }), { code: 'S2SP_ERR_TABLE_INVALID' }, JSON.stringify(bad));
  }
});

test('a row that is not a plain object is S2SP_ERR_TABLE_INVALID', () => {
  for (const bad of [null, 1, 'row', true, [1, 2], undefined]) {
    assert.throws(() => tableFromRows([{ a: 1 }, bad]), { code: 'S2SP_ERR_TABLE_INVALID' }, String(bad));
  }
});

test('unicode strings round-trip, in utf8 and json columns', () => {
  const words = ['héllo', '日本語テキスト', 'emoji 🌋🔥', 'RTL עברית', 'combining é', '\u0000nul', 'quote " back \\ slash', 'line\nbreak\ttab', '\u2028\u2029'];
  const rows = words.map((w) => ({ s: w, j: { w } }));
  const t = tableFromRows(rows);
  assert.equal(kindOf(t.schema.fields[1]), 'utf8');
  const expected = rows.map((r, i) => ({ _row_id: i, ...r }));
  assert.deepEqual(rowsFromTable(t), expected);
  assert.deepEqual(wireDocument(t).body, expected);
  assert.deepEqual(rowsFromTable(ipcRoundTrip(t)), expected);
});

test('empty input gives a table with only _row_id and no rows', () => {
  const t = tableFromRows([]);
  assert.equal(t.numRows, 0);
  assert.deepEqual(
    t.schema.fields.map((f) => f.name),
    ['_row_id'],
  );
  assert.deepEqual(rowsFromTable(t), []);
  assert.deepEqual(wireDocument(t), { body: [], total_rows: 0, columns_returned: ['_row_id'] });
  assert.deepEqual(rowsFromTable(ipcRoundTrip(t)), []);
});

test('regression: a column named like an Object.prototype member is null where a row lacks it', () => {
  // Reading rows[i]['constructor'] on a row without the key used to yield
  // Object (a crash in a string column), and `__proto__` yielded 0.
  const rows: Row[] = [{ constructor: 'Ferrari', toString: 1 }, { other: 1 }, {}];
  setOwn(rows[2], '__proto__', 'own');
  const t = tableFromRows(rows);
  assert.deepEqual(kinds(t), { _row_id: 'int32', constructor: 'utf8', toString: 'int32', other: 'int32', ['__proto__']: 'utf8' });
  const doc = wireDocument(t);
  assert.deepEqual(
    doc.body.map((r) => [r.constructor, r.toString, r.__proto__]),
    [
      ['Ferrari', 1, null],
      [null, null, null],
      [null, null, 'own'],
    ],
  );
});

test('regression: rowsFromTable keeps a `__proto__` column as an own key, never as the prototype', () => {
  const rows: Row[] = [{}, {}];
  setOwn(rows[0], '__proto__', { polluted: true });
  const back = rowsFromTable(tableFromRows(rows));
  assert.equal(Object.getPrototypeOf(back[0]), Object.prototype);
  assert.deepEqual(Object.keys(back[0]), ['_row_id', '__proto__']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(back[0], '__proto__')?.value, { polluted: true });
  assert.equal(Object.getOwnPropertyDescriptor(back[1], '__proto__')?.value, null);
});

// ---- property: rows -> Arrow -> rows / JSON / IPC give the rows back ----

const KEYS = ['a', 'b', 'time', 'név', '7', '_row_id', 'constructor', '__proto__'] as const;

const cellValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }),
  fc.integer(),
  fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -(2 ** 31) - 1 }),
  fc.constantFrom(1517966773840, 2 ** 53 + 2, -0, 0.1, 1e300),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.string({ unit: 'binary' }),
);

/** Rows as [key, value] entries; later duplicates overwrite, missing keys stay missing. */
const rowsArbitrary = fc.array(fc.array(fc.tuple(fc.constantFrom(...KEYS), cellValue), { maxLength: KEYS.length }), { maxLength: 25 }).map((entryLists) =>
  entryLists.map((entries) => {
    const row: Row = {};
    for (const [k, v] of entries) setOwn(row, k, v);
    return row;
  }),
);

/** What every reader should give back: `_row_id` = position, every column in first-seen order, missing -> null. */
function oracle(rows: Row[]): { columns: string[]; rows: Row[] } {
  const columns = ['_row_id'];
  for (const row of rows) for (const k of Object.keys(row)) if (!columns.includes(k)) columns.push(k);
  const expected = rows.map((row, i) => {
    const out: Row = { _row_id: i };
    for (const c of columns.slice(1)) setOwn(out, c, Object.hasOwn(row, c) ? (row[c] ?? null) : null);
    return out;
  });
  return { columns, rows: expected };
}

/**
 * The oracle's rows as the JSON encoding writes them (README, "JSON encoding
 * of Arrow types"): a Float64 column keeps -0 and spells NaN and the
 * infinities as strings; a JSON-text column holds each value as
 * `JSON.stringify` would write it, except that -0 stays -0 and NaN and the
 * infinities are spelled as strings there too (not null); other columns hold
 * the values themselves.
 */
function asEncoded(rows: Row[], columnKinds: Record<string, string>): Row[] {
  const NEGATIVE_ZERO = '\u0000-0';
  const spelled = (v: number): string => (Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');
  const viaJson = (v: unknown): unknown =>
    JSON.parse(
      JSON.stringify(v, (_k, x: unknown) => (Object.is(x, -0) ? NEGATIVE_ZERO : typeof x === 'number' && !Number.isFinite(x) ? spelled(x) : x)),
      (_k, x: unknown) => (x === NEGATIVE_ZERO ? -0 : x),
    );
  return rows.map((row) => {
    const out: Row = {};
    for (const key of Object.keys(row)) {
      const v = row[key];
      let encoded = v;
      if (v !== null && columnKinds[key] === 'json') encoded = viaJson(v);
      if (typeof v === 'number' && columnKinds[key] === 'float64' && !Number.isFinite(v)) encoded = spelled(v);
      setOwn(out, key, encoded);
    }
    return out;
  });
}

test('property: rowsFromTable, the JSON body and an IPC round trip all give the rows back', () => {
  fc.assert(
    fc.property(rowsArbitrary, fc.integer({ min: 1, max: 300 }), (rows, chunkChars) => {
      const { columns, rows: oracleRows } = oracle(rows);
      const table = tableFromRows(rows);
      assert.deepStrictEqual(
        table.schema.fields.map((f) => f.name),
        columns,
      );
      const expected = asEncoded(oracleRows, kinds(table));

      assert.deepStrictEqual(rowsFromTable(table), expected);
      const doc = wireDocument(table, chunkChars);
      assert.deepStrictEqual(doc.body, expected);
      assert.equal(doc.total_rows, rows.length);
      assert.deepStrictEqual(doc.columns_returned, columns);

      const copy = ipcRoundTrip(table);
      assert.deepStrictEqual(rowsFromTable(copy), expected);
      assert.deepStrictEqual(wireDocument(copy, chunkChars).body, expected);
    }),
    { numRuns: 300 },
  );
});

test('a function or symbol cell is S2SP_ERR_TABLE_INVALID naming the column', () => {
  assert.throws(
    () => tableFromRows([{ f: () => 1 }]),
    (error: Error & { code: string }) => error.code === 'S2SP_ERR_TABLE_INVALID' && /"f"/.test(error.message),
  );
  assert.throws(() => tableFromRows([{ s: Symbol('x') }]), { code: 'S2SP_ERR_TABLE_INVALID' });
});

test('bigints (what exact JSON readers give for integers beyond 2^53) keep every digit', () => {
  const rows: Row[] = [
    { i64: 9007199254740993n, u64: 18446744073709551615n, huge: 2n ** 70n, mixed: 1, withFloat: 0.5, small: 3n },
    { i64: -(2n ** 63n), u64: 0, huge: 1, mixed: -9007199254740993n, withFloat: 9007199254740993n, small: null },
    { i64: 5, u64: 2n ** 63n, huge: null, mixed: null, withFloat: null, small: 4n },
  ];
  const table = tableFromRows(rows);
  assert.deepEqual(kinds(table), { _row_id: 'int32', i64: 'int64', u64: 'int64', huge: 'json', mixed: 'int64', withFloat: 'json', small: 'int64' });
  assert.equal(table.schema.fields[2].type.typeId, Type.Int);
  assert.equal((table.schema.fields[2].type as Int).isSigned, false, 'u64 is UInt64');
  const expected = [
    { _row_id: 0, i64: 9007199254740993n, u64: 18446744073709551615n, huge: 1180591620717411303424n, mixed: 1, withFloat: 0.5, small: 3 },
    { _row_id: 1, i64: -9223372036854775808n, u64: 0, huge: 1, mixed: -9007199254740993n, withFloat: 9007199254740993n, small: null },
    { _row_id: 2, i64: 5, u64: 9223372036854775808n, huge: null, mixed: null, withFloat: null, small: 4 },
  ];
  assert.deepStrictEqual(rowsFromTable(table), expected);
  const text = [...jsonBodyChunks(table)].join('');
  assert.ok(text.includes('"i64":9007199254740993,"u64":18446744073709551615,"huge":1180591620717411303424'), text);
  assert.deepStrictEqual(wireDocument(table).body, expected);
  assert.deepStrictEqual(rowsFromTable(ipcRoundTrip(table)), expected);
});

test('a uint64 column with a negative value, or a bigint beside a float, is JSON text: nothing rounds', () => {
  const t = tableFromRows([
    { a: 2n ** 64n - 1n, b: 1.5 },
    { a: -1, b: 2n ** 60n + 1n },
  ]);
  assert.deepEqual(kinds(t), { _row_id: 'int32', a: 'json', b: 'json' });
  assert.deepStrictEqual(rowsFromTable(t), [
    { _row_id: 0, a: 18446744073709551615n, b: 1.5 },
    { _row_id: 1, a: -1, b: 1152921504606846977n },
  ]);
});

test('WholeFloat cells: whole numbers the source wrote as floats (2.0) stay Float64; -0 alone makes a float', () => {
  const rows: Row[] = [
    { a: new WholeFloat(2), b: 2, c: -0 },
    { a: 3, b: 3, c: 1 },
  ];
  const t = tableFromRows(rows);
  assert.deepEqual(kinds(t), { _row_id: 'int32', a: 'float64', b: 'int32', c: 'float64' });
  const text = [...jsonBodyChunks(t)].join('');
  assert.ok(text.includes('{"_row_id":0,"a":2.0,"b":2,"c":-0.0}'), text);
  assert.deepStrictEqual(rowsFromTable(t), [
    { _row_id: 0, a: 2, b: 2, c: -0 },
    { _row_id: 1, a: 3, b: 3, c: 1 },
  ]);
});
