/**
 * Gather: copies the rows at scattered positions into one new batch. arrow-js
 * has no `take`, and slicing each id separately costs a batch per row; a
 * gather costs time in proportion to the ids, never to the table.
 *
 * Supported column types are those with a flat layout: fixed-width values
 * (ints, floats, dates, timestamps, durations, decimals), Bool, Utf8, Binary
 * and Null. `canTake` says whether a table qualifies; otherwise callers fall
 * back to slices.
 */
import { RecordBatch, Struct, Type, makeData, type Binary, type Bool, type Data, type Field, type Int, type Null, type Table } from 'apache-arrow';
import type { DataProps } from 'apache-arrow/data';
import { chunkValidity, isValidAt } from './chunk-validity.js';

const FIXED_WIDTH = new Set<Type>([
  Type.Int,
  Type.Float,
  Type.Date,
  Type.Time,
  Type.Timestamp,
  Type.Duration,
  Type.Interval,
  Type.Decimal,
  Type.FixedSizeBinary,
]);

/** True when every column of `table` has a layout {@link takeRows} can gather. */
export function canTake(table: Table): boolean {
  return table.schema.fields.every(canTakeField);
}

/** True when `field` has a flat layout (fixed-width values, Bool, Utf8, Binary or Null). */
export function canTakeField(field: Field): boolean {
  const id = field.type.typeId as Type;
  return FIXED_WIDTH.has(id) || id === Type.Bool || id === Type.Utf8 || id === Type.Binary || id === Type.Null;
}

/** Where row `id` lives: its batch and its index in that batch. */
interface Locator {
  batchOf(id: number): number;
  starts: number[];
}

function locator(table: Table): Locator {
  const starts: number[] = [];
  let at = 0;
  for (const b of table.batches) {
    starts.push(at);
    at += b.numRows;
  }
  return {
    starts,
    batchOf(id) {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= id) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    },
  };
}

/**
 * Copies rows `ids` (positions, any order) of `table` into one batch, in the
 * order given. The table must pass {@link canTake}.
 */
export function takeRows(table: Table, ids: Int32Array): RecordBatch {
  const where = locator(table);
  const batchIndex = new Int32Array(ids.length);
  const rowIndex = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const b = where.batchOf(ids[i]);
    batchIndex[i] = b;
    rowIndex[i] = ids[i] - where.starts[b];
  }
  const children = table.schema.fields.map((_f, c) => {
    const chunks = table.batches.map((batch) => batch.data.children[c]);
    return takeColumn(chunks, batchIndex, rowIndex);
  });
  const data = makeData({ type: new Struct(table.schema.fields), length: ids.length, nullCount: 0, children });
  return new RecordBatch(table.schema, data);
}

function takeColumn(chunks: Data[], batchIndex: Int32Array, rowIndex: Int32Array): Data {
  const n = batchIndex.length;
  const type = chunks[0].type;
  const typeId = chunks[0].typeId as Type;
  if (typeId === Type.Null) return makeData({ type, length: n } as DataProps<Null>);
  const { bitmap, nullCount } = takeValidity(chunks, batchIndex, rowIndex);
  const common = { type, length: n, nullCount, nullBitmap: bitmap };
  if (typeId === Type.Bool) {
    const bits = new Uint8Array((n + 7) >> 3);
    for (let i = 0; i < n; i++) {
      const d = chunks[batchIndex[i]];
      const bit = d.offset + rowIndex[i];
      if ((d.values as Uint8Array)[bit >> 3] & (1 << (bit & 7))) bits[i >> 3] |= 1 << (i & 7);
    }
    return makeData({ ...common, data: bits } as DataProps<Bool>);
  }
  if (typeId === Type.Utf8 || typeId === Type.Binary) return takeVariable(chunks, batchIndex, rowIndex, common);
  // Fixed width: `values` is already sliced to the chunk (arrow-js _sliceBuffers), `stride` elements per row.
  const stride = chunks[0].stride;
  const Ctor = (chunks[0].values as unknown as { constructor: new (n: number) => ArrayLike<unknown> & { [i: number]: unknown } }).constructor;
  const out = new Ctor(n * stride);
  for (let i = 0; i < n; i++) {
    const src = chunks[batchIndex[i]].values as unknown as { [i: number]: unknown };
    const from = rowIndex[i] * stride;
    for (let k = 0; k < stride; k++) out[i * stride + k] = src[from + k];
  }
  // Every fixed-width type's props have Int's shape: a type and one values buffer.
  return makeData({ ...common, data: out } as DataProps<Int>);
}

function takeVariable(chunks: Data[], batchIndex: Int32Array, rowIndex: Int32Array, common: Record<string, unknown>): Data {
  const n = batchIndex.length;
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const o = chunks[batchIndex[i]].valueOffsets as Int32Array;
    offsets[i + 1] = offsets[i] + (o[rowIndex[i] + 1] - o[rowIndex[i]]);
  }
  const bytes = new Uint8Array(offsets[n]);
  for (let i = 0; i < n; i++) {
    const d = chunks[batchIndex[i]];
    const o = d.valueOffsets as Int32Array;
    const r = rowIndex[i];
    bytes.set((d.values as Uint8Array).subarray(o[r], o[r + 1]), offsets[i]);
  }
  // Utf8 and Binary share one layout: offsets, then bytes.
  return makeData({ ...common, valueOffsets: offsets, data: bytes } as DataProps<Binary>);
}

function takeValidity(chunks: Data[], batchIndex: Int32Array, rowIndex: Int32Array): { bitmap?: Uint8Array; nullCount: number } {
  if (chunks.every((d) => d.nullCount === 0)) return { nullCount: 0 };
  const n = batchIndex.length;
  const bitmap = new Uint8Array((n + 7) >> 3);
  const valid = chunkValidity(chunks);
  let nullCount = 0;
  for (let i = 0; i < n; i++) {
    if (isValidAt(valid, batchIndex[i], rowIndex[i])) bitmap[i >> 3] |= 1 << (i & 7);
    else nullCount++;
  }
  return { bitmap, nullCount };
}
