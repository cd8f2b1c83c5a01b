/**
 * Rows to an Arrow Table, a batch of rows at a time: each row's values go
 * into one array per column as they come, and the row object can be dropped
 * at once. tableFromRows needs every row object alive until its second pass;
 * a million of them cost more than a gigabyte and most of the decoding time
 * in garbage collection, which is what the consumer's streamed JSON body
 * avoids through this.
 *
 * The Table is the one tableFromRows would build from the same rows, row
 * ids kept: the same observers see the same values in the same order, and
 * the same column writers read them.
 */
import { Int32, makeData, type Data, type Table } from 'apache-arrow';
import { ROW_ID } from '../protocol/row-id.js';
import { ColumnObserver } from './column-kind.js';
import { tableFromColumns } from './table-from-rows.js';

type Row = Record<string, unknown>;

interface Column {
  observer: ColumnObserver;
  /** The column's cells by row; shorter than the row count where its last rows lacked it. */
  values: unknown[];
}

/** Gathers rows column by column; {@link finish} makes the Table. */
export class RowColumns {
  #ids = new Int32Array(1024);
  #count = 0;
  readonly #byName = new Map<string, Column>();
  readonly #ordered: Column[] = [];
  // The columns of the previous row by key position: rows of one body
  // repeat their keys in one order, so most keys are found without the Map.
  readonly #lastKeys: string[] = [];
  readonly #lastColumns: Column[] = [];

  /** Rows added so far. */
  get count(): number {
    return this.#count;
  }

  /**
   * Adds one row.
   * @param row a plain object (the caller checked it)
   * @param id its `_row_id`, an integer in Int32 range (the caller checked it)
   */
  add(row: Row, id: number): void {
    const r = this.#count++;
    if (r === this.#ids.length) {
      const grown = new Int32Array(this.#ids.length * 2);
      grown.set(this.#ids);
      this.#ids = grown;
    }
    this.#ids[r] = id;
    let k = 0;
    for (const key in row) {
      if (key === ROW_ID) continue;
      let column = this.#lastKeys[k] === key ? this.#lastColumns[k] : undefined;
      if (column === undefined) {
        column = this.#column(key, r);
        this.#lastKeys[k] = key;
        this.#lastColumns[k] = column;
      }
      k++;
      const v = row[key];
      column.observer.observe(v);
      const { values } = column;
      // A row that lacked the column leaves a gap: missing, as tableFromRows reads it.
      while (values.length < r) values.push(undefined);
      values.push(v);
    }
  }

  #column(name: string, firstRow: number): Column {
    let column = this.#byName.get(name);
    if (column === undefined) {
      column = { observer: new ColumnObserver(name), values: [] };
      // Kept packed (no holes): the rows before this one lacked the column.
      for (let i = 0; i < firstRow; i++) column.values.push(undefined);
      this.#byName.set(name, column);
      this.#ordered.push(column);
    }
    return column;
  }

  /**
   * The Table of every row added.
   * @throws S2SPError `S2SP_ERR_TABLE_TOO_LARGE` when a text column passes 2 GiB
   */
  finish(): Table {
    const n = this.#count;
    const rowIds: Data<Int32> = makeData({ type: new Int32(), length: n, nullCount: 0, data: this.#ids.subarray(0, n) });
    const columns = this.#ordered.map(({ observer, values }) => ({ observer, cell: (i: number) => values[i] }));
    return tableFromColumns(rowIds, n, columns);
  }
}
