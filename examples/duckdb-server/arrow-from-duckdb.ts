/**
 * A DuckDB query result as an Arrow Table, column by column.
 *
 * `@duckdb/node-api` (1.5) hands out no Arrow: its vectors keep their typed
 * arrays private and DuckDB's Arrow export lives in an extension this
 * server cannot download (external access is locked, see server.ts). So the
 * columns are built here from the column-major vectors of each result
 * chunk: one Arrow builder per column, fed straight from
 * `chunk.getColumnVector(c)`. No row objects are ever made; s2sp turns only
 * the abstract's rows into JSON, and the data plane streams the rest as
 * Arrow.
 */
import {
  DuckDBTypeId,
  type DuckDBConnection,
  type DuckDBDateValue,
  type DuckDBDecimalValue,
  type DuckDBTimestampValue,
  type DuckDBValue,
  type DuckDBVector,
} from '@duckdb/node-api';
import { Bool, Float64, Int32, Int64, Table, TimestampMillisecond, Utf8, makeBuilder, type Builder, type DataType, type Vector } from 'apache-arrow';

/** Raised when a query returns more rows than the caller allows. */
export class TooManyRowsError extends Error {}

/** One column under construction: its Arrow builder and how a DuckDB value becomes an Arrow one. */
interface ColumnSink {
  builder: Builder;
  convert: (value: DuckDBValue) => unknown;
}

const MS_PER_DAY = 86_400_000;

/**
 * Runs `sql` and returns its result as an Arrow Table.
 * @param maxRows more rows than this is an error (the body would be cached whole)
 * @throws TooManyRowsError above `maxRows`; DuckDB's own errors for bad SQL
 */
export async function arrowTableFromQuery(connection: DuckDBConnection, sql: string, maxRows: number): Promise<Table> {
  const result = await connection.stream(sql);
  const names = result.columnNames();
  const sinks = names.map((_, c) => sinkFor(result.columnTypeId(c)));
  let rows = 0;
  // fetchChunk answers null or an empty chunk at the end; every chunk holds at least one row before that.
  for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    rows += chunk.rowCount;
    if (rows > maxRows) throw new TooManyRowsError(`the query returns more than ${maxRows} rows; narrow it with WHERE or LIMIT`);
    for (let c = 0; c < sinks.length; c++) appendVector(sinks[c], chunk.getColumnVector(c), chunk.rowCount);
  }
  const columns: Record<string, Vector> = {};
  // Duplicate names (SELECT a, a) would collapse in a Table: number the repeats.
  names.forEach((name, c) => {
    let unique = name;
    for (let k = 2; unique in columns; k++) unique = `${name}_${k}`;
    columns[unique] = sinks[c].builder.finish().toVector();
  });
  return new Table(columns);
}

function appendVector(sink: ColumnSink, vector: DuckDBVector, count: number): void {
  for (let i = 0; i < count; i++) {
    const value = vector.getItem(i);
    sink.builder.append(value === null ? null : sink.convert(value));
  }
}

/** The Arrow type for a DuckDB type, and the conversion of its values. Types without a case travel as text. */
function sinkFor(typeId: DuckDBTypeId): ColumnSink {
  const sink = (type: DataType, convert: (value: DuckDBValue) => unknown): ColumnSink => ({
    builder: makeBuilder({ type, nullValues: [null] }),
    convert,
  });
  switch (typeId) {
    case DuckDBTypeId.BOOLEAN:
      return sink(new Bool(), (v) => v);
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
      return sink(new Int32(), (v) => v);
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      // BIGINT arrives as a bigint; UINTEGER as a number.
      return sink(new Int64(), (v) => BigInt(v as number | bigint));
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      // Past Int64: a double keeps the magnitude and loses the last digits.
      return sink(new Float64(), (v) => Number(v as bigint));
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return sink(new Float64(), (v) => v);
    case DuckDBTypeId.DECIMAL:
      return sink(new Float64(), (v) => (v as DuckDBDecimalValue).toDouble());
    case DuckDBTypeId.VARCHAR:
      return sink(new Utf8(), (v) => v);
    case DuckDBTypeId.TIMESTAMP:
      return sink(new TimestampMillisecond(), (v) => Number((v as DuckDBTimestampValue).micros / 1000n));
    case DuckDBTypeId.DATE:
      return sink(new TimestampMillisecond(), (v) => (v as DuckDBDateValue).days * MS_PER_DAY);
    default:
      return sink(new Utf8(), (v) => String(v));
  }
}
