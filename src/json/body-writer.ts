/**
 * Encodes a table as the data plane's JSON document, straight to UTF-8:
 *
 *   {"body":[{"_row_id":0,...},...],"total_rows":k,"columns_returned":[...]}
 *
 * Rows come out in chunks of about `chunkBytes`, so a large body is never
 * one giant buffer or string (V8 strings stop near 512 MiB).
 */
import type { Table } from 'apache-arrow';
import { JSON_BODY_OPEN, JSON_ROW_SEPARATOR, jsonBodyClose } from '../protocol/json-body-bytes.js';
import { ByteWriter } from './byte-writer.js';
import { CLOSE_BRACE, CLOSE_BRACKET, COMMA, OPEN_BRACKET } from './bytes.js';
import { jsonWriter } from './column-codec.js';
import type { JsonWriter } from './json-codec.js';

/** Default size of one JSON chunk, in bytes. */
export const DEFAULT_JSON_CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/** How a row is written: what opens it, what precedes each value, what closes it. */
interface RowLayout {
  readonly open: Uint8Array | undefined;
  readonly before: readonly Uint8Array[];
  readonly close: number;
}

/**
 * Yields the rows of `table` as JSON bytes, `{"_row_id":0,...}` each,
 * comma-separated (a chunk after the first starts with the comma), in chunks
 * of about `chunkBytes` (Infinity: one chunk).
 */
export function jsonRowBytes(table: Table, chunkBytes = DEFAULT_JSON_CHUNK_BYTES): Generator<Uint8Array> {
  const fields = table.schema.fields;
  // `{"_row_id":` opens a row, `,"name":` precedes every other value.
  const before = fields.map((f, c) => encoder.encode((c === 0 ? '{' : ',') + JSON.stringify(f.name) + ':'));
  return rowBytes(table, chunkBytes, { open: fields.length === 0 ? encoder.encode('{') : undefined, before, close: CLOSE_BRACE });
}

function* rowBytes(table: Table, chunkBytes: number, { open, before, close }: RowLayout): Generator<Uint8Array> {
  const fields = table.schema.fields;
  const width = fields.length;
  const w = new ByteWriter(Number.isFinite(chunkBytes) ? chunkBytes + 4096 : table.numRows * 16 * Math.max(1, width));
  let first = true;
  for (const batch of table.batches) {
    // An empty table from arrow-js may hold Vectors where Data belongs; nothing to write anyway.
    if (batch.numRows === 0) continue;
    const writers: JsonWriter[] = fields.map((f, c) => jsonWriter(f, batch.data.children[c], true));
    for (let i = 0; i < batch.numRows; i++) {
      w.ensure(1);
      if (!first) w.buf[w.pos++] = JSON_ROW_SEPARATOR;
      first = false;
      if (open !== undefined) w.bytes(open);
      for (let c = 0; c < width; c++) {
        w.bytes(before[c]);
        writers[c](w, i);
      }
      w.ensure(1);
      w.buf[w.pos++] = close;
      if (w.pos >= chunkBytes) yield w.take();
    }
  }
  if (w.pos > 0) yield w.take(0);
}

/** The rows of `table` as one JSON fragment (no brackets). */
export function jsonRowFragment(table: Table): Uint8Array {
  const parts = [...jsonRowBytes(table, Number.POSITIVE_INFINITY)];
  return parts.length === 0 ? new Uint8Array(0) : parts[0];
}

// What the value arrays of jsonArrayRowFragment are made of.
const NOTHING = new Uint8Array(0);
const VALUE_SEPARATOR = Uint8Array.of(COMMA);
const ARRAY_OPEN = Uint8Array.of(OPEN_BRACKET);

/**
 * The rows of `table` as one JSON fragment of value arrays, `[0,2.0,"x"]`
 * each, in column order, comma-separated (no brackets around the list): the
 * `columns` layout of an abstract (SPEC 2.4), every value written exactly as
 * {@link jsonRowBytes} writes it.
 */
export function jsonArrayRowFragment(table: Table): Uint8Array {
  const before = table.schema.fields.map((_, c) => (c === 0 ? NOTHING : VALUE_SEPARATOR));
  const parts = [...rowBytes(table, Number.POSITIVE_INFINITY, { open: ARRAY_OPEN, before, close: CLOSE_BRACKET })];
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
