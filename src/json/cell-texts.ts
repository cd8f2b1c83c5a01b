/**
 * The JSON texts of a run of one column's cells, back to back. Rows are
 * written a column at a time: each column's cells first, in one loop over
 * one type (column-texts.ts), where the buffers stay in registers and the
 * loads of scattered cells overlap, then the rows, put together from the
 * texts (json-rows.ts). Written cell by cell, a row called a different
 * writer for every cell and reloaded the output buffer and position in each
 * (bench/analysis.md, "Small requests: rows written a column at a time").
 */
import { ByteWriter } from './byte-writer.js';

/** Cell texts of one column: cell k is `writer.buf[startOf(k) .. ends[k])`. */
export class CellTexts {
  readonly writer: ByteWriter;
  ends: Uint32Array;
  /** Cells written so far. */
  count = 0;

  constructor(cells = 64, bytes = 4096) {
    this.writer = new ByteWriter(bytes);
    this.ends = new Uint32Array(cells);
  }

  /** Empties it for a run of up to `cells` cells. */
  clear(cells: number): void {
    this.count = 0;
    this.writer.pos = 0;
    if (this.ends.length < cells) this.ends = new Uint32Array(Math.max(cells, this.ends.length * 2));
  }

  /** Lets go of buffers grown past `cells` cells or `bytes` bytes, so scratch one large run grew is not pinned. */
  shrink(cells: number, bytes: number): void {
    if (this.ends.length > cells) this.ends = new Uint32Array(cells);
    if (this.writer.buf.byteLength > bytes) this.writer.take(bytes);
  }

  /** Ends the cell being written, at the writer's position. */
  endCell(): void {
    this.ends[this.count++] = this.writer.pos;
  }

  /** Where cell `k`'s text starts. */
  startOf(k: number): number {
    return k === 0 ? 0 : this.ends[k - 1];
  }
}
