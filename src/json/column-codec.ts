/**
 * The JSON of one Arrow column chunk, both ways, chosen by one table: for
 * each type, `write` appends element `i` as JSON (README, "JSON encoding of
 * Arrow types") to a ByteWriter, and `read` gives the JS value an exact
 * reader takes that JSON for (an integer beyond 2^53 as a bigint). The two
 * sit side by side in the type's family (numbers.ts, temporal.ts, text.ts,
 * nested.ts), so they cannot drift apart; test/json/column-codec.test.ts
 * holds them to it.
 *
 * Common types never become JS values on the way out: integers are written
 * digit by digit, strings copied as bytes, JSON-text columns verbatim.
 * Nested types go through their children's codecs, so every type nests in
 * every other.
 */
import { Type, type Data, type Field } from 'apache-arrow';
import { S2SPError } from '../errors.js';
import { NULL_BYTES } from './bytes.js';
import { validity } from './column-access.js';
import type { CodecMaker, JsonCodec, ValueReader } from './json-codec.js';
import { dictionaryCodec, fixedSizeListCodec, listCodec, mapCodec, structCodec, unionCodec } from './nested.js';
import { boolCodec, decimalCodec, floatCodec, intCodec } from './numbers.js';
import { dateCodec, durationCodec, intervalCodec, timeCodec, timestampCodec } from './temporal.js';
import { binaryCodec, textCodec } from './text.js';

const MAKERS: Partial<Record<Type, CodecMaker>> = {
  [Type.Int]: intCodec,
  [Type.Float]: floatCodec,
  [Type.Bool]: boolCodec,
  [Type.Decimal]: decimalCodec,
  [Type.Utf8]: textCodec,
  [Type.LargeUtf8]: textCodec,
  [Type.Utf8View]: textCodec,
  [Type.Binary]: binaryCodec,
  [Type.LargeBinary]: binaryCodec,
  [Type.BinaryView]: binaryCodec,
  [Type.FixedSizeBinary]: binaryCodec,
  [Type.Date]: dateCodec,
  [Type.Timestamp]: timestampCodec,
  [Type.Time]: timeCodec,
  [Type.Duration]: durationCodec,
  [Type.Interval]: intervalCodec,
  [Type.List]: listCodec,
  [Type.LargeList]: listCodec,
  [Type.FixedSizeList]: fixedSizeListCodec,
  [Type.Struct]: structCodec,
  [Type.Map]: mapCodec,
  [Type.Union]: unionCodec,
  [Type.Dictionary]: dictionaryCodec,
};

const NULL_CODEC: JsonCodec = { write: (w) => w.bytes(NULL_BYTES), read: () => null };

/**
 * The codec of `data`, the chunk of `field` in one batch; a null element is
 * `null` both ways.
 * @throws S2SPError `S2SP_ERR_TABLE_UNSUPPORTED_TYPE` for a type JSON cannot carry exactly
 */
export function columnCodec(field: Field, data: Data): JsonCodec {
  if (data.typeId === Type.Null) return NULL_CODEC;
  const make = MAKERS[data.typeId];
  if (make === undefined) {
    throw new S2SPError('S2SP_ERR_TABLE_UNSUPPORTED_TYPE', { problem: 'unsupportedType', column: field.name, type: String(field.type) });
  }
  const codec = make(field, data, columnCodec);
  const valid = validity(data);
  if (valid === undefined) return codec;
  const { write, read } = codec;
  return {
    write: (w, i) => (valid(i) ? write(w, i) : w.bytes(NULL_BYTES)),
    read: (i) => (valid(i) ? read(i) : null),
  };
}

/** A JS-value reader for `data`, the chunk of `field` in one batch. */
export function valueReader(field: Field, data: Data): ValueReader {
  return columnCodec(field, data).read;
}
