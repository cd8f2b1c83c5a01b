import { readFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { booleanFromCsvText, numberFromCsvText, parseCsvRecords, rowsFromCsv } from '../../../src/cli/input/csv.js';
import { vegaData } from './fixtures.js';

function assertUnreadable(fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => (err as { code?: unknown }).code === 'S2SP_ERR_INPUT_UNREADABLE');
}

describe('parseCsvRecords', () => {
  test('splits plain fields on commas and LF', () => {
    assert.deepEqual(parseCsvRecords('a,b\n1,2\n'), [
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  test('CRLF line ends give the same records as LF', () => {
    assert.deepEqual(parseCsvRecords('a,b\r\n1,2\r\n3,4'), [
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
    ]);
  });

  test('a lone CR also ends a record', () => {
    assert.deepEqual(parseCsvRecords('a\r1\r'), [['a'], ['1']]);
  });

  test('no trailing newline: the last record is still read', () => {
    assert.deepEqual(parseCsvRecords('a\n1'), [['a'], ['1']]);
  });

  test('quoted fields keep commas, newlines and doubled quotes', () => {
    const text = 'name,note\n"Smith, J","said ""hi""\nthen left"\n"",x\n';
    assert.deepEqual(parseCsvRecords(text), [
      ['name', 'note'],
      ['Smith, J', 'said "hi"\nthen left'],
      ['', 'x'],
    ]);
  });

  test('a CRLF inside quotes is kept as written', () => {
    assert.deepEqual(parseCsvRecords('a\r\n"x\r\ny"\r\n'), [['a'], ['x\r\ny']]);
  });

  test('a UTF-8 BOM before the header is dropped', () => {
    assert.deepEqual(parseCsvRecords('\uFEFFid,v\n1,2\n'), [
      ['id', 'v'],
      ['1', '2'],
    ]);
  });

  test('blank lines are skipped, a trailing comma is an empty field', () => {
    assert.deepEqual(parseCsvRecords('a,b\n\n1,\n\r\n2,3\n\n'), [
      ['a', 'b'],
      ['1', ''],
      ['2', '3'],
    ]);
  });

  test('a quote inside an unquoted field is literal', () => {
    assert.deepEqual(parseCsvRecords('a\n5"2\n'), [['a'], ['5"2']]);
  });

  test('reports the line each record starts on, counting newlines inside quotes', () => {
    const lines: number[] = [];
    parseCsvRecords('h\n"two\nlines"\n\nlast\n', lines);
    assert.deepEqual(lines, [1, 2, 5]);
  });

  test('an unterminated quoted field is an error', () => {
    assertUnreadable(() => parseCsvRecords('a,b\n"open,2\n'));
  });

  test('text after a closing quote is an error', () => {
    assertUnreadable(() => parseCsvRecords('a,b\n"x"y,2\n'));
  });
});

describe('numberFromCsvText and booleanFromCsvText', () => {
  test('plain integers and decimals are numbers', () => {
    for (const [text, value] of [
      ['0', 0],
      ['-3', -3],
      ['42', 42],
      ['0.0', 0],
      ['12.80', 12.8],
      ['-89.23450472', -89.23450472],
      ['.5', 0.5],
      ['1e3', 1000],
      ['2.5E-2', 0.025],
      ['9007199254740991', 9007199254740991],
    ] as const) {
      assert.equal(numberFromCsvText(text), value, text);
    }
  });

  test('identifiers, padded, signed and special spellings stay text', () => {
    for (const text of ['007', '00M', '+1', ' 1', '1 ', '1.', '0x10', 'NaN', 'Infinity', '-Infinity', '1e999', '12345678901234567890', '1,000', '']) {
      assert.equal(numberFromCsvText(text), undefined, JSON.stringify(text));
    }
  });

  test('true/false in the usual capitalisations are booleans, nothing else', () => {
    assert.equal(booleanFromCsvText('true'), true);
    assert.equal(booleanFromCsvText('TRUE'), true);
    assert.equal(booleanFromCsvText('False'), false);
    assert.equal(booleanFromCsvText('yes'), undefined);
    assert.equal(booleanFromCsvText('1'), undefined);
    assert.equal(booleanFromCsvText('tRuE'), undefined);
  });
});

describe('rowsFromCsv', () => {
  test('types each column: numbers, booleans, text, empty -> null', () => {
    const rows = rowsFromCsv('n,b,s\n1,true,x\n,false,\n2.5,,y\n').rows;
    assert.deepEqual(rows, [
      { n: 1, b: true, s: 'x' },
      { n: null, b: false, s: null },
      { n: 2.5, b: null, s: 'y' },
    ]);
  });

  test('a column with one non-number keeps every cell as text', () => {
    const rows = rowsFromCsv('code\n123\n00M\n7\n').rows;
    assert.deepEqual(
      rows.map((r) => r.code),
      ['123', '00M', '7'],
    );
  });

  test('a column mixing booleans and numbers stays text', () => {
    const rows = rowsFromCsv('v\ntrue\n1\n').rows;
    assert.deepEqual(
      rows.map((r) => r.v),
      ['true', '1'],
    );
  });

  test('a short record gets nulls for the missing fields', () => {
    assert.deepEqual(rowsFromCsv('a,b,c\n1\n').rows, [{ a: 1, b: null, c: null }]);
  });

  test('a record with more fields than the header is an error', () => {
    assertUnreadable(() => rowsFromCsv('a,b\n1,2\n1,2,3\n').rows);
  });

  test('the error for a long record names its line', () => {
    assert.throws(() => rowsFromCsv('a\n"x\ny"\n1,2\n').rows, /line 4/);
  });

  test('empty and repeated header names are made unique', () => {
    const rows = rowsFromCsv('x,,x,x\n1,2,3,4\n').rows;
    assert.deepEqual(Object.keys(rows[0]), ['x', 'column_2', 'x_2', 'x_3']);
    assert.deepEqual(Object.values(rows[0]), [1, 2, 3, 4]);
  });

  test('a header named __proto__ becomes an ordinary column', () => {
    const rows = rowsFromCsv('__proto__,a\nhello,1\n').rows;
    assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
    assert.deepEqual(Object.keys(rows[0]), ['__proto__', 'a']);
    assert.equal(Object.getOwnPropertyDescriptor(rows[0], '__proto__')?.value, 'hello');
  });

  test('a header with no records gives no rows', () => {
    assert.deepEqual(rowsFromCsv('a,b\n'), { rows: [], columns: ['a', 'b'] });
  });

  test('empty text, blank lines or a lone BOM have no header: error', () => {
    assertUnreadable(() => rowsFromCsv(''));
    assertUnreadable(() => rowsFromCsv('\n\r\n').rows);
    assertUnreadable(() => rowsFromCsv('\uFEFF').rows);
  });
});

describe('rowsFromCsv on vega-datasets', () => {
  test('seattle-weather.csv: 1461 days, decimals like 0.0 read as numbers', async () => {
    const text = await readFile(vegaData('seattle-weather.csv'), 'utf8');
    const rows = rowsFromCsv(text).rows;
    assert.equal(rows.length, 1461);
    assert.deepEqual(rows[0], { date: '2012-01-01', precipitation: 0, temp_max: 12.8, temp_min: 5, wind: 4.7, weather: 'drizzle' });
    assert.deepEqual(rows[1460], { date: '2015-12-31', precipitation: 0, temp_max: 5.6, temp_min: -2.1, wind: 3.5, weather: 'sun' });
    assert.equal(rows.filter((r) => r.weather === 'rain').length, 641);
  });

  test('seattle-weather.csv with CRLF line ends reads the same', async () => {
    const text = await readFile(vegaData('seattle-weather.csv'), 'utf8');
    assert.deepEqual(rowsFromCsv(text.replace(/\n/g, '\r\n')).rows, rowsFromCsv(text).rows);
  });

  test('airports.csv: 3376 airports, quoted names with commas, ids like 00M stay text', async () => {
    const text = await readFile(vegaData('airports.csv'), 'utf8');
    const rows = rowsFromCsv(text).rows;
    assert.equal(rows.length, 3376);
    assert.deepEqual(rows[0], {
      iata: '00M',
      name: 'Thigpen',
      city: 'Bay Springs',
      state: 'MS',
      country: 'USA',
      latitude: 31.95376472,
      longitude: -89.23450472,
    });
    const union = rows.find((r) => r.iata === '35A');
    assert.equal(union?.name, 'Union County, Troy Shelton');
    assert.equal(union?.latitude, 34.68680111);
    assert.ok(rows.every((r) => Object.keys(r).length === 7));
  });
});
