import { readFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isFeatureCollection, rowsFromFeatureCollection } from '../../../src/cli/input/geojson.js';
import { tableFromRows } from '../../../src/table/table-from-rows.js';
import { vegaData } from './fixtures.js';

function assertUnreadable(fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => (err as { code?: unknown }).code === 'S2SP_ERR_INPUT_UNREADABLE');
}

function collection(...features: unknown[]): unknown {
  return { type: 'FeatureCollection', features };
}

describe('rowsFromFeatureCollection', () => {
  test('USGS earthquakes: 1707 rows x 30 columns, 31 with _row_id', async () => {
    const fc: unknown = JSON.parse(await readFile(vegaData('earthquakes.json'), 'utf8'));
    const rows = rowsFromFeatureCollection(fc);
    assert.equal(rows.length, 1707);
    const names = new Set(rows.flatMap((r) => Object.keys(r)));
    assert.equal(names.size, 30);
    for (const name of ['mag', 'place', 'time', 'id', 'longitude', 'latitude', 'depth']) assert.ok(names.has(name), name);
    const first = rows[0];
    assert.equal(first.mag, 2);
    assert.equal(first.place, '4km W of Castaic, CA');
    assert.equal(first.time, 1517966773840);
    assert.equal(first.id, 'ci37868143');
    assert.equal(first.longitude, -118.6671667);
    assert.equal(first.latitude, 34.4945);
    assert.equal(first.depth, 26.49);

    const table = tableFromRows(rows);
    assert.equal(table.numRows, 1707);
    assert.equal(table.numCols, 31);
    assert.equal(table.schema.fields[0].name, '_row_id');
  });

  test('properties come first, then id, longitude, latitude, depth', () => {
    const rows = rowsFromFeatureCollection(
      collection({ type: 'Feature', id: 7, properties: { b: 1, a: 'x' }, geometry: { type: 'Point', coordinates: [1, 2, 3] } }),
    );
    assert.deepEqual(Object.keys(rows[0]), ['b', 'a', 'id', 'longitude', 'latitude', 'depth']);
    assert.deepEqual(rows[0], { b: 1, a: 'x', id: 7, longitude: 1, latitude: 2, depth: 3 });
  });

  test('a 2D point has a null depth', () => {
    const [row] = rowsFromFeatureCollection(collection({ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [10, 20] } }));
    assert.deepEqual(row, { id: null, longitude: 10, latitude: 20, depth: null });
  });

  test('non-Point, null and missing geometries give null coordinates', () => {
    const rows = rowsFromFeatureCollection(
      collection(
        {
          type: 'Feature',
          properties: { k: 1 },
          geometry: {
            type: 'LineString',
            coordinates: [
              [1, 2],
              [3, 4],
            ],
          },
        },
        { type: 'Feature', properties: { k: 2 }, geometry: null },
        { type: 'Feature', properties: { k: 3 } },
      ),
    );
    for (const row of rows) {
      assert.equal(row.longitude, null);
      assert.equal(row.latitude, null);
      assert.equal(row.depth, null);
    }
    assert.deepEqual(
      rows.map((r) => r.k),
      [1, 2, 3],
    );
  });

  test('null properties give only the feature columns; a missing or object id is null', () => {
    const rows = rowsFromFeatureCollection(
      collection({ type: 'Feature', properties: null, geometry: null }, { type: 'Feature', id: { x: 1 }, geometry: null }),
    );
    assert.deepEqual(rows, [
      { id: null, longitude: null, latitude: null, depth: null },
      { id: null, longitude: null, latitude: null, depth: null },
    ]);
  });

  test('a property named like a feature column is kept as property_<name>', () => {
    const [row] = rowsFromFeatureCollection(
      collection({ type: 'Feature', id: 'f1', properties: { id: 99, depth: 'shallow' }, geometry: { type: 'Point', coordinates: [1, 2, 3] } }),
    );
    assert.equal(row.id, 'f1');
    assert.equal(row.property_id, 99);
    assert.equal(row.depth, 3);
    assert.equal(row.property_depth, 'shallow');
  });

  test('a property named __proto__ is a column, not the prototype', () => {
    const fc: unknown = JSON.parse('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"__proto__":"p"},"geometry":null}]}');
    const [row] = rowsFromFeatureCollection(fc);
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, 'p');
  });

  test('an empty collection has no rows', () => {
    assert.deepEqual(rowsFromFeatureCollection(collection()), []);
  });

  test('features that is not an array is an error', () => {
    assertUnreadable(() => rowsFromFeatureCollection({ type: 'FeatureCollection', features: {} }));
    assertUnreadable(() => rowsFromFeatureCollection({ type: 'FeatureCollection' }));
  });

  test('a feature that is not an object is an error', () => {
    assertUnreadable(() => rowsFromFeatureCollection(collection(null)));
    assertUnreadable(() => rowsFromFeatureCollection(collection([1, 2])));
  });

  test('properties that is not an object is an error', () => {
    assertUnreadable(() => rowsFromFeatureCollection(collection({ type: 'Feature', properties: [1], geometry: null })));
  });

  test('something that is not a FeatureCollection is an error', () => {
    assertUnreadable(() => rowsFromFeatureCollection([{ a: 1 }]));
    assertUnreadable(() => rowsFromFeatureCollection({ type: 'Feature', properties: {}, geometry: null }));
  });
});

describe('isFeatureCollection', () => {
  test('recognises only objects typed FeatureCollection', () => {
    assert.equal(isFeatureCollection({ type: 'FeatureCollection', features: [] }), true);
    assert.equal(isFeatureCollection({ type: 'Feature' }), false);
    assert.equal(isFeatureCollection([{ type: 'FeatureCollection' }]), false);
    assert.equal(isFeatureCollection(null), false);
    assert.equal(isFeatureCollection('FeatureCollection'), false);
  });
});
