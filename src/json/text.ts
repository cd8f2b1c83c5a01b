/**
 * Strings and binaries in JSON, each type's writer beside its reader:
 * strings copied as UTF-8 bytes, escaped only where JSON needs it; a
 * JSON-text column (json-text-field.ts) written verbatim and read by the
 * exact reader; binaries as base64 strings.
 */
import { Type, type Data, type Field } from 'apache-arrow';
import type { ByteWriter } from './byte-writer.js';
import { BACKSLASH, QUOTE, ZERO } from './bytes.js';
import { bytesReader } from './column-access.js';
import type { JsonCodec } from './json-codec.js';
import { parseJsonExact } from './exact-json.js';
import { isJsonField } from './json-text-field.js';

const HEX = '0123456789abcdef';

export function textCodec(field: Field, data: Data): JsonCodec {
  const text = textReader(data);
  const json = isJsonField(field);
  if (data.typeId === Type.Utf8) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    return {
      write: json ? (w, i) => w.bytes(bytes, offsets[i], offsets[i + 1]) : (w, i) => writeJsonString(w, bytes, offsets[i], offsets[i + 1]),
      read: json ? (i) => parseJsonExact(text(i)) : text,
    };
  }
  const read = bytesReader(data);
  return {
    write: json
      ? (w, i) => w.bytes(read(i))
      : (w, i) => {
          const bytes = read(i);
          writeJsonString(w, bytes, 0, bytes.length);
        },
    read: json ? (i) => parseJsonExact(text(i)) : text,
  };
}

export function binaryCodec(_field: Field, data: Data): JsonCodec {
  const bytesAt = bytesReader(data);
  const read = (i: number): string => {
    const bytes = bytesAt(i);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  };
  return { write: (w, i) => w.quotedAscii(read(i)), read };
}

/** Decodes string `i` of a Utf8 chunk without copying the value buffer first. */
function textReader(data: Data): (i: number) => string {
  if (data.typeId === Type.Utf8) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return (i) => buffer.toString('utf8', offsets[i], offsets[i + 1]);
  }
  const read = bytesReader(data);
  return (i) => {
    const bytes = read(i);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  };
}

/**
 * Appends UTF-8 bytes `[start, end)` as a JSON string. Bytes >= 0x80 are
 * copied as is (JSON allows raw UTF-8); only quote, backslash and control
 * characters are escaped, as `JSON.stringify` escapes them.
 */
export function writeJsonString(w: ByteWriter, src: Uint8Array, start: number, end: number): void {
  w.ensure((end - start) * 6 + 2);
  const buf = w.buf;
  let pos = w.pos;
  buf[pos++] = QUOTE;
  for (let k = start; k < end; k++) {
    const b = src[k];
    if (b >= 0x20 && b !== QUOTE && b !== BACKSLASH) {
      buf[pos++] = b;
      continue;
    }
    buf[pos++] = BACKSLASH;
    switch (b) {
      case QUOTE:
        buf[pos++] = QUOTE;
        break;
      case BACKSLASH:
        buf[pos++] = BACKSLASH;
        break;
      case 0x08:
        buf[pos++] = 0x62;
        break; // \b
      case 0x0c:
        buf[pos++] = 0x66;
        break; // \f
      case 0x0a:
        buf[pos++] = 0x6e;
        break; // \n
      case 0x0d:
        buf[pos++] = 0x72;
        break; // \r
      case 0x09:
        buf[pos++] = 0x74;
        break; // \t
      default:
        buf[pos++] = 0x75; // \u00XX
        buf[pos++] = ZERO;
        buf[pos++] = ZERO;
        buf[pos++] = HEX.charCodeAt(b >> 4);
        buf[pos++] = HEX.charCodeAt(b & 15);
    }
  }
  buf[pos++] = QUOTE;
  w.pos = pos;
}
