/**
 * Encodes a table as the data plane's JSON document, straight to UTF-8:
 *
 *   {"body":[{"_row_id":0,...},...],"total_rows":k,"columns_returned":[...]}
 *
 * Rows come out in chunks of about `chunkBytes`, so a large body is never
 * one giant buffer or string (V8 strings stop near 512 MiB).
 */
import type { Table } from 'apache-arrow';
import { JSON_BODY_OPEN, jsonBodyClose } from '../protocol/json-body-bytes.js';
import { ByteWriter } from './byte-writer.js';
import { CellTexts } from './cell-texts.js';
import { columnTexts } from './column-texts.js';
import { arrayRowLayout, objectRowLayout, writeRows, type RowLayout } from './json-rows.js';

/** Default size of one JSON chunk, in bytes. */
export const DEFAULT_JSON_CHUNK_BYTES = 64 * 1024;

/**
 * Rows per run: the texts of a run's cells are written a column at a time,
 * then its rows (cell-texts.ts). A run's texts stay within a core's cache.
 */
const RUN_ROWS = 512;

/**
 * Yields the rows of `table` as JSON bytes, `{"_row_id":0,...}` each,
 * comma-separated (a chunk after the first starts with the comma), in chunks
 * of about `chunkBytes` (Infinity: one chunk).
 */
export function jsonRowBytes(table: Table, chunkBytes = DEFAULT_JSON_CHUNK_BYTES): Generator<Uint8Array> {
  return rowBytes(table, chunkBytes, objectRowLayout(table.schema.fields.map((f) => f.name)));
}

function* rowBytes(table: Table, chunkBytes: number, layout: RowLayout): Generator<Uint8Array> {
  const fields = table.schema.fields;
  const w = new ByteWriter(Number.isFinite(chunkBytes) ? chunkBytes + 4096 : table.numRows * 16 * Math.max(1, fields.length));
  const columns = fields.map(() => new CellTexts(RUN_ROWS));
  let first = true;
  for (const batch of table.batches) {
    // An empty table from arrow-js may hold Vectors where Data belongs; nothing to write anyway.
    if (batch.numRows === 0) continue;
    const texts = fields.map((f, c) => columnTexts(f, [batch.data.children[c]]));
    for (let from = 0; from < batch.numRows; from += RUN_ROWS) {
      const rows = Math.min(RUN_ROWS, batch.numRows - from);
      columns.forEach((column, c) => {
        column.clear(rows);
        texts[c](null, from, from + rows, column);
      });
      for (let k = 0; k < rows; first = false) {
        k = writeRows(w, layout, columns, k, rows, first, chunkBytes);
        if (w.pos >= chunkBytes) yield w.take();
      }
    }
  }
  if (w.pos > 0) yield w.take(0);
}

/** The rows of `table` as one JSON fragment (no brackets). */
export function jsonRowFragment(table: Table): Uint8Array {
  const parts = [...jsonRowBytes(table, Number.POSITIVE_INFINITY)];
  return parts.length === 0 ? new Uint8Array(0) : parts[0];
}

/**
 * The rows of `table` as one JSON fragment of value arrays, `[0,2.0,"x"]`
 * each, in column order, comma-separated (no brackets around the list): the
 * `columns` layout of an abstract (SPEC 2.4), every value written exactly as
 * {@link jsonRowBytes} writes it.
 */
export function jsonArrayRowFragment(table: Table): Uint8Array {
  const parts = [...rowBytes(table, Number.POSITIVE_INFINITY, arrayRowLayout(table.schema.fields.length))];
  return parts.length === 0 ? new Uint8Array(0) : parts[0];
}

/** Yields the rows of `table` as strings (see {@link jsonRowBytes}). */
export function* jsonRowChunks(table: Table, chunkBytes = DEFAULT_JSON_CHUNK_BYTES): Generator<string> {
  for (const bytes of jsonRowBytes(table, chunkBytes)) yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** Yields the full data-plane JSON document for `table` (SPEC 3.2) as strings, in chunks. */
export function* jsonBodyChunks(table: Table, chunkBytes = DEFAULT_JSON_CHUNK_BYTES): Generator<string> {
  yield JSON_BODY_OPEN.toString();
  yield* jsonRowChunks(table, chunkBytes);
  yield jsonBodyClose(
    table.numRows,
    table.schema.fields.map((f) => f.name),
  );
}
