/**
 * Per-chunk readers for one column: `(i) => JS value`, for rows handed to user
 * code (the JSON writer has its own, json-column-writers.ts). Common types read
 * the typed arrays directly; anything else goes through arrow-js's `Vector#get`.
 *
 * Layout after arrow-js slicing (data.ts `_sliceBuffers`): fixed-width values
 * and var-width offsets are already sub-arrays starting at the slice; Bool
 * values and every validity bitmap keep the whole buffer and are indexed by
 * `data.offset + i`.
 */
import { Type, makeVector, type Data, type Field } from 'apache-arrow';
import { isJsonField } from './json-column.js';

/** Reads element `i` of one chunk as a plain JS value. */
export type ValueReader = (i: number) => unknown;

/** A JS-value reader for `data`, the chunk of `field` in one batch. */
export function valueReader(field: Field, data: Data): ValueReader {
  const valid = validity(data);
  const read = rawValueReader(field, data);
  return valid ? (i) => (valid(i) ? read(i) : null) : read;
}

function validity(data: Data): ((i: number) => boolean) | undefined {
  if (data.typeId === Type.Null) return () => false;
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return undefined;
  const offset = data.offset;
  return (i) => {
    const bit = offset + i;
    return (bitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
  };
}

function rawValueReader(field: Field, data: Data): ValueReader {
  switch (data.typeId) {
    case Type.Int:
    case Type.Float: {
      const values = data.values as ArrayLike<number | bigint>;
      if (values instanceof BigInt64Array || values instanceof BigUint64Array) return (i) => Number(values[i]);
      if (values instanceof Uint16Array) break;
      return (i) => {
        const v = values[i] as number;
        return Number.isFinite(v) ? v : null;
      };
    }
    case Type.Bool: {
      const bits = data.values as Uint8Array;
      const offset = data.offset;
      return (i) => (bits[(offset + i) >> 3] & (1 << ((offset + i) & 7))) !== 0;
    }
    case Type.Utf8: {
      const text = utf8Slicer(data);
      if (isJsonField(field)) return (i) => JSON.parse(text(i));
      return text;
    }
  }
  const vector = makeVector(data);
  return (i) => toJsonValue(vector.get(i));
}

/** Decodes string `i` of a Utf8 chunk without copying the value buffer first. */
function utf8Slicer(data: Data): (i: number) => string {
  const offsets = data.valueOffsets as Int32Array;
  const bytes = data.values as Uint8Array;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (i) => buffer.toString('utf8', offsets[i], offsets[i + 1]);
}

/**
 * Converts what arrow-js's `get` returns into a JSON value: bigints become
 * numbers, dates epoch milliseconds, nested vectors and struct rows arrays and
 * objects, binary base64.
 */
export function toJsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'bigint':
      return Number(value);
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'object':
      break;
    default:
      return value;
  }
  if (value instanceof Date) return value.getTime();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<unknown>, toJsonValue);
  if (value instanceof Map) return Object.fromEntries(Array.from(value, ([k, v]) => [String(k), toJsonValue(v)]));
  const iterable = value as { toArray?: () => unknown[]; toJSON?: () => unknown };
  if (typeof iterable.toArray === 'function' && Symbol.iterator in (value as object)) {
    return Array.from(value as Iterable<unknown>, toJsonValue);
  }
  const plain = typeof iterable.toJSON === 'function' ? iterable.toJSON() : value;
  if (Array.isArray(plain)) return plain.map(toJsonValue);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plain as object)) out[k] = toJsonValue(v);
  return out;
}
