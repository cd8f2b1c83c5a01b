/**
 * Batches read from outside (a peer's answer, an input file), made safe for
 * arrow-js: every batch message is checked against the schema
 * (batch-validation.ts) and, when its buffers are compressed, decompressed
 * here, within a budget, into an uncompressed message, so arrow-js never
 * decompresses or trusts a header itself.
 *
 * Decompression is bounded in this codec-independent layer, where each
 * buffer's 8-byte prefix (its declared uncompressed length) is read: the
 * declared lengths must fit the buffers' fields and, summed, what is left
 * of the budget, before any frame is decompressed; the codec then gets the
 * budget left as its output limit, and its output must be exactly the
 * declared length. A peer cannot make the reader hold more decompressed
 * bytes than the budget (the consumer's max body bytes) per body.
 */
import { CompressionType, DataType, Field, RecordBatchReader, Table, type Schema } from 'apache-arrow';
import { BufferRegion, DictionaryBatch, Message, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { S2SPError } from '../../errors.js';
import type { IpcBufferCodec } from '../compression/buffer-codec.js';
import { checkBatchLayout } from './batch-validation.js';
import { ipcCodec, ipcCodecAvailable, ipcCodecOfCompressionType } from '../compression/codec-registry.js';
import { framedMetadata } from '../encode/message.js';
import { IpcStreamError, type StreamOutline, type WalkedMessage } from './stream-walk.js';

/** Decompressed bytes a reader may still produce for one body. */
export interface DecompressionBudget {
  /** The most decompressed bytes the whole body may hold. */
  readonly maxBytes: number;
  /** Decompressed so far. */
  usedBytes: number;
}

/** A fresh budget of `maxBytes` decompressed bytes for one body. */
export function decompressionBudget(maxBytes: number): DecompressionBudget {
  return { maxBytes, usedBytes: 0 };
}

/** The prefix of a buffer stored uncompressed in a compressed batch. */
const NOT_COMPRESSED = -1n;
const PREFIX_BYTES = 8;

/**
 * One batch message (record or dictionary batch) read from outside, checked
 * against `schema`: the message arrow-js may decode, the same bytes when
 * its buffers are uncompressed, else an uncompressed copy.
 *
 * @throws IpcStreamError kind `invalid` (buffers that do not hold what the
 *   header declares, naming the column) or `oversized` (declared
 *   uncompressed lengths past the budget); S2SPError
 *   `S2SP_ERR_CODEC_UNAVAILABLE` for a codec this platform cannot decompress
 */
export function checkedBatchMessage(schema: Schema, walked: WalkedMessage, budget: DecompressionBudget): Uint8Array {
  const { message } = walked;
  const dictionary = message.isDictionaryBatch() ? (message.header() as DictionaryBatch) : undefined;
  const header = dictionary?.data ?? (message.header() as RecordBatchHeader);
  const fields = dictionary === undefined ? schema.fields : [dictionaryField(schema, dictionary.id)];
  const body = walked.bytes.subarray(walked.bodyOffset, walked.bodyOffset + message.bodyLength);
  const pieces = header.buffers.map((region, i) => {
    const { offset, length } = region;
    if (!(Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0 && offset + length <= body.byteLength)) {
      throw new IpcStreamError('invalid', `buffer ${i} (${length} bytes at ${offset}) lies outside the ${body.byteLength}-byte message body`);
    }
    return body.subarray(offset, offset + length);
  });
  const layout = { length: header.length, nodes: header.nodes, variadicBufferCounts: header.variadicBufferCounts ?? [] };
  if (header.compression === null) {
    checkBatchLayout(fields, { ...layout, sizes: pieces.map((p) => p.byteLength) }, pieces);
    return walked.bytes;
  }
  const codec = codecFor(header.compression.type);
  const frames = pieces.map(framedBuffer);
  const sizes = frames.map((f) => f.declared ?? f.bytes.byteLength);
  // Declared sizes first: a lying header fails here, before anything is decompressed.
  checkBatchLayout(fields, { ...layout, sizes });
  const declared = frames.reduce((sum, f) => sum + (f.declared ?? 0), 0);
  if (budget.usedBytes + declared > budget.maxBytes) {
    throw new IpcStreamError('oversized', `its buffers declare ${budget.usedBytes + declared} decompressed bytes, over the limit of ${budget.maxBytes}`);
  }
  const buffers = frames.map((frame, i) => (frame.declared === undefined ? frame.bytes : decompressed(codec, frame.bytes, frame.declared, i, budget)));
  checkBatchLayout(fields, { ...layout, sizes }, buffers);
  return uncompressedMessage(header, dictionary, buffers);
}

/**
 * A whole stream or file from outside, walked (stream-walk.ts, file-walk.ts):
 * every batch checked, then read by arrow-js. Uncompressed columns stay
 * views of the walked bytes.
 * @throws as {@link checkedBatchMessage}
 */
export function checkedTable(outline: StreamOutline, budget: DecompressionBudget): Table {
  const messages = outline.messages.map((m) => (m.kind === 'schema' ? m.bytes : checkedBatchMessage(outline.schema, m, budget)));
  const batches = RecordBatchReader.from(messages).readAll();
  // The batches carry the reader's schema object; the outline's is only needed when there are none.
  return batches.length > 0 ? new Table(batches) : new Table(outline.schema);
}

/** The codec of a compressed batch. @throws S2SPError `S2SP_ERR_CODEC_UNAVAILABLE` */
function codecFor(type: CompressionType): IpcBufferCodec {
  const ours = ipcCodecOfCompressionType(type);
  if (ours === undefined) throw new S2SPError('S2SP_ERR_CODEC_UNAVAILABLE', { problem: 'codecSent', codec: CompressionType[type] ?? `codec ${type}` });
  if (!ipcCodecAvailable(ours)) throw new S2SPError('S2SP_ERR_CODEC_UNAVAILABLE', { problem: 'sentMissing', codec: ours });
  return ipcCodec(ours);
}

/**
 * One body buffer of a compressed batch: `int64 uncompressed length | frame`,
 * or `int64 -1 | raw bytes` (declared undefined), or empty.
 */
function framedBuffer(piece: Uint8Array, index: number): { declared?: number; bytes: Uint8Array } {
  if (piece.byteLength === 0) return { bytes: piece };
  if (piece.byteLength < PREFIX_BYTES)
    throw new IpcStreamError('invalid', `compressed buffer ${index} is ${piece.byteLength} bytes, too short for its length prefix`);
  const prefix = new DataView(piece.buffer, piece.byteOffset, PREFIX_BYTES).getBigInt64(0, true);
  const bytes = piece.subarray(PREFIX_BYTES);
  if (prefix === NOT_COMPRESSED) return { bytes };
  if (prefix < 0n || prefix > BigInt(Number.MAX_SAFE_INTEGER))
    throw new IpcStreamError('invalid', `compressed buffer ${index} declares ${prefix} uncompressed bytes`);
  return { declared: Number(prefix), bytes };
}

/** Decompresses one frame within the budget; its output must be exactly the declared length. */
function decompressed(codec: IpcBufferCodec, frame: Uint8Array, declared: number, index: number, budget: DecompressionBudget): Uint8Array {
  let out: Uint8Array | undefined;
  try {
    out = codec.decompress(frame, budget.maxBytes - budget.usedBytes);
  } catch (error) {
    throw new IpcStreamError('invalid', `compressed buffer ${index} does not decompress: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  if (out === undefined || out.byteLength !== declared) {
    throw new IpcStreamError(
      'invalid',
      `compressed buffer ${index} does not decompress to its declared ${declared} bytes` +
        (out === undefined ? ` within the ${budget.maxBytes - budget.usedBytes} bytes left of the limit` : ` (it gives ${out.byteLength})`),
    );
  }
  budget.usedBytes += declared;
  return out;
}

/** The batch as an uncompressed message: the same nodes, the buffers laid out one after another, each padded to 8. */
function uncompressedMessage(header: RecordBatchHeader, dictionary: DictionaryBatch | undefined, buffers: readonly Uint8Array[]): Uint8Array {
  const regions: BufferRegion[] = [];
  let bodyLength = 0;
  for (const buffer of buffers) {
    regions.push(new BufferRegion(bodyLength, buffer.byteLength));
    bodyLength += (buffer.byteLength + 7) & ~7;
  }
  const data = new RecordBatchHeader(header.length, header.nodes, regions, null, header.variadicBufferCounts);
  const metadata = framedMetadata(Message.from(dictionary === undefined ? data : new DictionaryBatch(data, dictionary.id, dictionary.isDelta), bodyLength));
  const out = new Uint8Array(metadata.byteLength + bodyLength);
  out.set(metadata);
  buffers.forEach((buffer, i) => out.set(buffer, metadata.byteLength + regions[i].offset));
  return out;
}

/** The field a dictionary batch fills: the dictionary's value type, named after the column that uses it. */
function dictionaryField(schema: Schema, id: number): Field {
  const type = schema.dictionaries.get(id);
  if (type === undefined) throw new IpcStreamError('invalid', `a dictionary batch has id ${id}, which no column of the schema uses`);
  const column = schema.fields.find((f) => DataType.isDictionary(f.type) && f.type.id === id);
  return new Field(column?.name ?? `dictionary ${id}`, type, true);
}
