/**
 * Record batches as a query engine hands them over (DuckDB, a Parquet reader,
 * arrow-js's RecordBatchReader): a resource tool may return them instead of
 * a Table, and they become a body one batch at a time, so a big result is
 * never held twice (DESIGN.md, "The data path").
 *
 * Each batch gets `_row_id` (numbered across batches) and loses its
 * dictionaries, as withRowIds does for a Table. The schema is known before
 * the first row is cached: from the first batch, or from an empty reader.
 */
import { DataType, RecordBatch, Schema, Table } from 'apache-arrow';
import { compareTypes } from 'apache-arrow/visitor/typecomparator';
import { S2SPError } from '../errors.js';
import { MAX_ROW_ID, ROW_ID } from '../protocol/row-id.js';
import { checkPositional } from './body-table.js';
import { decodeDictionaries, hasDictionaries } from './decode-dictionaries.js';
import { batchWithRowIds, bodySchemaOf } from './with-row-ids.js';
import { assertCarriableSchema } from './carriable-types.js';

/** Batches as a handler may return them: any async iterable of RecordBatch, e.g. an arrow-js RecordBatchReader. */
export type RecordBatchSource = AsyncIterable<RecordBatch>;

/** Record batches whose schema is known before the first one arrives. */
export interface BatchStream extends AsyncIterable<RecordBatch> {
  readonly schema: Schema;
}

/** A source opened as a body: `_row_id` first in its schema and in every batch. Iterate it once. */
export interface BodyBatchStream extends BatchStream {
  /** Stops the source (after an error, or when the batches are not wanted). */
  close(): Promise<void>;
}

/**
 * True for something to iterate batches from: async iterable, and neither an
 * array (rows) nor a string. Tables are not (check for a Table first).
 */
export function isRecordBatchSource(value: unknown): value is RecordBatchSource {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

/**
 * Opens a batch source as a body stream: reads the first batch (or, for an
 * empty reader, its schema) so the body schema is known.
 * @throws S2SPError `S2SP_ERR_TABLE_UNSUPPORTED_TYPE` for a column no body can carry exactly;
 *   `S2SP_ERR_TABLE_INVALID` (from the stream) when an item is not a
 *   RecordBatch, a batch's columns differ from the first one's, or a `_row_id` of its own
 *   is not the row positions;
 *   `S2SP_ERR_TABLE_TOO_LARGE` past 2^31 rows (`_row_id` is Int32)
 */
export async function openBodyBatches(source: RecordBatchSource): Promise<BodyBatchStream> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (!first.done) checkBatch(first.value, 0);
  const sourceSchema = first.done ? emptySourceSchema(source) : first.value.schema;
  try {
    // A streamed body is refused at put like a Table: never cached garbled.
    assertCarriableSchema(sourceSchema);
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  const rowIdAt = sourceSchema.fields.findIndex((f) => f.name === ROW_ID);
  const schema = bodySchemaOf(decodedSchemaOf(sourceSchema));
  let pending: RecordBatch | undefined = first.done ? undefined : first.value;
  let finished = first.done === true;
  const close = async () => {
    if (finished) return;
    finished = true;
    await iterator.return?.();
  };
  async function* batches(): AsyncGenerator<RecordBatch> {
    let start = 0;
    try {
      for (let index = 0; ; index++) {
        let batch = pending;
        pending = undefined;
        if (batch === undefined) {
          if (finished) return;
          const next = await iterator.next();
          if (next.done === true) {
            finished = true;
            return;
          }
          batch = next.value;
          checkBatch(batch, index);
        }
        if (!sameColumns(batch.schema, sourceSchema)) {
          throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'batchColumnsDiffer', index });
        }
        if (batch.numRows === 0) continue;
        // A _row_id of the tool's own must be the positions, as bodyTableOf requires of a Table; it is then replaced.
        if (rowIdAt >= 0) checkPositional(new Table([batch]), rowIdAt, start);
        if (start + batch.numRows > MAX_ROW_ID + 1) {
          throw new S2SPError('S2SP_ERR_TABLE_TOO_LARGE', { problem: 'tooManyRows' });
        }
        const plain = hasDictionaries(batch.schema) ? decodeDictionaries(new Table([batch])).batches[0] : batch;
        yield batchWithRowIds(plain, schema, start);
        start += batch.numRows;
      }
    } finally {
      await close();
    }
  }
  const stream = batches();
  return {
    schema,
    // return() of a generator not yet started skips its finally: close the source as well.
    close: async () => {
      await stream.return(undefined);
      await close();
    },
    [Symbol.asyncIterator]: () => stream,
  };
}

/** Every batch of a stream in one Table (for plain and sync answers, which are built whole anyway). */
export async function tableFromBatchStream(stream: BatchStream): Promise<Table> {
  const batches: RecordBatch[] = [];
  for await (const batch of stream) batches.push(batch);
  return batches.length === 0 ? new Table(stream.schema) : new Table(stream.schema, batches);
}

function checkBatch(value: unknown, index: number): asserts value is RecordBatch {
  const v = value as { schema?: unknown; data?: unknown; numRows?: unknown } | null;
  const ok =
    value instanceof RecordBatch ||
    (typeof v === 'object' && v !== null && typeof v.numRows === 'number' && typeof v.schema === 'object' && typeof v.data === 'object');
  if (!ok) throw new S2SPError('S2SP_ERR_TABLE_INVALID', { problem: 'notRecordBatch', index });
}

/** The schema of a source that yielded no batch: a reader knows it; anything else has no columns. */
function emptySourceSchema(source: RecordBatchSource): Schema {
  const schema = (source as { schema?: unknown }).schema;
  return schema instanceof Schema || (typeof schema === 'object' && schema !== null && Array.isArray((schema as Schema).fields))
    ? (schema as Schema)
    : new Schema([]);
}

function decodedSchemaOf(schema: Schema): Schema {
  return hasDictionaries(schema) ? decodeDictionaries(new Table(schema)).schema : schema;
}

/**
 * Same column names and types, in order. Nullability and metadata may differ
 * between batches, and so may dictionaries (each batch of its own, ids and
 * index types included): they are decoded, only their value types count.
 */
function sameColumns(a: Schema, b: Schema): boolean {
  if (a === b) return true;
  if (a.fields.length !== b.fields.length) return false;
  return a.fields.every((f, i) => f.name === b.fields[i].name && compareTypes(valueType(f.type), valueType(b.fields[i].type)));
}

function valueType(type: DataType): DataType {
  return DataType.isDictionary(type) ? type.dictionary : type;
}
