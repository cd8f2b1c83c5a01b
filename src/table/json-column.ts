/**
 * Columns whose values are not one scalar type (objects, arrays, strings mixed
 * with numbers...) are stored as their JSON text in a Utf8 column tagged with
 * Arrow's canonical `arrow.json` extension type. Other Arrow readers see a
 * string column they can parse; we write the stored text back verbatim, so a
 * value round-trips exactly as `JSON.stringify` wrote it.
 */
import { Field, Utf8, type DataType } from 'apache-arrow';

const EXTENSION_NAME_KEY = 'ARROW:extension:name';
const EXTENSION_METADATA_KEY = 'ARROW:extension:metadata';

/** The canonical extension name for JSON-in-Utf8. */
export const JSON_EXTENSION = 'arrow.json';

/** A nullable Utf8 field tagged as `arrow.json`. */
export function jsonField(name: string): Field<Utf8> {
  const metadata = new Map([
    [EXTENSION_NAME_KEY, JSON_EXTENSION],
    [EXTENSION_METADATA_KEY, ''],
  ]);
  return new Field(name, new Utf8(), true, metadata);
}

/** True when the field holds JSON text (the `arrow.json` extension). */
export function isJsonField(field: Field<DataType>): boolean {
  return field.metadata.get(EXTENSION_NAME_KEY) === JSON_EXTENSION;
}
