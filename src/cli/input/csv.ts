/**
 * A small RFC 4180 CSV reader: a header row, then records. Quoted fields may
 * hold commas, newlines and `""` (one quote); lines end in CRLF, LF or CR; a
 * trailing newline and a UTF-8 BOM are allowed. Written here rather than
 * taken from a package because the CLI needs only this much.
 *
 * Values are typed per column, not per cell, so a column is one Arrow type:
 * a column whose non-empty cells all read as numbers becomes numbers, one
 * whose cells are all `true`/`false` becomes booleans, any other stays text
 * (so `00M` next to `123` keeps both as written). Empty cells are null.
 */
import { S2SPError, type ErrorParams } from '../../errors.js';
import type { Row } from '../../table/rows-from-table.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits CSV text into records of raw field text. Blank lines are skipped.
 *
 * @param text the CSV text
 * @param lines when given, receives the 1-based line each record starts on
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` for an unterminated quoted
 *   field or text after a closing quote
 */
export function parseCsvRecords(text: string, lines?: number[]): string[][] {
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const records: string[][] = [];
  while (i < n) {
    const first = text.charCodeAt(i);
    if (first === LF || first === CR) {
      i += first === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
      line++;
      continue;
    }
    const record: string[] = [];
    const recordLine = line;
    lines?.push(line);
    for (;;) {
      if (text.charCodeAt(i) === QUOTE) {
        let value = '';
        let from = i + 1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q < 0) throw unreadable({ problem: 'csvUnclosedQuote', line: recordLine });
          value += text.slice(from, q);
          if (text.charCodeAt(q + 1) !== QUOTE) {
            i = q + 1;
            break;
          }
          value += '"';
          from = q + 2;
        }
        line += countLineBreaks(value);
        record.push(value);
        const after = text.charCodeAt(i);
        if (i < n && after !== COMMA && after !== LF && after !== CR) {
          throw unreadable({ problem: 'csvTextAfterQuote', line, char: text[i] });
        }
      } else {
        let j = i;
        while (j < n) {
          const c = text.charCodeAt(j);
          if (c === COMMA || c === LF || c === CR) break;
          j++;
        }
        record.push(text.slice(i, j));
        i = j;
      }
      if (i >= n) break;
      const c = text.charCodeAt(i);
      if (c === COMMA) {
        i++;
        continue;
      }
      i += c === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
      line++;
      break;
    }
    records.push(record);
  }
  return records;
}

/** Rows read from CSV text, and the header's column names in order (there may be no rows). */
export interface CsvRows {
  rows: Row[];
  columns: string[];
}

/**
 * Parses CSV text with a header row into rows keyed by header name, values
 * typed per column (see the file comment). A record with fewer fields than
 * the header gets nulls for the rest. Empty header names become `column_<n>`
 * (1-based) and repeated names get `_2`, `_3`, ... so no column is lost.
 * Header names are kept as written, spaces included (`id, name` has a
 * column `" name"`), as Python's csv module keeps them; abstract_domains
 * names such a column in its JSON-array form, which is not trimmed.
 *
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` when there is no header row,
 *   a record has more fields than the header, or the text is malformed
 */
export function rowsFromCsv(text: string): CsvRows {
  const lines: number[] = [];
  const records = parseCsvRecords(text, lines);
  if (records.length === 0) throw unreadable({ problem: 'csvEmpty' });
  const names = headerNames(records[0]);
  const width = names.length;
  for (let r = 1; r < records.length; r++) {
    if (records[r].length > width) {
      throw unreadable({ problem: 'csvTooManyFields', line: lines[r], fields: records[r].length, headerFields: width });
    }
  }
  const rows: Row[] = new Array(records.length - 1);
  for (let r = 1; r < records.length; r++) rows[r - 1] = {};
  for (let c = 0; c < width; c++) {
    const convert = columnConverter(records, c);
    const name = names[c];
    for (let r = 1; r < records.length; r++) {
      const raw = records[r][c];
      const value = raw === undefined || raw === '' ? null : convert(raw);
      // A header named "__proto__" must be a column, not the row's prototype.
      if (name === '__proto__') Object.defineProperty(rows[r - 1], name, { value, enumerable: true, writable: true, configurable: true });
      else rows[r - 1][name] = value;
    }
  }
  return { rows, columns: names };
}

// Integers and decimals as people write them: no leading zeros (`007` and
// zip codes stay text), no `+` (phone numbers), no hex, no NaN/Infinity.
const NUMBER = /^-?(?:(?:0|[1-9]\d*)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?$/;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

/** The number `text` denotes, or undefined when it is not plainly a number. */
export function numberFromCsvText(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value)) return undefined;
  // An integer past 2^53 would come back different: keep such ids as text.
  if (INTEGER.test(text) && !Number.isSafeInteger(value)) return undefined;
  return value;
}

/** The boolean `text` denotes (`true`/`false`, also as TRUE/True), or undefined. */
export function booleanFromCsvText(text: string): boolean | undefined {
  switch (text) {
    case 'true':
    case 'TRUE':
    case 'True':
      return true;
    case 'false':
    case 'FALSE':
    case 'False':
      return false;
    default:
      return undefined;
  }
}

function columnConverter(records: readonly string[][], c: number): (raw: string) => unknown {
  let numbers = true;
  let booleans = true;
  for (let r = 1; r < records.length && (numbers || booleans); r++) {
    const raw = records[r][c];
    if (raw === undefined || raw === '') continue;
    if (numbers && numberFromCsvText(raw) === undefined) numbers = false;
    if (booleans && booleanFromCsvText(raw) === undefined) booleans = false;
  }
  if (numbers) return numberFromCsvText;
  if (booleans) return booleanFromCsvText;
  return (raw) => raw;
}

function headerNames(header: readonly string[]): string[] {
  const used = new Set<string>();
  return header.map((raw, c) => {
    const base = raw === '' ? `column_${c + 1}` : raw;
    let name = base;
    for (let k = 2; used.has(name); k++) name = `${base}_${k}`;
    used.add(name);
    return name;
  });
}

function countLineBreaks(value: string): number {
  let count = 0;
  for (let k = value.indexOf('\n'); k >= 0; k = value.indexOf('\n', k + 1)) count++;
  return count;
}

function unreadable(params: ErrorParams<'S2SP_ERR_INPUT_UNREADABLE'>): S2SPError {
  return new S2SPError('S2SP_ERR_INPUT_UNREADABLE', params);
}
