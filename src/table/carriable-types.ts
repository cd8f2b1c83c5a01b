/**
 * Which Arrow types a body may hold. A body is served as Arrow IPC and as
 * JSON, so a column must survive both exactly; one that cannot is refused
 * when the table is cached (`put`), with the column named, never served
 * garbled. Refused:
 *
 *   - a dictionary inside a nested type: top-level dictionaries are decoded
 *     when a body is cached (decode-dictionaries.ts), but a body's record
 *     batches are written without dictionary messages, so a nested one
 *     would arrive without its values
 *   - a timestamp zone that is neither a fixed offset nor a zone the
 *     runtime's ICU knows: its local time cannot be written
 *   - a struct with two fields of one name: a JSON object cannot hold both
 *   - any type arrow-js has no reader and writer for
 *   - a column or field name holding a lone surrogate (`"k\ud800"`): Arrow
 *     writes names as UTF-8, which cannot hold one, so the data plane would
 *     serve U+FFFD under a name the envelope spells otherwise
 */
import { Type, type DataType, type Field, type Schema, type Timestamp } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { offsetResolver } from './time-zone.js';

const LEAF_TYPES = new Set<Type>([
  Type.Null,
  Type.Int,
  Type.Float,
  Type.Binary,
  Type.Utf8,
  Type.Bool,
  Type.Decimal,
  Type.Date,
  Type.Time,
  Type.Interval,
  Type.FixedSizeBinary,
  Type.Duration,
  Type.LargeBinary,
  Type.LargeUtf8,
  Type.BinaryView,
  Type.Utf8View,
]);
const NESTED_TYPES = new Set<Type>([Type.List, Type.LargeList, Type.FixedSizeList, Type.Struct, Type.Map, Type.Union]);

/**
 * True when `text` is valid UTF-16: no lone surrogate, so UTF-8 (Arrow's
 * Utf8, its field names) holds it exactly. String#isWellFormed is ES2024,
 * in V8 since Node 20; the lib here is ES2023.
 */
export function isWellFormedText(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Checks every column of `schema`, nested types included.
 * @throws S2SPError `S2SP_ERR_TABLE_UNSUPPORTED_TYPE` naming the first column that cannot be carried, and why;
 *   `S2SP_ERR_TABLE_INVALID` for a name holding a lone surrogate
 */
export function assertCarriableSchema(schema: Schema): void {
  for (const field of schema.fields) {
    if (!isWellFormedText(field.name)) throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'loneSurrogateName', column: field.name });
    const type = field.type.typeId === Type.Dictionary ? (field.type.dictionary as DataType) : field.type;
    checkType(field.name, type);
  }
}

function checkType(path: string, type: DataType): void {
  const id = type.typeId as Type;
  if (id === Type.Dictionary) {
    throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'nestedDictionary', column: path, type: String(type) });
  }
  if (id === Type.Timestamp) {
    const zone = (type as Timestamp).timezone;
    if (zone && offsetResolver(zone) === undefined) throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unknownZone', column: path, zone });
    return;
  }
  if (LEAF_TYPES.has(id)) return;
  if (!NESTED_TYPES.has(id)) throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unsupportedType', column: path, type: String(type) });
  const children = (type.children ?? []) as Field[];
  if (id === Type.Struct) {
    const seen = new Set<string>();
    for (const child of children) {
      if (seen.has(child.name)) throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'duplicateField', column: path, field: child.name });
      seen.add(child.name);
    }
  }
  for (const child of children) {
    if (!isWellFormedText(child.name)) throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'loneSurrogateName', column: `${path}.${child.name}` });
    checkType(`${path}.${child.name}`, child.type);
  }
}
