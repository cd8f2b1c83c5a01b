/**
 * The whole JSON document (SPEC 3.2) of a small selection, written straight
 * from the body's column buffers into one Buffer: no gathered batch, no
 * Table, no stream. The bytes equal what the chunked path writes (the same
 * per-column writers over the same values, float cells through the same
 * formatter, a selection at a time: selected-float-texts.ts;
 * test/data/encoder-core.test.ts).
 */
import { JSON_BODY_OPEN, JSON_ROW_SEPARATOR, jsonBodyCloseParts } from '../protocol/json-body-bytes.js';
import { preloadCells } from '../table/preload-cells.js';
import { locateRows, type SelectionPlan } from '../table/selection-plan.js';
import { ByteWriter } from './byte-writer.js';
import { CLOSE_BRACE } from './bytes.js';
import type { JsonWriter } from './json-codec.js';
import { hasSelectedFloat, selectedFloatTexts, writeSelectedFloat } from './selected-float-texts.js';
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

/**
 * The JSON document of rows `ids` (ascending, unique positions in the body)
 * of `plan`'s projection.
 */
export function selectionJson(plan: SelectionPlan, ids: ArrayLike<number>): Buffer {
  const w = slab;
  // A writer grown past the slab size by a large answer is not kept for the next ones either.
  if (w.buf.byteLength - w.pos < SLAB_MIN_ROOM || w.buf.byteLength > SLAB_BYTES) w.take(SLAB_BYTES);
  const begin = w.pos;
  try {
    w.bytes(JSON_BODY_OPEN);
    const n = ids.length;
    const at = locateRows(plan, ids);
    preloadCells(plan, at, n);
    const floats = selectedFloatTexts(plan, at, n);
    const { batchAt, rowAt } = at;
    const keys = plan.jsonKeys;
    const width = keys.length;
    let b = -1;
    let writers: readonly JsonWriter[] = [];
    for (let k = 0; k < n; k++) {
      if (batchAt[k] !== b) writers = plan.writersOf((b = batchAt[k]));
      const i = rowAt[k];
      w.ensure(1);
      if (k > 0) w.buf[w.pos++] = JSON_ROW_SEPARATOR;
      // `_row_id` is the row's position (with-row-ids.ts): written from the id, not loaded from the body.
      w.bytes(keys[0]);
      w.integer(ids[k]);
      for (let c = 1; c < width; c++) {
        w.bytes(keys[c]);
        if (hasSelectedFloat(floats, c)) writeSelectedFloat(w, floats, c, k, b, i);
        else writers[c](w, i);
      }
      w.ensure(1);
      w.buf[w.pos++] = CLOSE_BRACE;
    }
    const close = closeOf(plan);
    w.bytes(close.head);
    w.integer(ids.length);
    w.bytes(close.tail);
  } catch (error) {
    w.pos = begin; // a failed answer leaves nothing behind
    throw error;
  }
  // ensure() may have moved the writer to a larger buffer mid-answer: it copied the answer's start along.
  return Buffer.from(w.buf.buffer, w.buf.byteOffset + begin, w.pos - begin);
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
