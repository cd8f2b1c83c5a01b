/**
 * The float-text addon writes the same bytes as the JavaScript formatter
 * (String(v), with ".0" on whole values), and a JSON body comes out the same
 * with it as without it. In CI the addon must be built (the install builds
 * it from source), so these checks cannot pass by skipping.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Field, Float64, makeData, Table, RecordBatch, Schema, Struct } from 'apache-arrow';
import { ByteWriter } from '../../src/json/byte-writer.js';
import { columnCodec } from '../../src/json/column-codec.js';
import { finiteFloatText, floatTextAddonLoaded, formatFloatsAt, MAX_TEXT_BYTES } from '../../src/json/float-text.js';
import { jsonRowFragment } from '../../src/json/body-writer.js';

const inCi = ['1', 'true'].includes(String(process.env.CI).toLowerCase());
const skip = !floatTextAddonLoaded() && !inCi ? 'the float-text addon is not built here (no C++ compiler at install)' : false;

test('the addon is built wherever the suite runs in CI', { skip: inCi ? false : 'outside CI' }, () => {
  assert.ok(floatTextAddonLoaded(), 'dist/native/float-text.node did not load: npm run build builds it (src/native/build.mjs)');
});

/** Pseudo-random 32-bit words, the same on every run (a failure can be replayed). */
function* words(seed: number): Generator<number> {
  let x = seed >>> 0 || 1;
  for (;;) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    yield x >>> 0;
  }
}

/** The double next to positive `v`, below (-1) or above (1). */
function nextDouble(v: number, direction: -1 | 1): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(direction));
  return view.getFloat64(0);
}

function samples(): Map<string, Float64Array> {
  const n = 200_000;
  const next = words(0x5eed);
  const bits = new Uint32Array(2 * n);
  for (let i = 0; i < bits.length; i++) bits[i] = next.next().value as number;
  const scaled = new Float64Array(n);
  const integers = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const u = (next.next().value as number) / 2 ** 32 - 0.5;
    const e = ((next.next().value as number) % 44) - 22;
    scaled[i] = u * 10 ** e;
    integers[i] = Math.round(u * 10 ** ((next.next().value as number) % 26));
  }
  const edges = [
    0,
    -0,
    5e-324,
    -5e-324,
    Number.MIN_VALUE,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1e21,
    1e-7,
    1e-6,
    1.5e-7,
    9.999999999999999e20,
    123456789012345680000,
    0.1,
    0.2,
    0.30000000000000004,
    1 / 3,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 63),
    1e300,
    4.35,
    100,
    1e23,
    8.41e21,
    -1e-5 / 3, // the longest text a double takes: "-0.0000033333333333333337" 9007199254740993, NaN, Infinity, -Infinity,
  ];
  // Every power of two (below each, the doubles are twice as dense: the digit algorithm's
  // irregular case) and of ten, with their neighbours.
  const powers: number[] = [];
  const around = (v: number) => powers.push(v, nextDouble(v, -1), nextDouble(v, 1));
  for (let q = -1074; q <= 1023; q++) around(2 ** q);
  for (let k = -323; k <= 308; k++) around(Number(`1e${k}`));
  return new Map([
    ['powers of two and ten, and their neighbours', Float64Array.from(powers.filter(Number.isFinite))],
    ['random bit patterns', new Float64Array(bits.buffer)],
    ['random values from 1e-22 to 1e22', scaled],
    ['whole values up to 1e26', integers],
    ['edge values', Float64Array.from(edges)],
  ]);
}

test("every text is the JavaScript formatter's, byte for byte; non-finite values get none", { skip }, () => {
  const decoder = new TextDecoder();
  for (const [name, values] of samples()) {
    const prepared = { text: new Uint8Array(values.length * MAX_TEXT_BYTES), ends: new Uint32Array(values.length) };
    const nonFinite = formatFloatsAt(values, 0, values.length, prepared.text, 0, prepared.ends, 0);
    assert.equal(nonFinite, values.filter((v) => !Number.isFinite(v)).length, `${name}: non-finite values counted`);
    let start = 0;
    let mismatches = 0;
    for (let i = 0; i < values.length; i++) {
      const got = decoder.decode(prepared.text.subarray(start, prepared.ends[i]));
      start = prepared.ends[i];
      const want = Number.isFinite(values[i]) ? finiteFloatText(values[i]) : '';
      if (got !== want && mismatches++ < 5) assert.fail(`${name}: ${values[i]} gave ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
    }
  }
});

test('a JSON body with a Float64 column is the same with the addon as without it: nulls, NaN, -0, slices', { skip }, () => {
  const values = Float64Array.from([1.5, NaN, -0, 0, 2, 1e21, 1e-7, Infinity, -Infinity, 0.1, 123.456, -5e-324]);
  const valid = Uint8Array.of(0b1101_1111, 0b0000_1111); // rows 5 and 12.. null
  const column = makeData({ type: new Float64(), length: values.length, nullCount: 1, nullBitmap: valid, data: values });
  const field = new Field('x', new Float64(), true);
  for (const data of [column, column.slice(3, 7)]) {
    const table = new Table(new RecordBatch(new Schema([field]), makeData({ type: new Struct([field]), length: data.length, children: [data] })));
    // The same rows through the one-value-at-a-time writer.
    const w = new ByteWriter();
    const writeOne = columnCodec(field, data).write;
    for (let i = 0; i < data.length; i++) {
      if (i > 0) w.ascii(',');
      w.ascii('{"x":');
      writeOne(w, i);
      w.ascii('}');
    }
    assert.equal(Buffer.from(jsonRowFragment(table)).toString(), Buffer.from(w.take()).toString());
  }
});
