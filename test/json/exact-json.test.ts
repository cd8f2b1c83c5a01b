import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseJsonExact, stringifyJsonExact } from '../../src/json/exact-json.js';
import { WholeFloat } from '../../src/json/whole-float.js';

/** The value with every WholeFloat back as its number. */
function unboxed(value: unknown): unknown {
  if (value instanceof WholeFloat) return value.value;
  if (Array.isArray(value)) return value.map(unboxed);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: unboxed(v), enumerable: true, writable: true, configurable: true });
  return out;
}

/** Both paths of the parser: JSON.parse first (no option), and the literal reader (wholeFloats asks for it). */
const readers: Array<[string, (text: string) => unknown]> = [
  ['JSON.parse first', (text) => parseJsonExact(text)],
  ['literal reader', (text) => unboxed(parseJsonExact(text, { wholeFloats: true }))],
];

test('integers beyond 2^53 come back exact, as bigints; safe ones as numbers', () => {
  const text =
    '[9007199254740991, 9007199254740992, 9007199254740993, -9223372036854775808, 18446744073709551615, 123456789012345678901234567890, 1234567890123456, -0, 0, 12]';
  for (const [name, read] of readers) {
    assert.deepStrictEqual(
      read(text),
      [
        9007199254740991,
        9007199254740992n,
        9007199254740993n,
        -9223372036854775808n,
        18446744073709551615n,
        123456789012345678901234567890n,
        1234567890123456,
        -0,
        0,
        12,
      ],
      name,
    );
  }
  // The control: JSON.parse itself loses the digits.
  assert.equal(JSON.parse('9007199254740993'), 9007199254740992);
});

test('float literals stay numbers however long, as JSON.parse reads them', () => {
  const text = '[100000000000000000000.0, 1e400, -1e400, 0.1, 1.7976931348623157e308, 5e-324, 0.016666666666666666, 2.0, -0.0, 1E3, 123456789.123456789e-5]';
  for (const [name, read] of readers) assert.deepStrictEqual(read(text), JSON.parse(text), name);
});

test('bare NaN, Infinity and -Infinity (what Python json.dumps writes) are read as the numbers', () => {
  for (const [name, read] of readers) {
    assert.deepStrictEqual(
      read('{"a": NaN, "b": [Infinity, -Infinity], "c": 9007199254740993}'),
      { a: NaN, b: [Infinity, -Infinity], c: 9007199254740993n },
      name,
    );
  }
});

test('wholeFloats gives each whole-valued float literal as a WholeFloat, at any depth', () => {
  const value = parseJsonExact('[{"a": 2.0, "b": 2, "c": 2.5, "d": 1e3, "e": {"f": -0.0, "g": [1, 2.0, null]}}, {"a": 3}]', { wholeFloats: true });
  const w = (v: number) => new WholeFloat(v);
  assert.deepStrictEqual(value, [{ a: w(2), b: 2, c: 2.5, d: w(1000), e: { f: w(-0), g: [1, w(2), null] } }, { a: 3 }]);
});

test('regression: a whole float nested in a cell keeps its .0 through the exact reader and writer', () => {
  for (const text of ['{"a":[1,2.0,null]}', '[{"x":-3.0},{"x":0.0,"y":{"z":[1e2]}}]', '{"k":100000000000000000000.0}']) {
    const expected = text.replace('1e2', '100.0');
    assert.equal(stringifyJsonExact(parseJsonExact(text, { wholeFloats: true })), expected);
  }
});

test('regression: NaN and the infinities in nested or mixed values are the documented strings, not null', () => {
  assert.equal(stringifyJsonExact({ v: Infinity }), '{"v":"Infinity"}');
  assert.equal(stringifyJsonExact([NaN, Infinity, -Infinity, 1]), '["NaN","Infinity","-Infinity",1]');
  assert.equal(stringifyJsonExact(parseJsonExact('[NaN,Infinity,-Infinity,1e400]', { wholeFloats: true })), '["NaN","Infinity","-Infinity","Infinity"]');
});

test('strings, escapes, keys and __proto__ read as JSON.parse reads them', () => {
  const text = '{"__proto__": {"x": 1}, "s": "a\\"b\\\\c\\n\\u00e9\\ud83c\\udf0b", "k\\u0041": [], "": {}, "big": 9007199254740993}';
  for (const [name, read] of readers) {
    const value = read(text) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype, name);
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, { x: 1 }, name);
    assert.equal(value.s, 'a"b\\c\né🌋', name);
    assert.deepStrictEqual(Object.keys(value), ['__proto__', 's', 'kA', '', 'big'], name);
  }
});

test('rows that repeat their keys (the key cache) and rows that change them read right', () => {
  const text = JSON.stringify([{ a: 1, b: 'x' }, { a: 2, b: 'y' }, { b: 'z', a: 3 }, { ab: 4 }, { a: 5, 'b"': 6 }, { 'b"': 7 }]).replace(
    '}]',
    ',"n":12345678901234567890}]',
  );
  const expected = [{ a: 1, b: 'x' }, { a: 2, b: 'y' }, { b: 'z', a: 3 }, { ab: 4 }, { a: 5, 'b"': 6 }, { 'b"': 7, n: 12345678901234567890n }];
  for (const [name, read] of readers) assert.deepStrictEqual(read(text), expected, name);
});

test('text that is not JSON is S2SP_ERR_JSON_SYNTAX, where JSON.parse throws a SyntaxError', () => {
  const bad = [
    '',
    ' ',
    '[1,]',
    '{"a":1,}',
    '01',
    '1.',
    '.5',
    '1e',
    '+1',
    '"a',
    '"\\x"',
    '"\t"',
    '[1 2]',
    '{"a" 1}',
    '{a:1}',
    'nul',
    'True',
    '[',
    '{"a":1}}',
    '-',
    '--1',
    'NaNa',
    '[1]x',
  ];
  for (const text of bad) {
    for (const [name, read] of readers) assert.throws(() => read(text), { code: 'S2SP_ERR_JSON_SYNTAX' }, `${name}: ${JSON.stringify(text)}`);
  }
});

test('deep nesting is S2SP_ERR_JSON_SYNTAX, not a stack overflow', () => {
  const text = `${'['.repeat(200_000)}9007199254740993${']'.repeat(200_000)}`;
  assert.throws(() => parseJsonExact(text, { wholeFloats: true }), { code: 'S2SP_ERR_JSON_SYNTAX' });
});

test('property: any JSON text reads as JSON.parse reads it, except integer literals beyond 2^53, which keep their digits', () => {
  // JSON.stringify writes a whole double below 1e21 as plain digits: that literal, exactly, is the expected bigint.
  const exact = (_key: string, v: unknown): unknown =>
    typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v) && Math.abs(v) < 1e21 ? BigInt(String(v)) : v;
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(0, 2), (value, indent) => {
      const text = JSON.stringify(value, null, indent);
      for (const [name, read] of readers) assert.deepStrictEqual(read(text), JSON.parse(text, exact), name);
    }),
    { numRuns: 500 },
  );
});

test('property: 64-bit integers written as digits read back exact, alone and in rows', () => {
  fc.assert(
    fc.property(fc.array(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), { maxLength: 20 }), (ints) => {
      const text = `[${ints.map((n) => `{"n":${n}}`).join(',')}]`;
      const expected = ints.map((n) => ({ n: n >= -(2n ** 53n) + 1n && n <= 2n ** 53n - 1n ? Number(n) : n }));
      for (const [name, read] of readers) assert.deepStrictEqual(read(text), expected, name);
    }),
    { numRuns: 300 },
  );
});

test('stringifyJsonExact writes bigints as digits, -0 and whole numbers beyond 2^53 as floats, the rest as JSON.stringify', () => {
  assert.equal(
    stringifyJsonExact({ a: 9007199254740993n, b: [-(2n ** 70n)], c: 'x', d: 1.5 }),
    '{"a":9007199254740993,"b":[-1180591620717411303424],"c":"x","d":1.5}',
  );
  assert.equal(
    stringifyJsonExact([-0, 1e20, 1e21, 2 ** 53, 2 ** 53 - 1, NaN]),
    '[-0.0,100000000000000000000.0,1e+21,9007199254740992.0,9007199254740991,"NaN"]',
  );
  assert.equal(stringifyJsonExact({ when: new Date(0), s: 'plain' }), JSON.stringify({ when: new Date(0), s: 'plain' }));
  // A string that looks like the internal marker stays a string.
  assert.equal(stringifyJsonExact(['\u0000s2sp-number-x:12', 1n]), '["\\u0000s2sp-number-x:12",1]');
});

test('property: what stringifyJsonExact writes, parseJsonExact reads back the same (bigints, -0, big floats included)', () => {
  const cell = fc.oneof(
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((n) => (Number.isSafeInteger(Number(n)) ? Number(n) : n)),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
  );
  fc.assert(
    fc.property(fc.array(fc.dictionary(fc.string(), cell, { maxKeys: 5, noNullPrototype: true }), { maxLength: 10 }), (rows) => {
      assert.deepStrictEqual(parseJsonExact(stringifyJsonExact(rows)), rows);
    }),
    { numRuns: 300 },
  );
});
