/**
 * The whole Arrow IPC stream of a small selection (schema, one record batch,
 * end of stream), its values copied straight from the body's column buffers
 * into one Buffer. The chunked path gathers the same rows into arrow-js Data
 * (take-rows.ts), assembles them and writes the message; for a few dozen
 * rows that object work cost several times the copying. The bytes are the
 * ones that path writes for a gathered batch, buffer for buffer and padding
 * for padding (test/data/encoder-core.test.ts holds them to it).
 *
 * Flat layouts only, as take-rows gathers them: fixed-width values, Bool,
 * Utf8, Binary, Null. `selectionIpc` answers undefined for anything else.
 */
import { Schema } from 'apache-arrow';
import { BufferRegion, FieldNode } from 'apache-arrow/ipc/metadata/message';
import { END_OF_STREAM } from '../../protocol/arrow-framing.js';
import { isValidAt } from '../../table/chunk-validity.js';
import { FlatKind, flatColumnsOf, type FlatColumn } from '../../table/flat-columns.js';
import { locateRows, type SelectionPlan } from '../../table/selection-plan.js';
import { padTo8, recordBatchMetadata, schemaMessage } from './message.js';

/** What every answer of a selection plan shares: its schema message and its flat columns. */
interface SelectionLayout {
  readonly schema: Uint8Array;
  readonly columns: readonly FlatColumn[];
}

const LAYOUT_MEMO = 'ipc';

function selectionLayoutOf(plan: SelectionPlan): SelectionLayout | null {
  const known = plan.memo.get(LAYOUT_MEMO) as SelectionLayout | null | undefined;
  if (known !== undefined) return known;
  const columns = flatColumnsOf(plan);
  let made: SelectionLayout | null = null;
  if (columns.every((column) => column !== null)) {
    // The schema a projection has (select.ts projectColumns): the chosen fields, the body's metadata.
    const schema = schemaMessage(new Schema([...plan.fields], plan.body.schema.metadata));
    made = { schema, columns: columns as readonly FlatColumn[] };
  }
  plan.memo.set(LAYOUT_MEMO, made);
  return made;
}

/** Bytes of a validity or Bool bitmap of `n` rows as the assembler writes it (truncateBitmap pads it to 8). */
function bitmapBytes(n: number): number {
  return padTo8((n + 7) >> 3);
}

/**
 * The Arrow IPC stream of rows `ids` (ascending, unique positions in the
 * body) of `plan`'s projection, or undefined when a column's layout is not
 * flat (the caller then takes the chunked path).
 */
export function selectionIpc(plan: SelectionPlan, ids: ArrayLike<number>): Buffer | undefined {
  const ipc = selectionLayoutOf(plan);
  if (ipc === null || plan.body.batches.length === 0) return undefined;
  const n = ids.length;
  const { batchAt, rowAt } = locateRows(plan, ids);
  const nullCounts = nullCountsFor(ipc.columns.length);
  const width = ipc.columns.length;
  // Sizes first (the metadata needs every region before a body byte is written).
  const nodes: FieldNode[] = [];
  const regions: BufferRegion[] = [];
  let bodyLength = 0;
  const region = (bytes: number) => {
    regions.push(new BufferRegion(bodyLength, padTo8(bytes)));
    bodyLength += padTo8(bytes);
  };
  for (let c = 0; c < width; c++) {
    const column = ipc.columns[c];
    const { kind, width: rowBytes, valueOffsets } = column;
    if (kind === FlatKind.Null) {
      nodes.push(new FieldNode(n, n));
      continue;
    }
    let nulls = 0;
    for (let k = 0; k < n; k++) if (!isValidAt(column, batchAt[k], rowAt[k])) nulls++;
    nullCounts[c] = nulls;
    nodes.push(new FieldNode(n, nulls));
    region(nulls > 0 ? bitmapBytes(n) : 0);
    if (kind === FlatKind.Bool) region(nulls >= n ? (n + 7) >> 3 : bitmapBytes(n));
    else if (kind === FlatKind.Fixed) region(n * rowBytes);
    else {
      let bytes = 0;
      for (let k = 0; k < n; k++) {
        const offsets = valueOffsets[batchAt[k]];
        bytes += offsets[rowAt[k] + 1] - offsets[rowAt[k]];
      }
      region(4 * (n + 1));
      region(bytes);
    }
  }
  const metadata = recordBatchMetadata(n, nodes, regions, bodyLength);
  const total = ipc.schema.byteLength + metadata.byteLength + bodyLength + END_OF_STREAM.byteLength;
  // Zeroed: padding and unset bits must be zero, as the assembler's are. allocUnsafe takes a small
  // answer from Node's shared pool (8-byte aligned); Buffer.alloc made a new ArrayBuffer per request,
  // ~2 µs of the ~5 µs this function cost in the small-requests profile.
  const out = Buffer.allocUnsafe(total).fill(0);
  out.set(ipc.schema, 0);
  out.set(metadata, ipc.schema.byteLength);
  const bodyStart = ipc.schema.byteLength + metadata.byteLength;
  let r = 0; // region index
  for (let c = 0; c < width; c++) {
    const column = ipc.columns[c];
    const { kind, width: rowBytes, valueOffsets, bytes: sources, offsets: chunkOffsets } = column;
    if (kind === FlatKind.Null) continue;
    const validityAt = bodyStart + Number(regions[r++].offset);
    if (nullCounts[c] > 0) {
      for (let k = 0; k < n; k++) if (isValidAt(column, batchAt[k], rowAt[k])) out[validityAt + (k >> 3)] |= 1 << (k & 7);
    }
    const at = bodyStart + Number(regions[r++].offset);
    if (c === 0) {
      // `_row_id` is the row's position (with-row-ids.ts): written from the ids, not copied from the body.
      for (let k = 0; k < n; k++) out.writeInt32LE(ids[k], at + 4 * k);
    } else if (kind === FlatKind.Bool) {
      if (nullCounts[c] >= n) continue; // all null: the assembler writes zeros
      for (let k = 0; k < n; k++) {
        const bit = chunkOffsets[batchAt[k]] + rowAt[k];
        if (sources[batchAt[k]][bit >> 3] & (1 << (bit & 7))) out[at + (k >> 3)] |= 1 << (k & 7);
      }
    } else if (kind === FlatKind.Fixed && column.words !== null && (out.byteOffset + at) % 4 === 0) {
      const rowWords = rowBytes / 4;
      const target = new Uint32Array(out.buffer, out.byteOffset + at, n * rowWords);
      const sources = column.words;
      for (let k = 0; k < n; k++) {
        const src = sources[batchAt[k]];
        const from = rowAt[k] * rowWords;
        const to = k * rowWords;
        for (let j = 0; j < rowWords; j++) target[to + j] = src[from + j];
      }
    } else if (kind === FlatKind.Fixed) {
      for (let k = 0; k < n; k++) {
        const src = sources[batchAt[k]];
        const from = rowAt[k] * rowBytes;
        const to = at + k * rowBytes;
        for (let j = 0; j < rowBytes; j++) out[to + j] = src[from + j];
      }
    } else {
      const bytesAt = bodyStart + Number(regions[r++].offset);
      let offset = 0;
      out.writeInt32LE(0, at);
      for (let k = 0; k < n; k++) {
        const offsets = valueOffsets[batchAt[k]];
        const src = sources[batchAt[k]];
        const start = offsets[rowAt[k]];
        const end = offsets[rowAt[k] + 1];
        // A loop for short values: a subarray per value cost more than copying a short string.
        if (end - start > 64) out.set(src.subarray(start, end), bytesAt + offset);
        else for (let j = start, to = bytesAt + offset; j < end; j++, to++) out[to] = src[j];
        offset += end - start;
        out.writeInt32LE(offset, at + 4 * (k + 1));
      }
    }
  }
  out.set(END_OF_STREAM, total - END_OF_STREAM.byteLength);
  return out;
}

/** Per-column null counts, shared by every call (one runs at a time: the function never yields). */
let nullCountScratch = new Int32Array(16);

function nullCountsFor(columns: number): Int32Array {
  if (nullCountScratch.length < columns) nullCountScratch = new Int32Array(columns);
  return nullCountScratch;
}
