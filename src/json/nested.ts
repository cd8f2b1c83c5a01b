/**
 * Lists, structs, maps, unions and dictionaries in JSON, each type's writer
 * beside its reader, both through the codecs of their children (`codecOf`,
 * column-codec.ts), so every type nests in every other. A map is a list of
 * `[key, value]` pairs: keys keep their type and order, duplicates survive.
 */
import type { Data, FixedSizeList, Map_, Struct, Union } from 'apache-arrow';
import type { ByteWriter } from './byte-writer.js';
import { CLOSE_BRACE, CLOSE_BRACKET, COMMA, OPEN_BRACKET } from './bytes.js';
import { childField, dictionaryLocator, offsetReader, unionLocator } from './column-access.js';
import type { CodecMaker, JsonCodec, JsonWriter, ValueReader } from './json-codec.js';

export const listCodec: CodecMaker = (field, data, codecOf) => {
  const offset = offsetReader(data);
  const child = codecOf(childField(field, data, 0), data.children[0]);
  return {
    write: (w, i) => writeRange(w, child.write, offset(i), offset(i + 1)),
    read: (i) => readRange(child.read, offset(i), offset(i + 1)),
  };
};

export const fixedSizeListCodec: CodecMaker = (field, data, codecOf) => {
  const size = (data.type as FixedSizeList).listSize;
  const child = codecOf(childField(field, data, 0), data.children[0]);
  return {
    write: (w, i) => writeRange(w, child.write, i * size, (i + 1) * size),
    read: (i) => readRange(child.read, i * size, (i + 1) * size),
  };
};

export const structCodec: CodecMaker = (_field, data, codecOf) => {
  const fields = (data.type as Struct).children;
  const names = fields.map((f) => f.name);
  const keys = fields.map((f, c) => Buffer.from((c === 0 ? '{' : ',') + JSON.stringify(f.name) + ':'));
  const children = data.children.map((child, c) => codecOf(fields[c], child));
  const read = (i: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let c = 0; c < children.length; c++) setOwn(out, names[c], children[c].read(i));
    return out;
  };
  if (children.length === 0) return { write: (w) => w.ascii('{}'), read };
  const write: JsonWriter = (w, i) => {
    for (let c = 0; c < children.length; c++) {
      w.bytes(keys[c]);
      children[c].write(w, i);
    }
    w.ensure(1);
    w.buf[w.pos++] = CLOSE_BRACE;
  };
  return { write, read };
};

export const mapCodec: CodecMaker = (_field, data, codecOf) => {
  const offset = offsetReader(data);
  const entries = data.children[0];
  const entriesType = (data.type as Map_).children[0].type as Struct;
  const key = codecOf(entriesType.children[0], entries.children[0]);
  const value = codecOf(entriesType.children[1], entries.children[1]);
  const write: JsonWriter = (w, i) => {
    const start = offset(i);
    const end = offset(i + 1);
    w.ensure(1);
    w.buf[w.pos++] = OPEN_BRACKET;
    for (let j = start; j < end; j++) {
      w.ensure(2);
      if (j > start) w.buf[w.pos++] = COMMA;
      w.buf[w.pos++] = OPEN_BRACKET;
      key.write(w, j);
      w.ensure(1);
      w.buf[w.pos++] = COMMA;
      value.write(w, j);
      w.ensure(1);
      w.buf[w.pos++] = CLOSE_BRACKET;
    }
    w.ensure(1);
    w.buf[w.pos++] = CLOSE_BRACKET;
  };
  const read: ValueReader = (i) => {
    const out: unknown[][] = [];
    for (let j = offset(i); j < offset(i + 1); j++) out.push([key.read(j), value.read(j)]);
    return out;
  };
  return { write, read };
};

export const unionCodec: CodecMaker = (_field, data, codecOf) => {
  const where = unionLocator(data);
  const fields = (data.type as Union).children;
  const children = data.children.map((child, c) => codecOf(fields[c], child));
  return {
    write: (w, i) => children[where.child(i)].write(w, where.index(i)),
    read: (i) => children[where.child(i)].read(where.index(i)),
  };
};

export const dictionaryCodec: CodecMaker = (field, data, codecOf) => {
  const valueField = childField(field, data, -1);
  const dictionary = dictionaryLocator(data);
  const codecs: JsonCodec[] = dictionary.chunks.map((chunk: Data) => codecOf(valueField, chunk));
  return {
    write: (w, i) => {
      const c = dictionary.chunkOf(i);
      codecs[c].write(w, dictionary.indexIn(c, i));
    },
    read: (i) => {
      const c = dictionary.chunkOf(i);
      return codecs[c].read(dictionary.indexIn(c, i));
    },
  };
};

function writeRange(w: ByteWriter, child: JsonWriter, start: number, end: number): void {
  w.ensure(1);
  w.buf[w.pos++] = OPEN_BRACKET;
  for (let j = start; j < end; j++) {
    if (j > start) {
      w.ensure(1);
      w.buf[w.pos++] = COMMA;
    }
    child(w, j);
  }
  w.ensure(1);
  w.buf[w.pos++] = CLOSE_BRACKET;
}

function readRange(child: ValueReader, start: number, end: number): unknown[] {
  const out = new Array<unknown>(end - start);
  for (let j = start; j < end; j++) out[j - start] = child(j);
  return out;
}

/** Sets `key` as an own property: a struct field named `__proto__` must not set the prototype. */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
