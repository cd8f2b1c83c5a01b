/**
 * What every small response of one body and one projection shares, worked
 * out once and kept: the response fields and where they sit in the body,
 * where each stored batch starts, the JSON row layout, and (lazily, per
 * response field) its chunks and its JSON texts writer. A small request
 * then only locates its rows and copies their values; building arrow-js
 * Schemas, RecordBatches and visitors per request cost more than the copy
 * (bench/small-requests, profiled).
 *
 * Plans hang off the body table (weakly), so they go when the body goes.
 */
import type { Data, Field, Table } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';
import { columnTexts, type ColumnTexts, type RowLocations } from '../json/column-texts.js';
import { objectRowLayout, type RowLayout } from '../json/json-rows.js';

/** A body seen through one projection. */
export interface SelectionPlan {
  readonly body: Table;
  /** The response fields, `_row_id` first (a body's first field, whose value is the row's position: with-row-ids.ts). */
  readonly fields: readonly Field[];
  /** Each response field's index in the body schema. */
  readonly indices: readonly number[];
  /** Row position of every stored batch, and the row count at the end. */
  readonly starts: Int32Array;
  /** A JSON row: `{"_row_id":` before the first field, `,"name":` before the others (as jsonRowBytes writes them). */
  readonly jsonRow: RowLayout;
  /** The chunks of response field `c`, one per stored batch. */
  chunksOf(c: number): readonly Data[];
  /** The JSON texts writer of response field `c`, over every stored batch. */
  textsOf(c: number): ColumnTexts;
  /** Per-plan memo for encoders (e.g. the Arrow schema message), keyed by the encoder. */
  readonly memo: Map<string, unknown>;
}

/** Projections kept per body: a client that asks for ever new column sets must not grow memory without bound. */
const MAX_PLANS_PER_BODY = 32;

const plansByBody = new WeakMap<Table, Map<string, SelectionPlan>>();

/**
 * The plan of `body` projected to `columns` (as projectColumns orders them:
 * `_row_id` first, then the columns once each; undefined or empty for all).
 * Every name must exist in the body.
 */
export function selectionPlanOf(body: Table, columns: readonly string[] | undefined): SelectionPlan {
  let plans = plansByBody.get(body);
  if (plans === undefined) plansByBody.set(body, (plans = new Map()));
  // A name cannot hold NUL: it keys the projection unambiguously.
  const key = columns === undefined ? '' : columns.join('\u0000');
  const known = plans.get(key);
  if (known !== undefined) return known;
  const plan = newPlan(body, columns);
  if (plans.size >= MAX_PLANS_PER_BODY) plans.delete(plans.keys().next().value as string);
  plans.set(key, plan);
  return plan;
}

function newPlan(body: Table, columns: readonly string[] | undefined): SelectionPlan {
  const all = body.schema.fields;
  const indices =
    columns === undefined || columns.length === 0
      ? all.map((_f, i) => i)
      : [ROW_ID, ...new Set(columns.filter((c) => c !== ROW_ID))].map((name) => all.findIndex((f) => f.name === name));
  const fields = indices.map((i) => all[i]);
  const starts = new Int32Array(body.batches.length + 1);
  body.batches.forEach((batch, b) => (starts[b + 1] = starts[b] + batch.numRows));
  const chunksByField: Array<readonly Data[] | undefined> = [];
  const textsByField: Array<ColumnTexts | undefined> = [];
  const chunksOf = (c: number): readonly Data[] => (chunksByField[c] ??= body.batches.map((batch) => batch.data.children[indices[c]]));
  return {
    body,
    fields,
    indices,
    starts,
    jsonRow: objectRowLayout(fields.map((f) => f.name)),
    chunksOf,
    textsOf: (c) => (textsByField[c] ??= columnTexts(fields[c], chunksOf(c))),
    memo: new Map(),
  };
}

export type { RowLocations };

/**
 * Scratch shared by every call (the selection writers never yield between
 * locating their rows and writing them). Typed arrays over 64 bytes live
 * outside V8's heap: two per request cost an allocation each and work for
 * the collector (the small-requests profile showed it).
 */
let scratch: RowLocations = locationsOf(64);
/** Larger selections get arrays of their own, so one big inline answer does not pin its scratch. */
const SCRATCH_KEEP_ROWS = 64 * 1024;

function locationsOf(rows: number): RowLocations {
  return { batchAt: new Int32Array(rows), rowAt: new Int32Array(rows) };
}

/**
 * Locates rows `ids` (ascending, unique positions in the body) in `plan`'s
 * stored batches. The arrays are valid until the next call, and may be
 * longer than `ids`.
 */
export function locateRows(plan: SelectionPlan, ids: ArrayLike<number>): RowLocations {
  const n = ids.length;
  let at = scratch;
  if (at.batchAt.length < n) {
    at = locationsOf(Math.max(n, at.batchAt.length));
    if (n <= SCRATCH_KEEP_ROWS) scratch = at;
  }
  const { starts } = plan;
  const { batchAt, rowAt } = at;
  let b = 0;
  for (let k = 0; k < n; k++) {
    const id = ids[k];
    while (starts[b + 1] <= id) b++;
    batchAt[k] = b;
    rowAt[k] = id - starts[b];
  }
  return at;
}
