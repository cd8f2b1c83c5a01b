/**
 * The whole JSON document (SPEC 3.2) of a small selection, written straight
 * from the body's column buffers into one Buffer: no gathered batch, no
 * Table, no stream. Each column's cells are written first, by the column's
 * codec (cell-texts.ts), then the rows (json-rows.ts), as the chunked path
 * writes them; the bytes are the same (test/data/encoder-core.test.ts).
 */
import { JSON_BODY_OPEN, jsonBodyCloseParts } from '../protocol/json-body-bytes.js';
import { locateRows, type SelectionPlan } from '../table/selection-plan.js';
import { ByteWriter } from './byte-writer.js';
import { CellTexts } from './cell-texts.js';
import { integerTexts } from './column-texts.js';
import { writeRows } from './json-rows.js';
const CLOSE_MEMO = 'json:close';

/**
 * Answers are written straight into a shared slab, each after the one
 * before, and returned as views of it: no copy at the end. (A scratch writer
 * copied each answer out at its final size; that copy and its second buffer
 * were about a tenth of a 50-row answer's time, bench/analysis.md.) A slab
 * stays alive while any answer in it does, as Node's own Buffer pool does.
 */
const SLAB_BYTES = 64 * 1024;
/** A new slab is taken when less than this is left, so a typical answer never grows one. */
const SLAB_MIN_ROOM = 8 * 1024;
const slab = new ByteWriter(SLAB_BYTES);

/** Cell texts of the response columns, shared by every call (a selection never yields while it writes). */
const scratch: CellTexts[] = [];
/** The first `width` of them, per width. */
const scratchOfWidth: CellTexts[][] = [];
/** Texts kept between calls at most: one larger answer's are let go. */
const SCRATCH_KEEP_CELLS = 64 * 1024;
const SCRATCH_KEEP_BYTES = 1024 * 1024;

/**
 * The JSON document of rows `ids` (ascending, unique positions in the body)
 * of `plan`'s projection.
 */
export function selectionJson(plan: SelectionPlan, ids: ArrayLike<number>): Buffer {
  const w = slab;
  // A writer grown past the slab size by a large answer is not kept for the next ones either.
  if (w.buf.byteLength - w.pos < SLAB_MIN_ROOM || w.buf.byteLength > SLAB_BYTES) w.take(SLAB_BYTES);
  const begin = w.pos;
  const n = ids.length;
  const columns = cellTexts(plan.fields.length, n);
  try {
    const at = locateRows(plan, ids);
    // `_row_id` is the row's position (with-row-ids.ts): written from the ids, not loaded from the body.
    integerTexts(ids, 0, n, columns[0]);
    for (let c = 1; c < columns.length; c++) plan.textsOf(c)(at, 0, n, columns[c]);
    w.bytes(JSON_BODY_OPEN);
    writeRows(w, plan.jsonRow, columns, 0, n, true);
    const close = closeOf(plan);
    w.bytes(close.head);
    w.integer(n);
    w.bytes(close.tail);
  } catch (error) {
    w.pos = begin; // a failed answer leaves nothing behind
    throw error;
  } finally {
    for (const column of columns) column.shrink(SCRATCH_KEEP_CELLS, SCRATCH_KEEP_BYTES);
  }
  // ensure() may have moved the writer to a larger buffer mid-answer: it copied the answer's start along.
  return Buffer.from(w.buf.buffer, w.buf.byteOffset + begin, w.pos - begin);
}

/** `width` cell texts, cleared for `n` cells each. */
function cellTexts(width: number, n: number): readonly CellTexts[] {
  let columns = scratchOfWidth[width];
  if (columns === undefined) {
    while (scratch.length < width) scratch.push(new CellTexts());
    scratchOfWidth[width] = columns = scratch.slice(0, width);
  }
  for (const column of columns) column.clear(n);
  return columns;
}

/** The document's closing around its row count, as bytes kept per projection (the same for every answer of it). */
function closeOf(plan: SelectionPlan): { head: Uint8Array; tail: Uint8Array } {
  let close = plan.memo.get(CLOSE_MEMO) as { head: Uint8Array; tail: Uint8Array } | undefined;
  if (close === undefined) {
    const { head, tail } = jsonBodyCloseParts(plan.fields.map((f) => f.name));
    plan.memo.set(CLOSE_MEMO, (close = { head: Buffer.from(head), tail: Buffer.from(tail) }));
  }
  return close;
}
