/**
 * The whole JSON document (SPEC 3.2) of a small selection, written straight
 * from the body's column buffers into one Buffer: no gathered batch, no
 * Table, no stream. The bytes equal what the chunked path writes (the same
 * per-column writers over the same values; test/data/encoder-core.test.ts).
 */
import { JSON_BODY_OPEN, JSON_ROW_SEPARATOR, jsonBodyCloseParts } from '../protocol/json-body-bytes.js';
import { batchOfRow, type SelectionPlan } from '../table/selection-plan.js';
import { ByteWriter } from './byte-writer.js';
import { CLOSE_BRACE } from './bytes.js';
const CLOSE_MEMO = 'json:close';

/**
 * Scratch space reused by every call: the document is copied out once at
 * its final size, so a request allocates one Buffer (from Node's pool when
 * small) instead of a growing writer of its own.
 */
const scratch = new ByteWriter(64 * 1024);
/** Scratch buffers above this are dropped after use, so one big answer does not pin its memory. */
const SCRATCH_KEEP_BYTES = 1024 * 1024;

/**
 * The JSON document of rows `ids` (ascending, unique positions in the body)
 * of `plan`'s projection.
 */
export function selectionJson(plan: SelectionPlan, ids: ArrayLike<number>): Buffer {
  const w = scratch;
  w.pos = 0;
  try {
    w.bytes(JSON_BODY_OPEN);
    const keys = plan.jsonKeys;
    const width = keys.length;
    let b = ids.length > 0 ? batchOfRow(plan, ids[0], 0) : 0;
    let start = plan.starts[b];
    let end = plan.starts[b + 1];
    let writers = ids.length > 0 ? plan.writersOf(b) : [];
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k];
      if (id >= end) {
        b = batchOfRow(plan, id, b);
        start = plan.starts[b];
        end = plan.starts[b + 1];
        writers = plan.writersOf(b);
      }
      const i = id - start;
      w.ensure(1);
      if (k > 0) w.buf[w.pos++] = JSON_ROW_SEPARATOR;
      for (let c = 0; c < width; c++) {
        w.bytes(keys[c]);
        writers[c](w, i);
      }
      w.ensure(1);
      w.buf[w.pos++] = CLOSE_BRACE;
    }
    const close = closeOf(plan);
    w.bytes(close.head);
    w.integer(ids.length);
    w.bytes(close.tail);
    const out = Buffer.allocUnsafe(w.pos);
    out.set(w.buf.subarray(0, w.pos));
    return out;
  } finally {
    if (w.buf.byteLength > SCRATCH_KEEP_BYTES) w.take(64 * 1024);
    w.pos = 0;
  }
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
