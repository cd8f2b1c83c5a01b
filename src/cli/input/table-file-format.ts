/**
 * The table file formats the CLI reads, and how a file's format is found:
 * an explicit choice first, then the file name's extension, then the first
 * bytes of the content.
 */
import { extname } from 'node:path';
import { ARROW_FILE_MAGIC, startsWithContinuation } from '../../protocol/arrow-framing.js';

/** The formats {@link readTableFile} understands. */
export const TableFileFormat = {
  Json: 'json',
  GeoJson: 'geojson',
  Csv: 'csv',
  Arrow: 'arrow',
  Parquet: 'parquet',
} as const;
/** One of `json`, `geojson`, `csv`, `arrow`, `parquet`. */
export type TableFileFormat = (typeof TableFileFormat)[keyof typeof TableFileFormat];

/** Every format name, for help text and error messages. */
export const TABLE_FILE_FORMATS: readonly TableFileFormat[] = Object.values(TableFileFormat);

/** Where a detected format came from, for progress messages. */
export type FormatSource = 'option' | 'extension' | 'content';

/** True when `value` names a {@link TableFileFormat} (for a CLI `--format` argument). */
export function isTableFileFormat(value: unknown): value is TableFileFormat {
  return typeof value === 'string' && (TABLE_FILE_FORMATS as readonly string[]).includes(value);
}

// Feather v2 is the Arrow IPC file format under another name; `.arrows` is
// the registered extension of the IPC stream format.
const BY_EXTENSION: Readonly<Record<string, TableFileFormat>> = {
  '.json': TableFileFormat.Json,
  '.geojson': TableFileFormat.GeoJson,
  '.csv': TableFileFormat.Csv,
  '.arrow': TableFileFormat.Arrow,
  '.arrows': TableFileFormat.Arrow,
  '.ipc': TableFileFormat.Arrow,
  '.feather': TableFileFormat.Arrow,
  '.parquet': TableFileFormat.Parquet,
  '.pq': TableFileFormat.Parquet,
};

/** The format a file name's extension implies (case-insensitive), or undefined. */
export function formatFromExtension(path: string): TableFileFormat | undefined {
  return BY_EXTENSION[extname(path).toLowerCase()];
}

/** `PAR1`: the magic that opens (and closes) a Parquet file. */
export const PARQUET_MAGIC = Uint8Array.from([0x50, 0x41, 0x52, 0x31]);

/** True when `bytes` starts with `prefix`. */
export function startsWithBytes(bytes: Uint8Array, prefix: Uint8Array, at = 0): boolean {
  if (at < 0 || bytes.length - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/**
 * Guesses the format from content: Arrow file magic or stream continuation
 * marker -> arrow; PAR1 at both ends -> parquet; `[` or `{` after an
 * optional UTF-8 BOM and whitespace -> json (a FeatureCollection is
 * recognised after parsing); anything else -> csv, the format with no
 * signature of its own.
 */
export function formatFromBytes(bytes: Uint8Array): TableFileFormat {
  if (startsWithBytes(bytes, ARROW_FILE_MAGIC) || startsWithContinuation(bytes)) return TableFileFormat.Arrow;
  if (isParquetFramed(bytes)) return TableFileFormat.Parquet;
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // Only look a little way in: a CSV never starts with kilobytes of blanks.
  const end = Math.min(bytes.length, i + 4096);
  while (i < end && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  if (bytes[i] === 0x5b || bytes[i] === 0x7b) return TableFileFormat.Json;
  return TableFileFormat.Csv;
}

// Both ends, not only the start: a CSV whose first header is `PAR1` must stay
// a CSV. A truncated Parquet file without its extension is then refused as
// text that is not UTF-8, which is still an error, not a wrong table.
function isParquetFramed(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && startsWithBytes(bytes, PARQUET_MAGIC) && startsWithBytes(bytes, PARQUET_MAGIC, bytes.length - PARQUET_MAGIC.length);
}

/**
 * Picks the format of a file: `explicit` when given, else the extension's,
 * else the content's.
 *
 * @param path the file name (only its extension is used)
 * @param bytes the file's content
 * @param explicit a format the caller asked for
 */
export function detectTableFileFormat(path: string, bytes: Uint8Array, explicit?: TableFileFormat): { format: TableFileFormat; from: FormatSource } {
  if (explicit !== undefined) return { format: explicit, from: 'option' };
  const byName = formatFromExtension(path);
  if (byName !== undefined) return { format: byName, from: 'extension' };
  return { format: formatFromBytes(bytes), from: 'content' };
}
