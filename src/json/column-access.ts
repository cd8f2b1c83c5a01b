/**
 * Reading one Arrow column chunk element by element, shared by the JSON
 * codecs of every type family (column-codec.ts), writers and readers alike,
 * so both see the same values.
 *
 * Layout after arrow-js slicing (data.ts `_sliceBuffers`, `slice`):
 *   - fixed-width values, var-width offsets, view structs and union type ids
 *     are sub-arrays starting at the slice: index them by `i`
 *   - Bool values and every validity bitmap keep the whole buffer: index
 *     them by `data.offset + i`
 *   - children of Struct, sparse Union and FixedSizeList are sliced with
 *     their parent (FixedSizeList by `listSize` per element); children of
 *     List, LargeList, Map and dense Union are not: the offsets index them
 */
import { Field, Type, type Data, type Dictionary, type Union } from 'apache-arrow';
import { validityBits } from '../table/chunk-validity.js';
import type { StoredInteger } from './temporal-text.js';

const TWO_32 = 4294967296;
/** Byte size of one BinaryView/Utf8View view struct; at most 12 bytes live inline. */
const VIEW_SIZE = 16;
const VIEW_INLINE = 12;

/** Whether element `i` is valid, or undefined when every element is. */
export function validity(data: Data): ((i: number) => boolean) | undefined {
  if (data.typeId === Type.Null) return () => false;
  const bitmap = validityBits(data);
  if (bitmap === null) return undefined;
  const offset = data.offset;
  return (i) => {
    const bit = offset + i;
    return (bitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
  };
}

/**
 * 64-bit integers as numbers, read through an Int32 view of the same bytes
 * (reading a BigInt64Array allocates a bigint per element). Exact below 2^53.
 */
export function int64Numbers(values: BigInt64Array | BigUint64Array): (i: number) => number {
  const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  if (values instanceof BigUint64Array) return (i) => (words[2 * i + 1] >>> 0) * TWO_32 + (words[2 * i] >>> 0);
  return (i) => words[2 * i + 1] * TWO_32 + (words[2 * i] >>> 0);
}

/** 64-bit integers exactly: a number when safe, the bigint beyond. */
export function int64Values(values: BigInt64Array | BigUint64Array): (i: number) => StoredInteger {
  const read = int64Numbers(values);
  return (i) => {
    const v = read(i);
    return Number.isSafeInteger(v) ? v : values[i];
  };
}

/** Offsets of List, LargeList, Map and var-width types, as numbers. */
export function offsetReader(data: Data): (i: number) => number {
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  if (offsets instanceof BigInt64Array) return int64Numbers(offsets);
  return (i) => offsets[i];
}

/** The bytes of element `i` of a Utf8, LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView or FixedSizeBinary chunk. */
export function bytesReader(data: Data): (i: number) => Uint8Array {
  const values = data.values as Uint8Array;
  switch (data.typeId) {
    case Type.FixedSizeBinary: {
      const width = data.stride;
      return (i) => values.subarray(i * width, (i + 1) * width);
    }
    case Type.Utf8View:
    case Type.BinaryView: {
      const buffers = (data.variadicBuffers ?? []) as readonly Uint8Array[];
      return (i) => {
        const at = i * VIEW_SIZE;
        const size = int32At(values, at);
        if (size <= VIEW_INLINE) return values.subarray(at + 4, at + 4 + Math.max(0, size));
        const offset = int32At(values, at + 12);
        return buffers[int32At(values, at + 8)].subarray(offset, offset + size);
      };
    }
    default: {
      const offset = offsetReader(data);
      return (i) => values.subarray(offset(i), offset(i + 1));
    }
  }
}

function int32At(bytes: Uint8Array, at: number): number {
  return bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
}

/** For a union chunk: which child holds element `i`, and at which index of that child. */
export function unionLocator(data: Data): { child(i: number): number; index(i: number): number } {
  const type = data.type as Union;
  const typeIds = data.typeIds as Int8Array;
  const childOf = type.typeIdToChildIndex as Record<number, number>;
  const offsets = data.valueOffsets as Int32Array | undefined;
  return {
    child: (i) => childOf[typeIds[i]],
    index: offsets !== undefined && offsets.length > 0 ? (i) => offsets[i] : (i) => i,
  };
}

/** Time32 values are Int32, Time64 values int64: both as stored integers. */
export function storedIntegers(data: Data): (i: number) => StoredInteger {
  const values = data.values as Int32Array | BigInt64Array;
  if (values instanceof BigInt64Array) return int64Values(values);
  return (i) => values[i];
}

/** The int64 nanoseconds of MonthDayNano element `i` (words 2 and 3 of its four Int32 words). */
export function monthDayNanoNanos(values: Int32Array): (i: number) => StoredInteger {
  return (i) => {
    const low = values[4 * i + 2] >>> 0;
    const high = values[4 * i + 3];
    const v = high * TWO_32 + low;
    return Number.isSafeInteger(v) ? v : (BigInt(high) << 32n) | BigInt(low);
  };
}

/**
 * The field of child `c`, or for `c = -1` of a dictionary's values (which
 * keep the column's name and metadata, so a JSON-text marker carries over).
 */
export function childField(field: Field, data: Data, c: number): Field {
  if (c === -1) return new Field(field.name, (data.type as Dictionary).dictionary, true, field.metadata);
  return data.type.children[c];
}

/** Where element `i` of a dictionary-encoded chunk finds its value: a dictionary chunk and an index in it. */
export function dictionaryLocator(data: Data): { chunks: Data[]; chunkOf(i: number): number; indexIn(c: number, i: number): number } {
  const chunks = (data.dictionary?.data ?? []) as Data[];
  const starts: number[] = [];
  let at = 0;
  for (const chunk of chunks) {
    starts.push(at);
    at += chunk.length;
  }
  const values = data.values as ArrayLike<number> | BigInt64Array | BigUint64Array;
  const index = values instanceof BigInt64Array || values instanceof BigUint64Array ? int64Numbers(values) : (i: number) => (values as ArrayLike<number>)[i];
  return {
    chunks,
    chunkOf(i) {
      const k = index(i);
      let c = starts.length - 1;
      while (c > 0 && starts[c] > k) c--;
      return c;
    },
    indexIn: (c, i) => index(i) - starts[c],
  };
}
