/**
 * `s2sp serve file.json` reads numbers as Python's json does: integers beyond
 * 2^53 keep every digit (Int64), and a column the file writes as floats
 * (`2.0`) stays Float64 even when every value is whole.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DataType, type Int } from 'apache-arrow';
import { readTableFile } from '../../../src/cli/input/read-table-file.js';
import { rowsFromJsonText } from '../../../src/cli/input/json-rows.js';
import { WholeFloat } from '../../../src/json/whole-float.js';
import { jsonRowChunks } from '../../../src/json/body-writer.js';
import { rowsFromTable } from '../../../src/table/rows-from-table.js';
import { createTempDir, vegaData, type TempDir } from './fixtures.js';
import { readFile } from 'node:fs/promises';

let tmp: TempDir;
before(async () => {
  tmp = await createTempDir();
});
after(async () => {
  await tmp.remove();
});

const FILE = `[
  {"id": 9007199254740993, "u": 18446744073709551615, "price": 2.0, "qty": 2, "ratio": 1e3, "nested": {"big": 12345678901234567890}},
  {"id": -9223372036854775808, "u": 1, "price": 3.0, "qty": 3, "ratio": 5, "nested": null},
  {"id": 1, "u": null, "price": 4, "qty": null, "ratio": NaN, "nested": [1, 2.5]}
]`;

function typeOf(type: DataType): string {
  if (DataType.isInt(type)) return `${(type as Int).isSigned ? 'int' : 'uint'}${(type as Int).bitWidth}`;
  if (DataType.isFloat(type)) return 'float';
  return String(type);
}

test('rowsFromJsonText: bigints for integers beyond 2^53, and whole floats as WholeFloat', () => {
  const { rows } = rowsFromJsonText(FILE);
  assert.deepStrictEqual(rows[0].id, 9007199254740993n);
  assert.deepStrictEqual(rows[1].id, -9223372036854775808n);
  assert.deepStrictEqual(rows[0].u, 18446744073709551615n);
  assert.deepStrictEqual(rows[0].nested, { big: 12345678901234567890n });
  assert.ok(Number.isNaN(rows[2].ratio));
  assert.deepStrictEqual(rows[0].price, new WholeFloat(2));
  assert.deepStrictEqual(rows[0].ratio, new WholeFloat(1000));
  assert.deepStrictEqual(rows[2].price, 4);
  assert.deepStrictEqual(rows[2].nested, [1, 2.5]);
});

test('readTableFile: Int64/UInt64 keep every digit, whole-float columns stay Float64, and the JSON body says so', async () => {
  const loaded = await readTableFile(await tmp.write('numbers.json', FILE));
  const types = Object.fromEntries(loaded.table.schema.fields.map((f) => [f.name, typeOf(f.type)]));
  assert.equal(types.id, 'int64');
  assert.equal(types.u, 'uint64');
  assert.equal(types.price, 'float');
  assert.equal(types.qty, 'int32');
  assert.equal(types.ratio, 'float');
  const rows = rowsFromTable(loaded.table);
  assert.deepStrictEqual(
    rows.map((r) => [r.id, r.u, r.price, r.qty, r.ratio]),
    [
      [9007199254740993n, 18446744073709551615n, 2, 2, 1000],
      [-9223372036854775808n, 1, 3, 3, 5],
      [1, null, 4, null, 'NaN'],
    ],
  );
  const json = [...jsonRowChunks(loaded.table)].join('');
  assert.ok(json.includes('"id":9007199254740993,"u":18446744073709551615,"price":2.0,"qty":2,"ratio":1000.0,"nested":{"big":12345678901234567890}'), json);
  assert.ok(json.includes('"ratio":"NaN","nested":[1,2.5]'), json);
});

test('GeoJSON: properties written as whole floats stay Float64, big integers stay exact', async () => {
  const feature = (id: string, properties: string, x: number): string =>
    `{"type":"Feature","id":"${id}","properties":${properties},"geometry":{"type":"Point","coordinates":[${x},60,10]}}`;
  const text = `{"type":"FeatureCollection","features":[${feature('a', '{"mag":2.0,"depth":1.0,"sig":9007199254740993}', 5)},${feature('b', '{"mag":3.0,"depth":2.0,"sig":1}', 6)}]}`;
  const loaded = await readTableFile(await tmp.write('quakes.geojson', text));
  const types = Object.fromEntries(loaded.table.schema.fields.map((f) => [f.name, typeOf(f.type)]));
  assert.equal(types.mag, 'float');
  assert.equal(types.property_depth, 'float', 'a shadowed property keeps its float-ness under its new name');
  assert.equal(types.sig, 'int64');
  assert.equal(rowsFromTable(loaded.table)[0].sig, 9007199254740993n);
});

test('the earthquakes file reads as before: same columns, types and values as JSON.parse gives', async () => {
  const path = vegaData('earthquakes.json');
  const loaded = await readTableFile(path);
  const plain = JSON.parse(await readFile(path, 'utf8')) as { features: Array<{ properties: Record<string, unknown> }> };
  const rows = rowsFromTable(loaded.table);
  assert.equal(rows.length, plain.features.length);
  for (const i of [0, 1, 500, rows.length - 1]) {
    for (const [key, value] of Object.entries(plain.features[i].properties)) {
      const column = key === 'depth' || key === 'id' ? `property_${key}` : key;
      assert.deepStrictEqual(rows[i][column], value ?? null, `row ${i} ${key}`);
    }
  }
});

test('regression: whole floats nested in cells and in mixed columns keep their .0; non-finite ones are the strings, not null', async () => {
  const text = '[{"a":{"a":[1,2.0,null]},"m":2.0,"x":1e400,"v":{"v":1e400}},{"a":null,"m":"s","x":"s","v":[NaN,Infinity,1]}]';
  const loaded = await readTableFile(await tmp.write('nested.json', text));
  const json = [...jsonRowChunks(loaded.table)].join('');
  assert.ok(json.includes('{"_row_id":0,"a":{"a":[1,2.0,null]},"m":2.0,"x":"Infinity","v":{"v":"Infinity"}}'), json);
  assert.ok(json.includes('{"_row_id":1,"a":null,"m":"s","x":"s","v":["NaN","Infinity",1]}'), json);
});
