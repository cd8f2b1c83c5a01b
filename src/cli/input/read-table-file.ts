/**
 * Reads a table file for the CLI: JSON (an array of objects), GeoJSON (a
 * FeatureCollection), CSV, Arrow IPC or Parquet, into an Arrow Table with
 * `_row_id` first, the shape every body in s2sp starts from.
 *
 * Every failure, from a missing file to a truncated Arrow stream, surfaces as
 * `S2SP_ERR_INPUT_UNREADABLE` with a message naming the file and the format
 * it was read as, so the CLI can print it as is.
 */
import { readFile } from 'node:fs/promises';
import type { Table } from 'apache-arrow';
import { S2SPError, isS2SPError } from '../../errors.js';
import type { Row } from '../../table/rows-from-table.js';
import { tableFromRows } from '../../table/table-from-rows.js';
import { tableFromArrowBytes } from './arrow-file.js';
import { rowsFromCsv } from './csv.js';
import { rowsFromJsonText } from './json-rows.js';
import { tableFromParquetBytes } from './parquet.js';
import { TABLE_FILE_FORMATS, TableFileFormat, detectTableFileFormat, isTableFileFormat } from './table-file-format.js';

export { TableFileFormat, TABLE_FILE_FORMATS, isTableFileFormat } from './table-file-format.js';

/** A table read from a file. */
export interface LoadedTable {
  /** The rows, `_row_id` (Int32, 0..n-1) first. */
  table: Table;
  /** The format the file was read as (`geojson` for a FeatureCollection even when `json` was asked for). */
  format: TableFileFormat;
  /** The path as given, for messages. */
  source: string;
}

/** Options of {@link readTableFile}. */
export interface ReadTableFileOptions {
  /** Read as this format instead of guessing from the extension or content. */
  format?: TableFileFormat;
  /**
   * Called with a short human-readable line at each stage (read, detected,
   * parsed, and each row group of a big Parquet file).
   */
  onProgress?: (message: string) => void;
}

/**
 * Reads `path` into an Arrow Table with `_row_id` first.
 *
 * The format is `options.format`, else the extension's (.json, .geojson,
 * .csv, .arrow/.arrows/.ipc/.feather, .parquet/.pq), else sniffed from the
 * first bytes. Text must be UTF-8 (a BOM is fine).
 *
 * @param path the file to read
 * @param options format override and progress callback
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` when the file cannot be read
 *   or is not a table in that format
 */
export async function readTableFile(path: string, options: ReadTableFileOptions = {}): Promise<LoadedTable> {
  const progress = options.onProgress ?? (() => {});
  if (options.format !== undefined && !isTableFileFormat(options.format)) {
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', {
      problem: 'unknownFormat',
      path,
      format: String(options.format),
      formats: TABLE_FILE_FORMATS,
    });
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new S2SPError(
      'S2SP_ERR_INPUT_UNREADABLE',
      { problem: 'fileUnreadable', path, fsCode: (err as { code?: unknown }).code, reason: messageOf(err) },
      { cause: err },
    );
  }
  const { format, from } = detectTableFileFormat(path, bytes, options.format);
  progress(`read ${quote(path)}: ${bytes.length} bytes, format ${format} (from ${from})`);
  try {
    if (format === TableFileFormat.Arrow) {
      const table = tableFromArrowBytes(bytes);
      progress(`${quote(path)}: ${table.numRows} rows x ${table.numCols - 1} columns`);
      return { table, format, source: path };
    }
    if (format === TableFileFormat.Parquet) {
      const table = await tableFromParquetBytes(bytes, (message) => progress(`reading ${quote(path)}: ${message}`));
      progress(`${quote(path)}: ${table.numRows} rows x ${table.numCols - 1} columns`);
      return { table, format, source: path };
    }
    const text = decodeUtf8(bytes);
    let rows: Row[];
    let columns: string[] | undefined;
    let actual: TableFileFormat = format;
    if (format === TableFileFormat.Csv) {
      ({ rows, columns } = rowsFromCsv(text));
    } else {
      const parsed = rowsFromJsonText(text, format);
      rows = parsed.rows;
      columns = parsed.columns;
      actual = parsed.format;
    }
    progress(`${quote(path)}: parsed ${rows.length} rows as ${actual}`);
    const table = tableFromRows(rows, { columns });
    progress(`${quote(path)}: ${table.numRows} rows x ${table.numCols - 1} columns`);
    return { table, format: actual, source: path };
  } catch (err) {
    // A reader that is not installed is not a problem of the file.
    if (isS2SPError(err, 'S2SP_ERR_CLI_PACKAGE_MISSING')) throw err;
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'asFormat', path, format, reason: messageOf(err) }, { cause: err });
  }
}

// fatal: a Latin-1 file decoded leniently would fill the table with U+FFFD
// and nobody would notice; refusing it says what to fix. The decoder also
// drops a leading BOM.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'notUtf8' }, { cause: err });
    throw err;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function quote(text: string): string {
  return JSON.stringify(text);
}
