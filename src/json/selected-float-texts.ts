/**
 * The texts of a small selection's float cells, formatted by the float-text
 * addon a whole selection at a time before its rows are written.
 *
 * V8's `String(v)` is quick only for a value it finds in its number-string
 * cache. A fetch's rows are values it has not formatted lately, and each one
 * costs a FastDtoa, a new heap string and a cache entry stored behind a
 * write barrier: 450-600 ns a value for 50 rows picked at random from 1M,
 * against about 100 ns for the gather and the addon together, and 40 ns
 * against 60 ns when the very same rows come back (bench/analysis.md, "Small
 * requests at 60%?"). The gather also loads the cells in one tight loop, as
 * preload-cells.ts does for the other columns.
 *
 * Every float column of the selection goes into one call; without the addon
 * (not built, or `S2SP_NATIVE=off`) there are no texts and each cell is
 * formatted by its column's writer, the same bytes.
 */
import { Precision, Type, type Float } from 'apache-arrow';
import { flatColumnsOf, isValidAt, type FlatColumn } from '../table/flat-columns.js';
import type { RowLocations, SelectionPlan } from '../table/selection-plan.js';
import type { ByteWriter } from './byte-writer.js';
import { NULL_BYTES } from './bytes.js';
import { float16ToNumber, floatTextAddonLoaded, formatFloatsInto, MAX_TEXT_BYTES, nonFiniteName } from './float-text.js';

/** The float columns of a plan: where each sits among the response columns, and its values in every stored batch. */
interface FloatSources {
  /** Each response column's place among the float columns, or -1 for a column of another type. */
  readonly slotOf: Int32Array;
  readonly columns: readonly {
    readonly flat: FlatColumn;
    /** Float16 values are their bits. */
    readonly half: boolean;
    readonly values: readonly ArrayLike<number>[];
  }[];
}

/** The texts of one selection's float cells, valid until the next call. */
export interface SelectedFloatTexts {
  readonly sources: FloatSources;
  /** Rows in the selection: cell k of float column s is at `s * rows + k`. */
  readonly rows: number;
  readonly values: Float64Array;
  readonly text: Uint8Array;
  /** Cell j's text is `text[ends[j - 1] .. ends[j])` (from 0 for j = 0); empty for a non-finite value. */
  readonly ends: Uint32Array;
}

const MEMO = 'float-sources';

interface Scratch {
  readonly values: Float64Array;
  readonly text: Uint8Array;
  readonly ends: Uint32Array;
}

/** Scratch shared by every call (the selection writer never yields between formatting and writing). */
let scratch = scratchOf(256);
/**
 * Larger selections (an embedder may raise the inline cell limit) get scratch of their own, so
 * one big answer does not pin 25 bytes a cell for the life of the process.
 */
const SCRATCH_KEEP_CELLS = 64 * 1024;

function scratchOf(cells: number): Scratch {
  return { values: new Float64Array(cells), text: new Uint8Array(cells * MAX_TEXT_BYTES), ends: new Uint32Array(cells) };
}

/**
 * Formats the float cells of rows `at` (from locateRows, `n` of them) of
 * `plan`; undefined when the plan has no float column or the addon is not
 * loaded.
 */
export function selectedFloatTexts(plan: SelectionPlan, at: RowLocations, n: number): SelectedFloatTexts | undefined {
  if (!floatTextAddonLoaded()) return undefined;
  const sources = floatSourcesOf(plan);
  const cells = sources.columns.length * n;
  if (cells === 0) return undefined;
  let room = scratch;
  if (room.values.length < cells) {
    room = scratchOf(cells);
    if (cells <= SCRATCH_KEEP_CELLS) scratch = room;
  }
  const { values, text, ends } = room;
  const { batchAt, rowAt } = at;
  let j = 0;
  for (const column of sources.columns) {
    const chunks = column.values;
    if (column.half) for (let k = 0; k < n; k++) values[j++] = float16ToNumber(chunks[batchAt[k]][rowAt[k]]);
    else for (let k = 0; k < n; k++) values[j++] = chunks[batchAt[k]][rowAt[k]];
  }
  formatFloatsInto(values.subarray(0, cells), text, ends);
  return { sources, rows: n, values, text, ends };
}

/** Writes cell `k` (row `i` of stored batch `b`) of response column `c`, a float column of `texts`. */
export function writeSelectedFloat(w: ByteWriter, texts: SelectedFloatTexts, c: number, k: number, b: number, i: number): void {
  const slot = texts.sources.slotOf[c];
  if (!isValidAt(texts.sources.columns[slot].flat, b, i)) return w.bytes(NULL_BYTES);
  const j = slot * texts.rows + k;
  const start = j === 0 ? 0 : texts.ends[j - 1];
  const end = texts.ends[j];
  if (start === end) w.quotedAscii(nonFiniteName(texts.values[j])!);
  else w.bytes(texts.text, start, end);
}

/** True when response column `c` is written from `texts`. */
export function hasSelectedFloat(texts: SelectedFloatTexts | undefined, c: number): texts is SelectedFloatTexts {
  return texts !== undefined && texts.sources.slotOf[c] >= 0;
}

function floatSourcesOf(plan: SelectionPlan): FloatSources {
  const known = plan.memo.get(MEMO) as FloatSources | undefined;
  if (known !== undefined) return known;
  const flat = flatColumnsOf(plan);
  const slotOf = new Int32Array(plan.fields.length).fill(-1);
  const columns: FloatSources['columns'][number][] = [];
  plan.fields.forEach((field, c) => {
    const column = flat[c];
    if (c === 0 || column === null || field.type.typeId !== Type.Float) return;
    slotOf[c] = columns.length;
    const values = plan.body.batches.map((_batch, b) => plan.columnsOf(b)[c].values as ArrayLike<number>);
    columns.push({ flat: column, half: (field.type as Float).precision === Precision.HALF, values });
  });
  const made = { slotOf, columns };
  plan.memo.set(MEMO, made);
  return made;
}
