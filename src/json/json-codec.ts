/**
 * The shape of a column chunk's JSON codec (column-codec.ts picks one per
 * type): element `i` written as JSON, or read as the JS value an exact
 * reader takes that JSON for.
 */
import type { Data, Field } from 'apache-arrow';
import type { ByteWriter } from './byte-writer.js';

/** Appends the JSON of element `i` to `w`. */
export type JsonWriter = (w: ByteWriter, i: number) => void;
/** Reads element `i` of one chunk as a plain JS value. */
export type ValueReader = (i: number) => unknown;

/** Element `i` of one chunk, written as JSON or read as its JS value. */
export interface JsonCodec {
  readonly write: JsonWriter;
  readonly read: ValueReader;
}

/** The codec of a chunk of a field. */
export type CodecOf = (field: Field, data: Data) => JsonCodec;

/** Makes the codec of a chunk; nested types get `codecOf` for their children. */
export type CodecMaker = (field: Field, data: Data, codecOf: CodecOf) => JsonCodec;
