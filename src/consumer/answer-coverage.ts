/**
 * Whether a data-plane answer holds everything it was asked for (SPEC 3.1).
 * Our data plane answers an unknown `_row_id` or column with a 400; the
 * Python reference answers 200 with less data, and a merge would then hand
 * the handler rows without their body, as if that were the whole answer.
 * So the consumer checks: every requested `_row_id` and column came back.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { responseInvalid } from '../json/decoded-body.js';

/** Tracks the requested row ids an answer has delivered; {@link finish} refuses an answer that lacks some. */
export class AnswerCoverage {
  readonly #asked: ReadonlySet<number> | undefined;
  readonly #columns: readonly string[] | undefined;
  readonly #seen = new Set<number>();

  /**
   * @param rowIds the ids asked for (undefined: every row, nothing to check)
   * @param columns the columns asked for (undefined or empty: every column)
   */
  constructor(rowIds: readonly number[] | undefined, columns: readonly string[] | undefined) {
    this.#asked = rowIds === undefined || rowIds.length === 0 ? undefined : new Set(rowIds);
    this.#columns = columns === undefined || columns.length === 0 ? undefined : columns;
  }

  /**
   * Checks the answer's columns: every column asked for is among them. A
   * JSON answer without rows has no columns but `columns_returned`, which
   * the reference omits, so only an Arrow schema or a JSON answer with rows
   * is checked (without rows there is nothing to merge either).
   * @param schema the answer's schema (a JSON answer's from its rows)
   * @param json the answer was JSON: its `columns_returned` (or the schema's names) and its row count
   * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` (`missingColumns`)
   */
  checkColumns(schema: Schema, json?: { columns: readonly string[]; rows: number }): void {
    if (this.#columns === undefined || json?.rows === 0) return;
    const names = new Set([...schema.fields.map((f) => f.name), ...(json?.columns ?? [])]);
    const missing = this.#columns.filter((c) => !names.has(c));
    if (missing.length > 0) throw responseInvalid({ problem: 'missingColumns', missing });
  }

  /** Records the row ids of one batch (`_row_id` is its first column). */
  see(batch: RecordBatch): void {
    const asked = this.#asked;
    if (asked === undefined || batch.numRows === 0) return;
    const ids = batch.getChildAt(0)!.toArray() as ArrayLike<number | bigint>;
    for (let i = 0; i < ids.length; i++) {
      const id = Number(ids[i]);
      if (asked.has(id)) this.#seen.add(id);
    }
  }

  /**
   * Checks that every requested id was seen.
   * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` (`missingRows`)
   */
  finish(): void {
    if (this.#asked === undefined || this.#seen.size >= this.#asked.size) return;
    const missing = [...this.#asked].filter((id) => !this.#seen.has(id));
    if (missing.length > 0) throw responseInvalid({ problem: 'missingRows', missing, asked: this.#asked.size });
  }
}
