/**
 * Walks the framing of an Arrow IPC stream without decoding any column, to
 * prove the stream is complete before its rows are used (DESIGN.md,
 * "Truncation"). arrow-js's reader stops quietly at a message boundary, so a
 * stream cut after its second batch reads as a shorter table; this walk
 * insists on the end-of-stream marker, at exactly the end of the bytes.
 *
 * Byte layout (Arrow columnar format, "Encapsulated message format"):
 *
 *   message := 0xFFFFFFFF | int32 metadata length | flatbuffer Message | body
 *   legacy  :=              int32 metadata length | flatbuffer Message | body  (before 0.15)
 *   stream  := schema message, dictionary/record batch messages...,
 *              0xFFFFFFFF 0x00000000   (legacy: 0x00000000)
 *
 * The metadata length counts the flatbuffer and its padding; the body length
 * comes from the flatbuffer (`Message.bodyLength`). All integers little-endian.
 */
import { Message, MessageHeader, type CompressionType, type Schema } from 'apache-arrow';
import { CONTINUATION } from '../../protocol/arrow-framing.js';

/**
 * Why a stream cannot be used. `truncated`: it stops early (mid-message or
 * on a message boundary without the end marker); `malformed`: it is not an
 * Arrow IPC stream, or has bytes after its end; `invalid`: a batch's buffers
 * do not hold what its header declares (batch-validation.ts), `column`
 * names the field; `oversized`: its buffers decompress past the reader's
 * budget (checked-batch.ts). Callers map it to their own error (a
 * consumer's invalid response, the CLI's unreadable input).
 */
export class IpcStreamError extends Error {
  readonly kind: IpcStreamErrorKind;
  /** The column (field path, dot-joined) a batch check failed on. */
  readonly column: string | undefined;

  constructor(kind: IpcStreamErrorKind, message: string, options?: { cause?: unknown; column?: string }) {
    super(message, options);
    this.name = 'IpcStreamError';
    this.kind = kind;
    this.column = options?.column;
  }
}

/** The kinds of {@link IpcStreamError}. */
export type IpcStreamErrorKind = 'truncated' | 'malformed' | 'invalid' | 'oversized';

/** What the walk learned about a complete stream. */
export interface StreamOutline {
  /** The schema from the first message. */
  schema: Schema;
  /** Record batch messages in the stream. */
  recordBatches: number;
  /** Rows over all record batches, as their headers declare them. */
  rows: number;
  /** Buffer codecs used by any (record or dictionary) batch; empty when uncompressed. */
  codecs: Set<CompressionType>;
  /** Every message, schema first, as views of the walked bytes. */
  messages: WalkedMessage[];
}

/**
 * Checks that `bytes` is one whole Arrow IPC stream: a schema message first,
 * then only batch messages, each complete, then the end-of-stream marker as
 * the last bytes.
 *
 * @param bytes the complete response body
 * @returns the schema, batch count, declared rows and codecs of the stream
 * @throws IpcStreamError when the stream is cut short
 *   (mid-message or at a message boundary), has bytes after its end marker, or is
 *   not an Arrow IPC stream at all
 */
export function outlineIpcStream(bytes: Uint8Array): StreamOutline {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  const tally: Tally = { recordBatches: 0, rows: 0, codecs: new Set(), messages: [] };
  let pos = 0;
  let index = 0;
  for (;;) {
    if (pos === end) throw cutShort(index === 0 ? 'is empty' : `ends after ${index} messages without the end-of-stream marker`);
    if (end - pos < 4) throw cutShort(`ends inside the prefix of message ${index}`);
    let prefix = 4;
    let metadataLength = view.getInt32(pos, true);
    if (metadataLength === CONTINUATION) {
      if (end - pos < 8) throw cutShort(`ends inside the prefix of message ${index}`);
      prefix = 8;
      metadataLength = view.getInt32(pos + 4, true);
    }
    if (metadataLength === 0) {
      // The end-of-stream marker; anything after it is not part of this stream.
      if (tally.schema === undefined) throw notArrow('it ends before its schema message');
      if (pos + prefix !== end) throw notArrow(`${end - pos - prefix} bytes follow the end-of-stream marker`);
      return { ...tally, schema: tally.schema };
    }
    if (metadataLength < 0) throw notArrow(`message ${index} declares a negative metadata length`);
    const metadataEnd = pos + prefix + metadataLength;
    if (metadataEnd > end) {
      // Garbage usually lands here: its first four bytes read as a huge legacy
      // length. A stream cut inside its schema still starts with the marker.
      if (index === 0 && prefix === 4) throw notArrow('it does not start with an Arrow IPC message');
      throw cutShort(`ends inside the metadata of message ${index}`);
    }
    const { message, noted } = headerOf(bytes.subarray(pos + prefix, metadataEnd), index, tally);
    const messageEnd = metadataEnd + message.bodyLength;
    if (messageEnd > end) throw cutShort(`ends inside the body of message ${index}`);
    tally.messages.push({ ...noted, bytes: bytes.subarray(pos, messageEnd), bodyOffset: prefix + metadataLength });
    pos = messageEnd;
    index++;
  }
}

/**
 * Decodes message `index`'s metadata, checks its declared body length and
 * its kind against its place, and records it in the tally; what the walk
 * then knows of it, but for its bytes.
 */
function headerOf(metadata: Uint8Array, index: number, tally: Tally): { message: Message; noted: Omit<WalkedMessage, 'bytes' | 'bodyOffset'> } {
  let message: Message;
  try {
    message = Message.decode(metadata);
  } catch (error) {
    throw notArrow(`message ${index} is not an Arrow IPC message`, error);
  }
  const { bodyLength } = message;
  if (!Number.isSafeInteger(bodyLength) || bodyLength < 0) throw notArrow(`message ${index} declares a body length of ${bodyLength}`);
  const rowsBefore = tally.rows;
  const codec = noteMessage(message, index, tally);
  const kind = index === 0 ? 'schema' : message.isDictionaryBatch() ? 'dictionary-batch' : 'record-batch';
  return { message, noted: { index, kind, codec, rows: tally.rows - rowsBefore, message } };
}

/** The outline while it is being walked: no schema until the first message. */
type Tally = Omit<StreamOutline, 'schema'> & { schema?: Schema };

/**
 * Checks the message's kind against its place; records the schema, batch
 * rows and codecs. Returns the message's buffer codec, if it has one.
 */
function noteMessage(message: Message, index: number, outline: Tally): CompressionType | undefined {
  const type = message.headerType;
  if (index === 0) {
    if (!message.isSchema()) throw notArrow('it does not start with a schema message');
    try {
      outline.schema = message.header();
    } catch (error) {
      throw notArrow('its schema message is unreadable', error);
    }
    return undefined;
  }
  try {
    if (message.isRecordBatch()) {
      const header = message.header();
      outline.recordBatches++;
      outline.rows += header.length;
      if (header.compression !== null) outline.codecs.add(header.compression.type);
      return header.compression?.type;
    }
    if (message.isDictionaryBatch()) {
      const { compression } = message.header().data;
      if (compression !== null) outline.codecs.add(compression.type);
      return compression?.type;
    }
  } catch (error) {
    throw notArrow(`message ${index} has an unreadable header`, error);
  }
  throw notArrow(`message ${index} is a ${MessageHeader[type] ?? `type ${type}`} message where a batch belongs`);
}

/** One message of a stream walked as it arrives. */
export interface WalkedMessage {
  /** The message as framed on the wire (prefix, metadata, body), in a buffer of its own: 8-byte aligned. */
  bytes: Uint8Array;
  /** 0 for the schema, then one per batch. */
  index: number;
  /** What it carries. */
  kind: 'schema' | 'record-batch' | 'dictionary-batch';
  /** Its buffer codec, for a compressed (record or dictionary) batch. */
  codec?: CompressionType;
  /** Rows of a record batch, as its header declares them (0 for other messages). */
  rows: number;
  /** The decoded metadata. */
  message: Message;
  /** Where the body starts in `bytes` (after the prefix and metadata). */
  bodyOffset: number;
}

/**
 * A legacy-framed first message (no continuation marker) declaring more
 * metadata than this is not Arrow: garbage read as a length would otherwise
 * make the walk wait for gigabytes that never come.
 */
const MAX_LEGACY_FIRST_METADATA = 16 * 1024 * 1024;

/**
 * Walks an Arrow IPC stream as its bytes arrive (an HTTP body), with the
 * same checks as {@link outlineIpcStream}: yields each message once it is
 * complete, schema first, and returns the outline only after the
 * end-of-stream marker and nothing after it. A source that ends anywhere
 * else throws, so a cut transfer never passes for a shorter one.
 *
 * @param chunks the stream's bytes, in pieces of any size
 * @throws IpcStreamError as {@link outlineIpcStream} does
 */
export async function* walkIpcStream(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<WalkedMessage, StreamOutline> {
  const queue = new ByteQueue(chunks[Symbol.asyncIterator]());
  // The messages go to the caller one by one; the outline keeps none of them.
  const tally: Tally = { recordBatches: 0, rows: 0, codecs: new Set(), messages: [] };
  for (let index = 0; ; index++) {
    if (!(await queue.fill(4))) {
      if (queue.length > 0) throw cutShort(`ends inside the prefix of message ${index}`);
      throw cutShort(index === 0 ? 'is empty' : `ends after ${index} messages without the end-of-stream marker`);
    }
    let prefix = 4;
    let metadataLength = queue.int32(0);
    if (metadataLength === CONTINUATION) {
      if (!(await queue.fill(8))) throw cutShort(`ends inside the prefix of message ${index}`);
      prefix = 8;
      metadataLength = queue.int32(4);
    }
    if (metadataLength === 0) {
      if (tally.schema === undefined) throw notArrow('it ends before its schema message');
      queue.skip(prefix);
      if (queue.length > 0 || (await queue.fill(1))) throw notArrow('bytes follow the end-of-stream marker');
      return { ...tally, schema: tally.schema };
    }
    if (metadataLength < 0) throw notArrow(`message ${index} declares a negative metadata length`);
    if (index === 0 && prefix === 4 && metadataLength > MAX_LEGACY_FIRST_METADATA) throw notArrow('it does not start with an Arrow IPC message');
    if (!(await queue.fill(prefix + metadataLength))) {
      if (index === 0 && prefix === 4) throw notArrow('it does not start with an Arrow IPC message');
      throw cutShort(`ends inside the metadata of message ${index}`);
    }
    const { message, noted } = headerOf(queue.copy(prefix, metadataLength), index, tally);
    const total = prefix + metadataLength + message.bodyLength;
    if (!(await queue.fill(total))) throw cutShort(`ends inside the body of message ${index}`);
    const bytes = new Uint8Array(total);
    queue.take(bytes);
    yield { ...noted, bytes, bodyOffset: prefix + metadataLength };
  }
}

/** Bytes from an async source, read as needed and consumed from the front. */
class ByteQueue {
  readonly #source: AsyncIterator<Uint8Array>;
  readonly #chunks: Uint8Array[] = [];
  /** Bytes of #chunks[0] already consumed. */
  #offset = 0;
  #length = 0;
  #done = false;

  constructor(source: AsyncIterator<Uint8Array>) {
    this.#source = source;
  }

  /** Unconsumed bytes held. */
  get length(): number {
    return this.#length;
  }

  /** Reads until `n` bytes are held; false when the source ended first. */
  async fill(n: number): Promise<boolean> {
    while (this.#length < n) {
      if (this.#done) return false;
      const next = await this.#source.next();
      if (next.done === true) {
        this.#done = true;
        return false;
      }
      if (next.value.byteLength === 0) continue;
      this.#chunks.push(next.value);
      this.#length += next.value.byteLength;
    }
    return true;
  }

  /** The little-endian int32 at `at` (bytes held). */
  int32(at: number): number {
    const four = this.copy(at, 4);
    return new DataView(four.buffer, four.byteOffset, 4).getInt32(0, true);
  }

  /** A copy of `length` held bytes from `at`, not consumed. */
  copy(at: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    this.#read(at, out, false);
    return out;
  }

  /** Consumes `out.byteLength` bytes into `out`. */
  take(out: Uint8Array): void {
    this.#read(0, out, true);
  }

  /** Consumes `n` bytes. */
  skip(n: number): void {
    this.#read(0, new Uint8Array(n), true);
  }

  #read(at: number, out: Uint8Array, consume: boolean): void {
    let skip = at + this.#offset;
    let written = 0;
    // Bounded by the chunks held; the caller filled enough of them.
    for (let chunk = 0; written < out.byteLength; chunk++) {
      const piece = this.#chunks[chunk];
      if (skip >= piece.byteLength) {
        skip -= piece.byteLength;
        continue;
      }
      const n = Math.min(piece.byteLength - skip, out.byteLength - written);
      out.set(piece.subarray(skip, skip + n), written);
      written += n;
      skip = 0;
    }
    if (consume) this.#consume(at + out.byteLength);
  }

  /** Drops the first `n` held bytes. */
  #consume(n: number): void {
    this.#length -= n;
    let left = n + this.#offset;
    while (this.#chunks.length > 0 && left >= this.#chunks[0].byteLength) {
      left -= this.#chunks[0].byteLength;
      this.#chunks.shift();
    }
    this.#offset = left;
  }
}

function cutShort(detail: string): IpcStreamError {
  return new IpcStreamError('truncated', `the Arrow stream ${detail}`);
}

function notArrow(detail: string, cause?: unknown): IpcStreamError {
  return new IpcStreamError('malformed', `it is not a complete Arrow IPC stream: ${detail}`, cause === undefined ? undefined : { cause });
}
