/**
 * Walks an Arrow IPC file through its footer, the way a file reader finds
 * its batches, and hands back the same outline a stream walk gives
 * (stream-walk.ts), so checked-batch.ts reads files and streams alike and
 * arrow-js reads exactly the messages that were checked.
 *
 * Byte layout (Arrow columnar format, "IPC File Format"):
 *
 *   file  := "ARROW1" 00 00 | stream messages | footer | int32 footer length | "ARROW1"
 *   block := offset, metadata length (prefix and padding included), body length
 */
import { Message, type DictionaryBatch } from 'apache-arrow/ipc/metadata/message';
import { Footer, type FileBlock } from 'apache-arrow/ipc/metadata/file';
import { CONTINUATION } from '../../protocol/arrow-framing.js';
import { schemaMessage } from '../encode/message.js';
import { IpcStreamError, type StreamOutline, type WalkedMessage } from './stream-walk.js';

/** Magic (6 bytes) and the footer length (4) at the end of a file. */
const TRAILER_BYTES = 10;
/** Magic and padding at the start of a file. */
const HEADER_BYTES = 8;

/**
 * The outline of an Arrow IPC file whose magic at both ends was checked:
 * its footer's schema and the messages its footer's blocks point at,
 * dictionaries first.
 * @throws IpcStreamError `malformed` when the footer or a block does not lie within the file or is not Arrow
 */
export function outlineIpcFile(bytes: Uint8Array): StreamOutline {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerEnd = bytes.byteLength - TRAILER_BYTES;
  const footerLength = footerEnd >= HEADER_BYTES ? view.getInt32(footerEnd, true) : -1;
  if (footerLength <= 0 || footerEnd - footerLength < HEADER_BYTES) throw malformed('its footer length does not fit the file');
  let footer: InstanceType<typeof Footer>;
  try {
    footer = Footer.decode(bytes.subarray(footerEnd - footerLength, footerEnd));
  } catch (error) {
    throw malformed('its footer is unreadable', error);
  }
  const limit = footerEnd - footerLength;
  const schema = footer.schema;
  const outline: StreamOutline = { schema, recordBatches: 0, rows: 0, codecs: new Set(), messages: [] };
  const schemaBytes = schemaMessage(schema);
  outline.messages.push({
    bytes: schemaBytes,
    index: 0,
    kind: 'schema',
    rows: 0,
    message: Message.decode(schemaBytes.subarray(8)),
    bodyOffset: schemaBytes.byteLength,
  });
  for (const block of footer.dictionaryBatches()) outline.messages.push(blockMessage(bytes, view, block, limit, outline, 'dictionary-batch'));
  for (const block of footer.recordBatches()) outline.messages.push(blockMessage(bytes, view, block, limit, outline, 'record-batch'));
  return outline;
}

function blockMessage(
  bytes: Uint8Array,
  view: DataView,
  block: FileBlock,
  limit: number,
  outline: StreamOutline,
  kind: 'dictionary-batch' | 'record-batch',
): WalkedMessage {
  const index = outline.messages.length;
  const { offset, metaDataLength, bodyLength } = block;
  const end = offset + metaDataLength + bodyLength;
  if (![offset, metaDataLength, bodyLength].every((n) => Number.isSafeInteger(n) && n >= 0) || offset < HEADER_BYTES || metaDataLength < 8 || end > limit) {
    throw malformed(`block ${index} does not lie within the file's messages`);
  }
  const prefix = view.getInt32(offset, true) === CONTINUATION ? 8 : 4;
  const metadataLength = view.getInt32(offset + prefix - 4, true);
  if (metadataLength <= 0 || prefix + metadataLength > metaDataLength) throw malformed(`block ${index} does not frame a message`);
  let message: Message;
  try {
    message = Message.decode(bytes.subarray(offset + prefix, offset + prefix + metadataLength));
  } catch (error) {
    throw malformed(`block ${index} is not an Arrow IPC message`, error);
  }
  const isKind = kind === 'record-batch' ? message.isRecordBatch() : message.isDictionaryBatch();
  if (!isKind || message.bodyLength !== bodyLength) throw malformed(`block ${index} is not the ${kind} its footer says`);
  let rows = 0;
  try {
    const header = message.isRecordBatch() ? message.header() : (message.header() as DictionaryBatch).data;
    if (kind === 'record-batch') {
      rows = header.length;
      outline.recordBatches++;
      outline.rows += rows;
    }
    if (header.compression !== null) outline.codecs.add(header.compression.type);
  } catch (error) {
    throw malformed(`block ${index} has an unreadable header`, error);
  }
  return { bytes: bytes.subarray(offset, end), index, kind, rows, message, bodyOffset: metaDataLength };
}

function malformed(detail: string, cause?: unknown): IpcStreamError {
  return new IpcStreamError('malformed', `it is not a complete Arrow IPC file: ${detail}`, cause === undefined ? undefined : { cause });
}
