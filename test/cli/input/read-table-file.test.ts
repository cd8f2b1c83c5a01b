import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Int32, tableFromArrays, tableToIPC } from 'apache-arrow';
import { TableFileFormat, isTableFileFormat, readTableFile, type LoadedTable } from '../../../src/cli/input/read-table-file.js';
import { detectTableFileFormat, formatFromBytes, formatFromExtension } from '../../../src/cli/input/table-file-format.js';
import { rowsFromTable } from '../../../src/table/rows-from-table.js';
import { createTempDir, vegaData, type TempDir } from './fixtures.js';
import { parseAbstractDomains } from '../../../src/control/abstract-domains.js';

let tmp: TempDir;
before(async () => {
  tmp = await createTempDir();
});
after(async () => {
  await tmp.remove();
});

const ROWS_JSON = JSON.stringify([
  { city: 'Oslo', pop: 700000, capital: true },
  { city: 'Bergen', pop: 285000, capital: false },
]);
const ROWS_CSV = 'city,pop,capital\nOslo,700000,true\nBergen,285000,false\n';
const EXPECTED_ROWS = [
  { _row_id: 0, city: 'Oslo', pop: 700000, capital: true },
  { _row_id: 1, city: 'Bergen', pop: 285000, capital: false },
];
const FEATURES = JSON.stringify({
  type: 'FeatureCollection',
  features: [{ type: 'Feature', id: 'a', properties: { mag: 1.5 }, geometry: { type: 'Point', coordinates: [5, 60, 10] } }],
});
const ARROW_TABLE = tableFromArrays({ city: ['Oslo', 'Bergen'], pop: Int32Array.from([700000, 285000]) });

function names(loaded: LoadedTable): string[] {
  return loaded.table.schema.fields.map((f) => f.name);
}

/** Asserts `S2SP_ERR_INPUT_UNREADABLE` and that the message names the file. */
async function assertUnreadable(path: string, options?: Parameters<typeof readTableFile>[1]): Promise<void> {
  await assert.rejects(readTableFile(path, options), (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, 'S2SP_ERR_INPUT_UNREADABLE');
    assert.ok((err as Error).message.includes(JSON.stringify(path)), (err as Error).message);
    return true;
  });
}

describe('readTableFile: formats by extension', () => {
  test('.json array of objects', async () => {
    const path = await tmp.write('cities.json', ROWS_JSON);
    const loaded = await readTableFile(path);
    assert.equal(loaded.format, 'json');
    assert.equal(loaded.source, path);
    assert.deepEqual(rowsFromTable(loaded.table), EXPECTED_ROWS);
  });

  test('.csv', async () => {
    const loaded = await readTableFile(await tmp.write('cities.csv', ROWS_CSV));
    assert.equal(loaded.format, 'csv');
    assert.deepEqual(rowsFromTable(loaded.table), EXPECTED_ROWS);
  });

  test('.geojson FeatureCollection', async () => {
    const loaded = await readTableFile(await tmp.write('quakes.geojson', FEATURES));
    assert.equal(loaded.format, 'geojson');
    assert.deepEqual(rowsFromTable(loaded.table), [{ _row_id: 0, mag: 1.5, id: 'a', longitude: 5, latitude: 60, depth: 10 }]);
  });

  test('a .json file holding a FeatureCollection is read as geojson', async () => {
    const loaded = await readTableFile(vegaData('earthquakes.json'));
    assert.equal(loaded.format, 'geojson');
    assert.equal(loaded.table.numRows, 1707);
    assert.equal(loaded.table.numCols, 31);
    assert.equal(names(loaded)[0], '_row_id');
  });

  for (const [name, kind] of [
    ['t.arrow', 'file'],
    ['t.arrows', 'stream'],
    ['t.ipc', 'stream'],
    ['t.feather', 'file'],
  ] as const) {
    test(`${name} (IPC ${kind})`, async () => {
      const loaded = await readTableFile(await tmp.write(name, tableToIPC(ARROW_TABLE, kind)));
      assert.equal(loaded.format, 'arrow');
      assert.deepEqual(names(loaded), ['_row_id', 'city', 'pop']);
      assert.ok(loaded.table.schema.fields[0].type instanceof Int32);
      assert.deepEqual(rowsFromTable(loaded.table), [
        { _row_id: 0, city: 'Oslo', pop: 700000 },
        { _row_id: 1, city: 'Bergen', pop: 285000 },
      ]);
    });
  }

  test('flights-200k.arrow', async () => {
    const loaded = await readTableFile(vegaData('flights-200k.arrow'));
    assert.equal(loaded.format, 'arrow');
    assert.equal(loaded.table.numRows, 200000);
    assert.deepEqual(names(loaded), ['_row_id', 'delay', 'distance', 'time']);
  });

  test('seattle-weather.csv', async () => {
    const loaded = await readTableFile(vegaData('seattle-weather.csv'));
    assert.equal(loaded.table.numRows, 1461);
    assert.deepEqual(names(loaded), ['_row_id', 'date', 'precipitation', 'temp_max', 'temp_min', 'wind', 'weather']);
  });

  test('the extension is matched case-insensitively', async () => {
    const loaded = await readTableFile(await tmp.write('UPPER.CSV', ROWS_CSV));
    assert.equal(loaded.format, 'csv');
  });
});

describe('readTableFile: formats by content', () => {
  test('Arrow file magic', async () => {
    const loaded = await readTableFile(await tmp.write('noext-file', tableToIPC(ARROW_TABLE, 'file')));
    assert.equal(loaded.format, 'arrow');
    assert.equal(loaded.table.numRows, 2);
  });

  test('Arrow stream continuation marker', async () => {
    const loaded = await readTableFile(await tmp.write('noext-stream.bin', tableToIPC(ARROW_TABLE, 'stream')));
    assert.equal(loaded.format, 'arrow');
    assert.equal(loaded.table.numRows, 2);
  });

  test('JSON array after a BOM and whitespace', async () => {
    const loaded = await readTableFile(await tmp.write('rows.txt', `\uFEFF \n\t${ROWS_JSON}`));
    assert.equal(loaded.format, 'json');
    assert.deepEqual(rowsFromTable(loaded.table), EXPECTED_ROWS);
  });

  test('a FeatureCollection without an extension is geojson', async () => {
    const loaded = await readTableFile(await tmp.write('features', FEATURES));
    assert.equal(loaded.format, 'geojson');
  });

  test('anything else is CSV, BOM included', async () => {
    const loaded = await readTableFile(await tmp.write('rows.dat', `\uFEFF${ROWS_CSV.replace(/\n/g, '\r\n')}`));
    assert.equal(loaded.format, 'csv');
    assert.deepEqual(rowsFromTable(loaded.table), EXPECTED_ROWS);
  });

  test('detection helpers: option beats extension beats content', () => {
    const csvBytes = Buffer.from('a\n1\n');
    assert.deepEqual(detectTableFileFormat('x.json', csvBytes, 'csv'), { format: 'csv', from: 'option' });
    assert.deepEqual(detectTableFileFormat('x.json', csvBytes), { format: 'json', from: 'extension' });
    assert.deepEqual(detectTableFileFormat('x', csvBytes), { format: 'csv', from: 'content' });
    assert.equal(formatFromExtension('/a/b.GeoJSON'), 'geojson');
    assert.equal(formatFromExtension('/a/b.txt'), undefined);
    assert.equal(formatFromBytes(Buffer.from('{"type":1}')), 'json');
    assert.equal(formatFromBytes(new Uint8Array(0)), 'csv');
    assert.equal(formatFromExtension('/a/b.parquet'), 'parquet');
    assert.equal(formatFromExtension('/a/b.PQ'), 'parquet');
    assert.equal(formatFromBytes(Buffer.from('PAR1\0\0\0\0\0\0\0\0PAR1')), 'parquet');
  });
});

describe('readTableFile: options', () => {
  test('an explicit format overrides the extension', async () => {
    const loaded = await readTableFile(await tmp.write('really-csv.json', ROWS_CSV), { format: TableFileFormat.Csv });
    assert.equal(loaded.format, 'csv');
    assert.deepEqual(rowsFromTable(loaded.table), EXPECTED_ROWS);
  });

  test('onProgress hears about the read and the result', async () => {
    const messages: string[] = [];
    await readTableFile(await tmp.write('progress.csv', ROWS_CSV), { onProgress: (m) => messages.push(m) });
    assert.ok(messages.length >= 2, messages.join('\n'));
    assert.ok(messages.some((m) => m.includes('csv')));
    assert.ok(messages.some((m) => m.includes('2 rows')));
  });

  test('isTableFileFormat accepts exactly the five names', () => {
    for (const f of ['json', 'geojson', 'csv', 'arrow', 'parquet']) assert.equal(isTableFileFormat(f), true);
    for (const f of ['JSON', 'Parquet', 'xlsx', '', undefined, 1]) assert.equal(isTableFileFormat(f), false);
  });
});

describe('readTableFile: errors are S2SP_ERR_INPUT_UNREADABLE and name the file', () => {
  test('missing file', async () => {
    await assertUnreadable(join(tmp.dir, 'does-not-exist.csv'));
  });

  test('a directory', async () => {
    const dir = join(tmp.dir, 'a-directory.json');
    await mkdir(dir);
    await assertUnreadable(dir);
  });

  test('invalid JSON', async () => {
    await assertUnreadable(await tmp.write('bad.json', '[{"a": 1},'));
  });

  test('newline-delimited JSON', async () => {
    const path = await tmp.write('lines.json', '{"a":1}\n{"a":2}\n');
    await assertUnreadable(path);
    await assert.rejects(readTableFile(path), /newline-delimited/);
  });

  test('JSON that is not an array of objects', async () => {
    await assertUnreadable(await tmp.write('scalar.json', '42'));
    await assertUnreadable(await tmp.write('object.json', '{"rows": []}'));
    await assertUnreadable(await tmp.write('numbers.json', '[1, 2]'));
    await assertUnreadable(await tmp.write('mixed.json', '[{"a": 1}, null]'));
    await assertUnreadable(await tmp.write('nested.json', '[[1], [2]]'));
  });

  test('a geojson file that is not a FeatureCollection', async () => {
    await assertUnreadable(await tmp.write('array.geojson', ROWS_JSON));
    await assertUnreadable(await tmp.write('broken.geojson', '{"type": "FeatureCollection", "features": 3}'));
  });

  test('empty CSV', async () => {
    await assertUnreadable(await tmp.write('empty.csv', ''));
    await assertUnreadable(await tmp.write('blank.csv', '\n\n'));
  });

  test('an empty file with no extension (sniffed as CSV)', async () => {
    await assertUnreadable(await tmp.write('empty', ''));
  });

  test('malformed CSV', async () => {
    await assertUnreadable(await tmp.write('open-quote.csv', 'a,b\n"x,1\n'));
    await assertUnreadable(await tmp.write('too-wide.csv', 'a,b\n1,2,3\n'));
  });

  test('text that is not UTF-8', async () => {
    await assertUnreadable(await tmp.write('latin1.csv', Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x63, 0x61, 0x66, 0xe9, 0x0a])));
  });

  test('unreadable Arrow: junk, empty, truncated file, truncated stream', async () => {
    await assertUnreadable(await tmp.write('junk.arrow', 'city,pop\nOslo,1\n'));
    await assertUnreadable(await tmp.write('empty.arrow', ''));
    const file = tableToIPC(ARROW_TABLE, 'file');
    await assertUnreadable(await tmp.write('cut.arrow', file.subarray(0, file.length - 16)));
    const stream = tableToIPC(ARROW_TABLE, 'stream');
    await assertUnreadable(await tmp.write('cut.arrows', stream.subarray(0, stream.length - 8)));
  });

  test('an explicit format the content does not match', async () => {
    await assertUnreadable(await tmp.write('rows.csv', ROWS_CSV), { format: 'arrow' });
    await assertUnreadable(await tmp.write('rows2.csv', ROWS_CSV), { format: 'json' });
    await assertUnreadable(await tmp.write('rows3.csv', ROWS_CSV), { format: 'parquet' });
  });

  test('an unknown format name', async () => {
    const path = await tmp.write('whatever.csv', ROWS_CSV);
    await assertUnreadable(path, { format: 'xlsx' as TableFileFormat });
  });
});

describe('regression: input files keep their columns as written', () => {
  test('a header-only CSV gives its columns and no rows', async () => {
    const loaded = await readTableFile(await tmp.write('header-only.csv', 'a,b\n'));
    assert.deepEqual(
      loaded.table.schema.fields.map((f) => f.name),
      ['_row_id', 'a', 'b'],
    );
    assert.equal(loaded.table.numRows, 0);
  });

  test('a CSV header "id, name" keeps the column " name", which the JSON form of abstract_domains names', async () => {
    const loaded = await readTableFile(await tmp.write('spaced.csv', 'id, name\n1,x\n'));
    const names = loaded.table.schema.fields.map((f) => f.name);
    assert.deepEqual(names, ['_row_id', 'id', ' name']);
    const domains = parseAbstractDomains('[" name"]') ?? [];
    assert.deepEqual(
      domains.filter((d) => !names.includes(d)),
      [],
    );
  });

  test('JSON keys that look like numbers keep the document order (first seen)', async () => {
    const loaded = await readTableFile(await tmp.write('numeric-keys.json', '[{"b":1,"10":2,"2":3},{"b":4,"z":5,"1":6}]'));
    assert.deepEqual(
      loaded.table.schema.fields.map((f) => f.name),
      ['_row_id', 'b', '10', '2', 'z', '1'],
    );
    assert.deepEqual(rowsFromTable(loaded.table)[0], { _row_id: 0, b: 1, 10: 2, 2: 3, z: null, 1: null });
  });
});
