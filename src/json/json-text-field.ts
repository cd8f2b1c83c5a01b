/**
 * Columns whose values are not one scalar type (objects, arrays, strings mixed
 * with numbers...) are stored as their JSON text in a Utf8 column whose field
 * metadata says `s2sp:encoding = json`. We write the stored text back
 * verbatim, so a value round-trips exactly as `JSON.stringify` wrote it.
 *
 * Why not Arrow's canonical `arrow.json` extension type: polars (0.26 for
 * Node) refuses to read an IPC stream that carries it, and the data plane
 * must stay readable by other Arrow implementations. Plain field metadata is
 * ignored by every reader, which then sees a string column of JSON text. We
 * still recognise `arrow.json` on tables handed to us.
 */
import { Field, Utf8, type DataType } from 'apache-arrow';

/** Field metadata key marking a Utf8 column of JSON text. */
export const JSON_TEXT_METADATA_KEY = 's2sp:encoding';
const JSON_TEXT_METADATA_VALUE = 'json';
const EXTENSION_NAME_KEY = 'ARROW:extension:name';

/** A nullable Utf8 field holding JSON text. */
export function jsonField(name: string): Field<Utf8> {
  return new Field(name, new Utf8(), true, new Map([[JSON_TEXT_METADATA_KEY, JSON_TEXT_METADATA_VALUE]]));
}

/** True when the field holds JSON text (ours, or the canonical `arrow.json` extension). */
export function isJsonField(field: Field<DataType>): boolean {
  return field.metadata.get(JSON_TEXT_METADATA_KEY) === JSON_TEXT_METADATA_VALUE || field.metadata.get(EXTENSION_NAME_KEY) === 'arrow.json';
}
