/**
 * `abstract_format` (SPEC 2.4, our extension): how a resource tool lays out
 * `abstract`. `rows` is the reference's shape, one object per row. `columns`
 * names each column once and sends each row as an array:
 *
 *   [["_row_id", "mag", "place"], [0, 2, "4km W of Castaic, CA"], ...]
 *
 * It stays a JSON array, so agent-side dispatchers that look for an array
 * `abstract` next to a `body` (SPEC 2.3) keep working, and an agent selects
 * rows by copying whole lines, as it does with `rows`. On the demo's
 * earthquakes abstract it costs about two thirds of the `rows` tokens: the
 * keys are no longer repeated on every row (the README's demo section has the figures).
 */

/** The layouts of `abstract`. */
export const AbstractFormat = {
  /** One JSON object per row, `_row_id` first (the reference's shape, the default). */
  rows: 'rows',
  /** A header array of column names (`_row_id` first), then one array of values per row. */
  columns: 'columns',
} as const;

/** One of {@link AbstractFormat}'s values. */
export type AbstractFormat = (typeof AbstractFormat)[keyof typeof AbstractFormat];

/** Every layout, in a fixed order (for schemas and messages). */
export const ABSTRACT_FORMATS = Object.values(AbstractFormat) as [AbstractFormat, ...AbstractFormat[]];
