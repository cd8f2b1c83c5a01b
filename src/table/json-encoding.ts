/**
 * Encodes a table as the data plane's JSON document, in chunks:
 *
 *   {"body":[{"_row_id":0,...},...],"total_rows":k,"columns_returned":[...]}
 *
 * A chunk is a string of about `chunkChars` characters, so a large body is
 * never one giant string (V8 strings stop near 512 MiB).
 */
import type { Table } from 'apache-arrow';
import { jsonReader, type JsonReader } from './column-readers.js';

/** Default size of one JSON chunk, in UTF-16 code units. */
export const DEFAULT_JSON_CHUNK_CHARS = 64 * 1024;

/** Yields the JSON rows of `table`, `{"_row_id":0,...}` each, comma-separated, in chunks. */
export function* jsonRowChunks(table: Table, chunkChars = DEFAULT_JSON_CHUNK_CHARS): Generator<string> {
  const fields = table.schema.fields;
  const keys = fields.map((f, c) => (c === 0 ? '{' : ',') + JSON.stringify(f.name) + ':');
  let chunk = '';
  let first = true;
  for (const batch of table.batches) {
    const readers: JsonReader[] = fields.map((f, c) => jsonReader(f, batch.data.children[c]));
    const width = readers.length;
    for (let i = 0; i < batch.numRows; i++) {
      let row = first ? '' : ',';
      first = false;
      for (let c = 0; c < width; c++) row += keys[c] + readers[c](i);
      chunk += row + '}';
      if (chunk.length >= chunkChars) {
        yield chunk;
        chunk = '';
      }
    }
  }
  if (chunk.length > 0) yield chunk;
}

/** Yields the full data-plane JSON document for `table` (SPEC 3.2), in chunks. */
export function* jsonBodyChunks(table: Table, chunkChars = DEFAULT_JSON_CHUNK_CHARS): Generator<string> {
  yield '{"body":[';
  yield* jsonRowChunks(table, chunkChars);
  const columns = JSON.stringify(table.schema.fields.map((f) => f.name));
  yield `],"total_rows":${table.numRows},"columns_returned":${columns}}`;
}
