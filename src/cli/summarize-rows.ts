/**
 * Per-column statistics of merged rows: what the CLI's `summarize_rows`
 * consumer tool answers, so a model sees the shape of a body (counts,
 * ranges, frequent values) without reading the rows themselves.
 *
 * One pass over the rows, one accumulator per column. The output is
 * deterministic: columns in first-seen order, `top` ties broken by first
 * appearance, so the same rows always summarize to the same JSON.
 */
import type { Row } from '../table/rows-from-table.js';
import { ROW_ID } from '../protocol/row-id.js';

/**
 * What a column holds: one scalar kind, `null` when every value is null or
 * missing, `mixed` when kinds differ or values are objects or arrays.
 */
export type SummaryValueType = 'number' | 'string' | 'boolean' | 'mixed' | 'null';

/** A frequent value and how many rows hold it. */
export interface TopValue {
  value: string | boolean;
  count: number;
}

/** Statistics of one column. */
export interface ColumnSummary {
  /** Rows where the value is neither null nor missing. */
  count: number;
  /** Rows where the value is null or the key is missing. */
  nulls: number;
  type: SummaryValueType;
  /** Number columns: the smallest value. */
  min?: number;
  /** Number columns: the largest value. */
  max?: number;
  /** Number columns: the arithmetic mean of the finite values. */
  mean?: number;
  /** String and boolean columns: up to 5 most frequent values, most frequent first. */
  top?: TopValue[];
}

/** The answer of {@link summarizeRows}. */
export interface RowSummary {
  row_count: number;
  /** One entry per column except `_row_id`, in first-seen order. */
  columns: Record<string, ColumnSummary>;
}

/** How many frequent values `top` lists. */
export const TOP_VALUES = 5;

const KIND_NUMBER = 1;
const KIND_STRING = 2;
const KIND_BOOLEAN = 4;
const KIND_OTHER = 8;

class ColumnAccumulator {
  count = 0;
  kinds = 0;
  finite = 0;
  min = Infinity;
  max = -Infinity;
  // Neumaier summation: a naive sum of a million floats drifts in the last digits.
  sum = 0;
  compensation = 0;
  /** Counts of string and boolean values; Map order is first appearance. */
  readonly counts = new Map<string | boolean, number>();

  add(value: unknown): void {
    if (value === null || value === undefined) return;
    this.count++;
    switch (typeof value) {
      case 'number':
      case 'bigint':
        this.kinds |= KIND_NUMBER;
        this.addNumber(Number(value));
        return;
      case 'string':
        this.kinds |= KIND_STRING;
        this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
        return;
      case 'boolean':
        this.kinds |= KIND_BOOLEAN;
        this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
        return;
      default:
        this.kinds |= KIND_OTHER;
    }
  }

  private addNumber(v: number): void {
    // NaN and Infinity count as numbers but would poison min/max/mean.
    if (!Number.isFinite(v)) return;
    this.finite++;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    const t = this.sum + v;
    this.compensation += Math.abs(this.sum) >= Math.abs(v) ? this.sum - t + v : v - t + this.sum;
    this.sum = t;
  }

  summary(rowCount: number): ColumnSummary {
    const type = typeOf(this.kinds);
    const out: ColumnSummary = { count: this.count, nulls: rowCount - this.count, type };
    if (type === 'number' && this.finite > 0) {
      out.min = this.min;
      out.max = this.max;
      out.mean = (this.sum + this.compensation) / this.finite;
    } else if (type === 'string' || type === 'boolean') {
      out.top = topValues(this.counts);
    }
    return out;
  }
}

/**
 * Summarizes rows column by column; `_row_id` is skipped. Numbers get
 * min/max/mean (over finite values; bigints count as numbers); strings and
 * booleans get their most frequent values.
 *
 * @param rows merged rows, e.g. what a consumer tool handler receives
 */
export function summarizeRows(rows: readonly Row[]): RowSummary {
  const columns = new Map<string, ColumnAccumulator>();
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (key === ROW_ID) continue;
      let column = columns.get(key);
      if (column === undefined) {
        column = new ColumnAccumulator();
        columns.set(key, column);
      }
      column.add(row[key]);
    }
  }
  // fromEntries defines properties, so a column named "__proto__" stays a column.
  const summaries = Object.fromEntries(Array.from(columns, ([name, column]) => [name, column.summary(rows.length)]));
  return { row_count: rows.length, columns: summaries };
}

function typeOf(kinds: number): SummaryValueType {
  switch (kinds) {
    case 0:
      return 'null';
    case KIND_NUMBER:
      return 'number';
    case KIND_STRING:
      return 'string';
    case KIND_BOOLEAN:
      return 'boolean';
    default:
      return 'mixed';
  }
}

/**
 * The TOP_VALUES largest counts without sorting every distinct value: a
 * column of a million unique ids would otherwise sort a million entries.
 * Entries arrive in first-appearance order and only a strictly larger count
 * moves ahead, which is the tie rule.
 */
function topValues(counts: Map<string | boolean, number>): TopValue[] {
  const top: TopValue[] = [];
  for (const [value, count] of counts) {
    if (top.length === TOP_VALUES && count <= top[TOP_VALUES - 1].count) continue;
    let at = top.length;
    while (at > 0 && top[at - 1].count < count) at--;
    top.splice(at, 0, { value, count });
    if (top.length > TOP_VALUES) top.pop();
  }
  return top;
}
