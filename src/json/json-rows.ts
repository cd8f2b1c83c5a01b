/**
 * Rows of JSON put together from their columns' cell texts (cell-texts.ts):
 * for each row, what opens it, then for each column the bytes before its
 * value (`,"name":`) and the value's text, then what closes it. Both the
 * constant bytes and the texts are copied four bytes at a time, through
 * DataViews of the buffers; a copy may run up to three bytes past its end,
 * into room that is written over next (the output) or never read (the
 * texts), which each buffer has (ByteWriter.ensure).
 */
import type { ByteWriter } from './byte-writer.js';
import { COMMA } from './bytes.js';
import type { CellTexts } from './cell-texts.js';

/** What a word copy may run past its end. */
const WORD_SLACK = 4;

/** A text longer than this is copied by `set` (memmove) rather than word by word. */
const SHORT_TEXT = 64;

/** Constant bytes of a row, also as little-endian 32-bit words (the last one padded). */
export interface RowBytes {
  readonly length: number;
  readonly words: Uint32Array;
}

/** How a row is written: what opens it, what precedes each value, the byte that closes it. */
export interface RowLayout {
  readonly open: RowBytes;
  readonly before: readonly RowBytes[];
  readonly close: number;
}

const encoder = new TextEncoder();

/** `text` as UTF-8 row bytes. */
export function rowBytesOf(text: string): RowBytes {
  const bytes = encoder.encode(text);
  const words = new Uint32Array(Math.ceil(bytes.length / 4));
  new Uint8Array(words.buffer).set(bytes);
  // Words are read as little-endian numbers and written back the same way: the same bytes on any host.
  const view = new DataView(words.buffer);
  for (let j = 0; j < words.length; j++) words[j] = view.getUint32(4 * j, true);
  return { length: bytes.length, words };
}

/** The layout of an object per row: `{"a":1,"b":2}` (`{}` for no columns). */
export function objectRowLayout(names: readonly string[]): RowLayout {
  return {
    open: rowBytesOf(names.length === 0 ? '{' : ''),
    before: names.map((name, c) => rowBytesOf((c === 0 ? '{' : ',') + JSON.stringify(name) + ':')),
    close: 0x7d,
  };
}

/** The layout of a value array per row: `[1,2]` (the `columns` layout of an abstract, SPEC 2.4). */
export function arrayRowLayout(width: number): RowLayout {
  return { open: rowBytesOf('['), before: Array.from({ length: width }, (_, c) => rowBytesOf(c === 0 ? '' : ',')), close: 0x5d };
}

/**
 * Writes rows `from..to` (cell k of every column is row k) to `w`, each
 * after a comma but the document's first (row `from` when `first`), and
 * stops after the first row that brings `w` to `limit` bytes or more.
 * Returns the row it stopped before (`to` when it wrote them all).
 */
export function writeRows(
  w: ByteWriter,
  layout: RowLayout,
  columns: readonly CellTexts[],
  from: number,
  to: number,
  first: boolean,
  limit = Number.POSITIVE_INFINITY,
): number {
  if (to <= from) return from;
  const { open, before, close } = layout;
  const width = columns.length;
  const rows = to - from;
  // Room for every row at once (a run is a few hundred rows): no check per row.
  let size = rows * (2 + open.length) + WORD_SLACK; // each row's comma, opening and closing
  for (let c = 0; c < width; c++) {
    const texts = columns[c];
    texts.writer.ensure(WORD_SLACK);
    size += rows * before[c].length + texts.ends[to - 1] - texts.startOf(from);
  }
  w.ensure(size);
  const { buf, view } = w;
  let pos = w.pos;
  let k = from;
  while (k < to) {
    if (k > from || !first) buf[pos++] = COMMA;
    pos = putRowBytes(view, pos, open);
    for (let c = 0; c < width; c++) {
      pos = putRowBytes(view, pos, before[c]);
      const texts = columns[c];
      const { ends } = texts;
      const start = k === 0 ? 0 : ends[k - 1];
      const length = ends[k] - start;
      if (length > SHORT_TEXT) buf.set(texts.writer.buf.subarray(start, start + length), pos);
      else {
        const src = texts.writer.view;
        for (let j = 0; j < length; j += 4) view.setUint32(pos + j, src.getUint32(start + j, true), true);
      }
      pos += length;
    }
    buf[pos++] = close;
    k++;
    if (pos >= limit) break;
  }
  w.pos = pos;
  return k;
}

function putRowBytes(view: DataView, pos: number, bytes: RowBytes): number {
  const { words } = bytes;
  for (let j = 0; j < words.length; j++) view.setUint32(pos + 4 * j, words[j], true);
  return pos + bytes.length;
}
