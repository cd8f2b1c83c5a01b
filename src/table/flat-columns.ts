/**
 * Where a flat column's cells sit in a body's stored batches, worked out
 * once per selection plan, for the Arrow writer that copies a few scattered
 * rows (selection-stream.ts).
 *
 * Flat layouts are the ones take-rows gathers (canTakeField): fixed-width
 * values, Bool, Utf8, Binary, Null. Any other column has no flat layout.
 */
import { Type, type Data } from 'apache-arrow';
import { chunkValidity, type ChunkValidity } from './chunk-validity.js';
import type { SelectionPlan } from './selection-plan.js';
import { canTakeField } from './take-rows.js';

/** How a flat column's cells are stored. */
export const FlatKind = {
  Null: 0,
  Bool: 1,
  /** Utf8 or Binary: int32 offsets, then bytes. */
  Binary: 2,
  /** `width` bytes per row. */
  Fixed: 3,
} as const;

export interface FlatColumn extends ChunkValidity {
  readonly kind: (typeof FlatKind)[keyof typeof FlatKind];
  /** Bytes per row of a Fixed column; 0 for the others. */
  readonly width: number;
  /** Fixed: each chunk's values as bytes; Bool, Binary: each chunk's values; Null: none. */
  readonly bytes: readonly Uint8Array[];
  /** Binary: each chunk's value offsets; the others: none. */
  readonly valueOffsets: readonly Int32Array[];
  /**
   * Fixed, when rows are whole 32-bit words at aligned addresses: each chunk's values as words.
   * Copying a row word by word is a quarter of the loads and stores of byte by byte (the byte
   * loop was most of the Arrow selection's time in the small-requests profile). Words, not
   * float64: a NaN read as a double may come back with other payload bits.
   */
  readonly words: readonly Uint32Array[] | null;
}

const MEMO = 'flat-columns';

/** Every response column of `plan`, `_row_id` first, as a flat column; null for a column of another layout. */
export function flatColumnsOf(plan: SelectionPlan): readonly (FlatColumn | null)[] {
  const known = plan.memo.get(MEMO) as readonly (FlatColumn | null)[] | undefined;
  if (known !== undefined) return known;
  const made = plan.fields.map((field, c) => (canTakeField(field) ? flatColumn(field.type.typeId as Type, plan, c) : null));
  plan.memo.set(MEMO, made);
  return made;
}

function flatColumn(typeId: Type, plan: SelectionPlan, c: number): FlatColumn {
  const chunks = plan.chunksOf(c);
  const common = { ...chunkValidity(chunks), valueOffsets: [], words: null };
  if (typeId === Type.Null) return { kind: FlatKind.Null, width: 0, bytes: [], ...common };
  if (typeId === Type.Bool) return { kind: FlatKind.Bool, width: 0, bytes: chunks.map((d) => d.values as Uint8Array), ...common };
  if (typeId === Type.Utf8 || typeId === Type.Binary) {
    const valueOffsets = chunks.map((d) => d.valueOffsets as Int32Array);
    return { kind: FlatKind.Binary, width: 0, bytes: chunks.map((d) => d.values as Uint8Array), ...common, valueOffsets };
  }
  // Fixed width: `stride` elements of the values array per row, whatever its element type
  // (`values` is already cut to the chunk's first row).
  const bytes = chunks.map((d) => {
    const values = d.values as ArrayBufferView;
    return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  });
  const width = (chunks[0]?.stride ?? 1) * elementBytes(chunks[0]);
  const aligned = width % 4 === 0 && bytes.every((b) => b.byteOffset % 4 === 0 && b.byteLength % 4 === 0);
  const words = aligned ? bytes.map((b) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4)) : null;
  return { kind: FlatKind.Fixed, width, bytes, ...common, words };
}

function elementBytes(data: Data | undefined): number {
  return data === undefined ? 1 : (data.values as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
}
