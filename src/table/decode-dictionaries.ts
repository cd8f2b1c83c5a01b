/**
 * Replaces dictionary-encoded columns by plain ones. A body is served chunk by
 * chunk, each chunk encoded on its own (in a worker); a dictionary column
 * would need its dictionary sent before every chunk's batch, and JSON needs
 * the values anyway. Tables from Parquet readers and query engines often
 * carry dictionaries, so bodies are normalised once, when they are cached.
 */
import { Field, RecordBatch, Schema, Struct, Table, Type, makeData, vectorFromArray, type DataType, type Dictionary } from 'apache-arrow';

/** True when any top-level column of `schema` is dictionary-encoded. */
export function hasDictionaries(schema: Schema): boolean {
  return schema.fields.some((f) => f.type.typeId === Type.Dictionary);
}

/** `table` with every dictionary column decoded to its value type; other columns shared, not copied. */
export function decodeDictionaries(table: Table): Table {
  if (!hasDictionaries(table.schema)) return table;
  const fields = table.schema.fields.map((f) =>
    f.type.typeId === Type.Dictionary ? new Field(f.name, (f.type as Dictionary).dictionary, f.nullable, f.metadata) : f,
  );
  const schema = new Schema(fields, table.schema.metadata);
  const batches = table.batches.map((batch) => {
    const children = batch.data.children.map((child, c) => {
      if (table.schema.fields[c].type.typeId !== Type.Dictionary) return child;
      const column = batch.getChildAt(c)!;
      // Values through the dictionary, then rebuilt with arrow-js's builder for the value type.
      return vectorFromArray(Array.from(column), fields[c].type as DataType).data[0];
    });
    return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children }));
  });
  return new Table(schema, batches);
}
