/**
 * The JSON texts of a column's cells (cell-texts.ts), across the chunks the
 * column is stored in: cell k is element `at.rowAt[k]` of chunk
 * `at.batchAt[k]` (a selection's rows, scattered over a body's stored
 * batches), or element k of the first chunk when `at` is null (consecutive
 * rows of one batch).
 *
 * The common types have loops of their own, which read a cell's chunk in
 * place: integers, floats and plain strings. Floats are gathered from every
 * chunk first and formatted in one call of the float formatter: a call of
 * the addon costs about a microsecond in a busy server, so one per stored
 * batch was half of a 50-row selection's time. Any other type is written
 * element by element by its codec (column-codec.ts); every type writes the
 * bytes its codec's `write` writes (test/json/column-texts.test.ts).
 */
import { Precision, Type, type Data, type Field, type Float, type Int } from 'apache-arrow';
import { chunkValidity, isValidAt, type ChunkValidity } from '../table/chunk-validity.js';
import { MAX_INTEGER_BYTES, putInteger } from './byte-writer.js';
import { NULL_BYTES } from './bytes.js';
import type { CellTexts } from './cell-texts.js';
import { columnCodec } from './column-codec.js';
import { float16ToNumber, formatFloatsAt, MAX_TEXT_BYTES } from './float-text.js';
import type { JsonWriter } from './json-codec.js';
import { isJsonField } from './json-text-field.js';
import { writeFloat } from './numbers.js';
import { writeJsonString } from './text.js';

/** Where each of a selection's rows lives: `batchAt[k]`, the stored batch of the k-th row, and `rowAt[k]`, its index there. */
export interface RowLocations {
  readonly batchAt: Int32Array;
  readonly rowAt: Int32Array;
}

/** Appends the texts of cells `from..to` (see the module comment) to `out`, one cell each; `out` has room for their ends. */
export type ColumnTexts = (at: RowLocations | null, from: number, to: number, out: CellTexts) => void;

/** The texts writer of `field`'s column stored in `chunks` (one per stored batch). */
export function columnTexts(field: Field, chunks: readonly Data[]): ColumnTexts {
  if (chunks.length === 0) return byElement(field, chunks); // no cells to write
  const typeId = chunks[0].typeId;
  const valid = chunkValidity(chunks);
  if (typeId === Type.Int && (chunks[0].type as Int).bitWidth <= 32) return integerColumnTexts(valuesOf(chunks), valid);
  if (typeId === Type.Float) return floatTexts(valuesOf(chunks), (chunks[0].type as Float).precision === Precision.HALF, valid);
  if (typeId === Type.Utf8 && !isJsonField(field)) {
    return stringTexts(
      chunks.map((d) => d.valueOffsets as Int32Array),
      chunks.map((d) => d.values as Uint8Array),
      valid,
    );
  }
  return byElement(field, chunks);
}

/**
 * The texts of integers `values[from..to)` (|v| < 2^53), a NaN written as
 * `null`: a selection's `_row_id`s, which are its ids (with-row-ids.ts), and
 * the gathered cells of an integer column.
 */
export function integerTexts(values: ArrayLike<number>, from: number, to: number, out: CellTexts): void {
  const w = out.writer;
  w.ensure((to - from) * MAX_INTEGER_BYTES); // `null` is shorter
  const { buf } = w;
  const { ends } = out;
  let pos = w.pos;
  let count = out.count;
  for (let k = from; k < to; k++) {
    const v = values[k];
    if (Number.isNaN(v)) {
      buf.set(NULL_BYTES, pos);
      pos += NULL_BYTES.length;
    } else pos = putInteger(buf, pos, v);
    ends[count++] = pos;
  }
  w.pos = pos;
  out.count = count;
}

function valuesOf(chunks: readonly Data[]): ArrayLike<number>[] {
  return chunks.map((d) => d.values as ArrayLike<number>);
}

function integerColumnTexts(values: readonly ArrayLike<number>[], valid: ChunkValidity): ColumnTexts {
  return (at, from, to, out) => {
    // Gathered first, in a loop of loads only, so the misses of scattered rows overlap; NaN marks a null.
    const n = to - from;
    const run = gathered(n);
    for (let k = from; k < to; k++) {
      const b = at === null ? 0 : at.batchAt[k];
      const i = at === null ? k : at.rowAt[k];
      run[k - from] = isValidAt(valid, b, i) ? values[b][i] : NaN;
    }
    integerTexts(run, 0, n, out);
  };
}

/**
 * Gathered cell values (floats, integers, string bounds), shared by every
 * call: texts never yield between gathering and writing. Gathering comes
 * first, in a loop of loads only, so the cache misses of scattered rows
 * overlap instead of each waiting for the one before (bench/analysis.md,
 * "Small requests at 60%?").
 */
let gatherScratch = new Float64Array(256);
/** A larger run gets an array of its own, so one big answer does not pin it. */
const GATHER_KEEP = 64 * 1024;

/** Room for `n` gathered values (the array may be longer). */
function gathered(n: number): Float64Array {
  if (n <= gatherScratch.length) return gatherScratch;
  const run = new Float64Array(n);
  if (n <= GATHER_KEEP) gatherScratch = run;
  return run;
}

/**
 * Floats: all at once from the float-text addon where it is loaded, in
 * JavaScript one by one where it is not, and for cells holding a null or a
 * non-finite value (the addon leaves their texts to us).
 */
function floatTexts(values: readonly ArrayLike<number>[], half: boolean, valid: ChunkValidity): ColumnTexts {
  return (at, from, to, out) => {
    const n = to - from;
    if (n === 0) return;
    // Consecutive Float64 values without nulls are formatted where they are; any others are gathered.
    let run: Float64Array;
    let start = 0;
    let nulls = false;
    const first = values[0];
    if (at === null && first instanceof Float64Array && valid.validity[0] === null) {
      run = first;
      start = from;
    } else {
      run = gathered(n);
      for (let k = from; k < to; k++) {
        const b = at === null ? 0 : at.batchAt[k];
        const i = at === null ? k : at.rowAt[k];
        nulls ||= !isValidAt(valid, b, i);
        run[k - from] = half ? float16ToNumber(values[b][i]) : values[b][i];
      }
    }
    const w = out.writer;
    if (!nulls) {
      w.ensure(n * MAX_TEXT_BYTES);
      if (formatFloatsAt(run, start, start + n, w.buf, w.pos, out.ends, out.count) === 0) {
        out.count += n;
        w.pos = out.ends[out.count - 1];
        return;
      }
    }
    for (let k = from; k < to; k++) {
      if (nulls && !isValidAt(valid, at === null ? 0 : at.batchAt[k], at === null ? k : at.rowAt[k])) w.bytes(NULL_BYTES);
      else writeFloat(w, run[start + k - from]);
      out.endCell();
    }
  };
}

/** Plain strings (not JSON-text columns): their UTF-8 bytes, escaped where JSON needs it. */
function stringTexts(offsets: readonly Int32Array[], bytes: readonly Uint8Array[], valid: ChunkValidity): ColumnTexts {
  return (at, from, to, out) => {
    // Each string's bounds gathered first, and its first byte loaded; a null has no bounds (-1).
    const n = to - from;
    const run = gathered(2 * n);
    let touched = 0;
    for (let k = from; k < to; k++) {
      const b = at === null ? 0 : at.batchAt[k];
      const i = at === null ? k : at.rowAt[k];
      const j = 2 * (k - from);
      if (!isValidAt(valid, b, i)) run[j] = -1;
      else {
        const start = offsets[b][i];
        run[j] = start;
        run[j + 1] = offsets[b][i + 1];
        touched += bytes[b][start] ?? 0;
      }
    }
    loaded = (loaded + touched) | 0;
    const w = out.writer;
    for (let k = from; k < to; k++) {
      const j = 2 * (k - from);
      if (run[j] < 0) w.bytes(NULL_BYTES);
      else writeJsonString(w, bytes[at === null ? 0 : at.batchAt[k]], run[j], run[j + 1]);
      out.endCell();
    }
  };
}

/** Keeps the first bytes stringTexts loads where no compiler can prove them unused. */
let loaded = 0;

/** Any other type: its codec's writer, element by element (made per chunk when first needed). */
function byElement(field: Field, chunks: readonly Data[]): ColumnTexts {
  const writers: (JsonWriter | undefined)[] = [];
  return (at, from, to, out) => {
    const w = out.writer;
    for (let k = from; k < to; k++) {
      const b = at === null ? 0 : at.batchAt[k];
      const write = (writers[b] ??= columnCodec(field, chunks[b]).write);
      write(w, at === null ? k : at.rowAt[k]);
      out.endCell();
    }
  };
}
