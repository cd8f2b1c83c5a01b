/**
 * Decodes the data plane's JSON answer (SPEC 3.2) as its bytes arrive:
 *
 *   {"body":[{"_row_id":0,...},...],"total_rows":k,"columns_returned":[...]}
 *
 * A byte scanner follows the document's outer shape (the root object, its
 * keys, the `body` array) and cuts the body at row boundaries, respecting
 * strings and escapes; each run of whole rows (about FLUSH_BYTES) is decoded
 * by the exact reader and its values go into columns at once (RowColumns).
 * So no string of the whole body is ever built, the row objects die young,
 * and decoding overlaps the transfer; the bytes held at any time are one run.
 *
 * Scanning every byte in JavaScript cost as much as decoding, so the rows
 * of a run are not scanned: the run is cut at its last `}` that ends a
 * whole number of rows, which the decoding proves (JSON is read the same
 * from the same start, so a prefix that decodes as rows ends on a row
 * boundary of the document). Only when no such `}` is found near the end
 * (a row larger than a run, a syntax error) does the byte scanner cut it.
 *
 * The result, and the error for a body that is not ours, are those of
 * bodyFromJson over the whole body (body-reader.ts, which stays the reference):
 * any syntax error anywhere is `notJson`, and otherwise the checks come in
 * its order (noBody, the first bad row, total_rows, columns_returned). A
 * document whose root is not an object is buffered and handed to
 * bodyFromJson whole: it is not ours, and that keeps its error exact.
 */
import { S2SPError, isS2SPError } from '../errors.js';
import { BODY_KEY, COLUMNS_RETURNED_KEY, TOTAL_ROWS_KEY } from '../protocol/json-body-bytes.js';
import { ROW_ID, isRowId } from '../protocol/row-id.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE, isSpace } from './bytes.js';
import { parseJsonExact } from './exact-json.js';
import { exactFromParsed, parseJsonExactFast } from './exact-literals.js';
import { RowColumns } from '../table/row-columns.js';
import { bodyFromJson } from './body-reader.js';
import { responseInvalid as invalid, type DecodedBody } from './decoded-body.js';

/** Whole rows gathered before they are decoded: large enough to amortise a parse, small against the body. */
const FLUSH_BYTES = 1 << 20;
/** Row ids below this are checked for duplicates in a bitmap (at most 8 MiB); larger ones in a Set. */
const BITMAP_IDS = 1 << 26;
/** `}` tried from a run's end before the byte scanner cuts it: a partial row ends in few of them. */
const CUT_ATTEMPTS = 4;
/** `{` looked at from a run's end for a row join (`}`, `,`, `{` with any spacing) before the last `}`s are tried. */
const JOIN_ATTEMPTS = 64;

/** Where the scanner is in the document. */
const At = {
  /** Before the root: whitespace, then `{`. */
  Start: 0,
  /** After `{`: a key or `}`. */
  FirstKey: 1,
  /** After `,` in the root: a key. */
  Key: 2,
  /** Inside a key string. */
  InKey: 3,
  /** After a key: `:`. */
  Colon: 4,
  /** After `:`: a value. */
  Value: 5,
  /** Inside a value other than the body array (captured whole). */
  InValue: 6,
  /** After a root value: `,` or `}`. */
  AfterValue: 7,
  /** After `[` of the body: a row or `]`. */
  FirstRow: 8,
  /** After `,` in the body: a row. */
  Row: 9,
  /** Inside a row, scanned byte by byte. */
  InRow: 10,
  /** Inside the body from a row's start, bytes gathered unscanned. */
  Fast: 11,
  /** After a row: `,` or `]`. */
  AfterRow: 12,
  /** After the root's `}`: whitespace only. */
  Done: 13,
  /** The root is not an object: every byte kept for bodyFromJson. */
  NotOurs: 14,
} as const;
/** One of {@link At}. */
type At = (typeof At)[keyof typeof At];

/** A JSON body decoder fed chunk by chunk: {@link write} each chunk, then {@link end}. */
export class JsonBodyStream {
  readonly #runBytes: number;
  #at: At = At.Start;
  /** Bytes kept before the root `{` (whitespace), or all of them once it is not ours. */
  #kept: Buffer[] = [];

  // A value being scanned (a key, a root value, a row): nesting, string and escape state.
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** A scalar (number, literal) runs to the next delimiter rather than to a closing bracket. */
  #scalar = false;

  // Bytes of the key or root value in progress, from earlier chunks.
  #parts: Buffer[] = [];
  #key = '';

  // The body: a run of rows not yet decoded, from its first row's start.
  #bodyIsArray = false;
  #runParts: Buffer[] = [];
  #runActive = false;
  #runStart = 0;
  /** Absolute offset after the last whole row of the run, and where the row in progress began. */
  #wholeEnd = 0;
  #rowStart = 0;
  /** The byte scanner cuts the current run (no row boundary was found in it). */
  #slowRun = false;
  /** Absolute offset of the current chunk's first byte. */
  #offset = 0;
  /** Where the part of the current chunk that belongs to the key, root value or run in progress starts. */
  #partFrom = 0;

  #rows = new RowColumns();
  #rowIndex = 0;
  #rowError: S2SPError | undefined;
  #seenBits = new Uint8Array(0);
  #seenLarge = new Set<number>();

  #totalRows: unknown = undefined;
  #columnsReturned: unknown = undefined;
  /** The first syntax error; nothing is decoded after it. */
  #failed: S2SPError | undefined;

  /**
   * @param runBytes bytes of rows gathered before they are decoded (1 MiB;
   *   tests, which import this module directly, make it small to cut runs everywhere)
   */
  constructor(runBytes = FLUSH_BYTES) {
    this.#runBytes = runBytes;
  }

  /**
   * Takes the next chunk of the body.
   * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` (`notJson`) as soon as the text cannot be JSON
   */
  write(chunk: Buffer): void {
    if (this.#failed !== undefined) throw this.#failed;
    try {
      this.#scan(chunk);
    } catch (error) {
      this.#failed = answerError(error);
      throw this.#failed;
    } finally {
      this.#offset += chunk.length;
    }
  }

  /**
   * The decoded body, once every chunk was written.
   * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID` as bodyFromJson would for the whole body
   */
  end(): DecodedBody {
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#at === At.Start || this.#at === At.NotOurs) return bodyFromJson(Buffer.concat(this.#kept));
    if (this.#at === At.Fast) {
      // The rest of the body and of the document: the scanner finds where the body ends.
      const bytes = Buffer.concat(this.#runParts);
      this.#runParts = [];
      this.#runActive = false;
      this.#slowRun = true;
      this.#at = At.Row;
      try {
        this.#rescan(bytes, this.#runStart);
      } catch (error) {
        throw answerError(error);
      }
    }
    if (this.#at !== At.Done) throw invalid({ problem: 'notJson' }, new S2SPError('S2SP_ERR_JSON_SYNTAX', { problem: 'end' }));
    if (!this.#bodyIsArray) throw invalid({ problem: 'noBody' });
    if (this.#rowError !== undefined) throw this.#rowError;
    const totalRows = this.#totalRows;
    if (totalRows !== undefined && !(Number.isInteger(totalRows) && (totalRows as number) >= 0)) {
      throw invalid({ problem: 'badTotalRows' });
    }
    const columnsReturned = this.#columnsReturned;
    if (columnsReturned !== undefined && !(Array.isArray(columnsReturned) && columnsReturned.every((c) => typeof c === 'string'))) {
      throw invalid({ problem: 'badColumnsReturned' });
    }
    let table;
    try {
      table = this.#rows.finish();
    } catch (error) {
      if (isS2SPError(error, 'S2SP_ERR_TABLE_INVALID')) throw invalid({ problem: 'badRows', reason: (error as Error).message }, error);
      throw error;
    }
    return {
      table,
      totalRows: (totalRows as number | undefined) ?? this.#rows.count,
      columns: (columnsReturned as string[] | undefined) ?? table.schema.fields.map((f) => f.name),
    };
  }

  #scan(chunk: Buffer): void {
    // Until the root `{`, every byte is kept: a body of whitespace, or one that is not an object, goes to bodyFromJson.
    if (this.#at === At.Start || this.#at === At.NotOurs) this.#kept.push(chunk);
    const n = chunk.length;
    this.#partFrom = 0;
    for (let i = 0; i < n;) i = this.#step(chunk, i);
    // A key or root value goes on in the next chunk: keep its bytes (copied: they are few).
    if (this.#at === At.InKey || this.#at === At.InValue) this.#parts.push(Buffer.from(chunk.subarray(this.#partFrom)));
    if (this.#runActive) {
      this.#runParts.push(chunk.subarray(this.#partFrom));
      if (this.#at === At.Fast) {
        if (this.#offset + n - this.#runStart >= this.#runBytes) this.#flushFast();
      } else if (this.#wholeEnd - this.#runStart >= this.#runBytes) this.#flushRun(this.#at === At.InRow);
    }
  }

  /** Scans from `chunk[i]` in the current state; returns where to go on (the chunk's length: at its end). */
  #step(chunk: Buffer, i: number): number {
    switch (this.#at) {
      case At.InKey:
        return this.#inKey(chunk, i);
      case At.InValue:
        return this.#inRootValue(chunk, i);
      case At.InRow:
        return this.#inRow(chunk, i);
      case At.Fast:
      case At.NotOurs:
        return chunk.length;
    }
    const c = chunk[i];
    if (isSpace(c)) return i + 1;
    switch (this.#at) {
      case At.Start:
        return this.#root(c, i, chunk.length);
      case At.FirstKey:
      case At.Key:
        return this.#keyStart(c, i);
      case At.Colon:
        if (c !== COLON) return this.#syntax(c, i);
        this.#at = At.Value;
        return i + 1;
      case At.Value:
        return this.#valueStart(c, i);
      case At.AfterValue:
        if (c === COMMA) this.#at = At.Key;
        else if (c === CLOSE_BRACE) this.#at = At.Done;
        else return this.#syntax(c, i);
        return i + 1;
      case At.FirstRow:
      case At.Row:
        return this.#firstByteOfRow(chunk, c, i);
      case At.AfterRow:
        return this.#afterRow(chunk, c, i);
      default:
        return this.#syntax(c, i); // Done: whitespace only
    }
  }

  /** The root's first byte: `{`, or the body is not ours and bodyFromJson reads it whole to word the error. */
  #root(c: number, i: number, n: number): number {
    if (c !== OPEN_BRACE) {
      this.#at = At.NotOurs;
      return n;
    }
    this.#kept = [];
    this.#at = At.FirstKey;
    return i + 1;
  }

  /** A key's opening quote, or the `}` of an empty root. */
  #keyStart(c: number, i: number): number {
    if (c === QUOTE) {
      this.#at = At.InKey;
      this.#parts = [];
      this.#escaped = false;
      this.#partFrom = i;
      return i + 1;
    }
    if (c === CLOSE_BRACE && this.#at === At.FirstKey) {
      this.#at = At.Done;
      return i + 1;
    }
    return this.#syntax(c, i);
  }

  #inKey(chunk: Buffer, i: number): number {
    const end = this.#stringEnd(chunk, i);
    if (end < 0) return chunk.length;
    this.#parts.push(chunk.subarray(this.#partFrom, end));
    this.#key = JSON.parse(Buffer.concat(this.#parts).toString('utf8')) as string;
    this.#parts = [];
    this.#at = At.Colon;
    return end;
  }

  /** A root value's first byte: the body array is scanned row by row, any other value captured whole. */
  #valueStart(c: number, i: number): number {
    if (this.#key === BODY_KEY && c === OPEN_BRACKET) {
      // The last `body` wins, as in any JSON reader: an earlier one is forgotten.
      this.#startBody();
      this.#at = At.FirstRow;
      return i + 1;
    }
    this.#startValue(c);
    this.#parts = [];
    this.#partFrom = i;
    this.#at = At.InValue;
    return this.#scalar ? i : i + 1; // a scalar's first byte is read again by valueEnd
  }

  #inRootValue(chunk: Buffer, i: number): number {
    const end = this.#valueEnd(chunk, i);
    if (end < 0) return chunk.length;
    this.#parts.push(chunk.subarray(this.#partFrom, end));
    this.#rootValue(Buffer.concat(this.#parts).toString('utf8'));
    this.#parts = [];
    this.#at = At.AfterValue;
    return end;
  }

  /**
   * A row's first byte (or the `]` of an empty body). Outside a slow run the
   * rest of the chunk is gathered unscanned (Fast); in one, the row is scanned.
   */
  #firstByteOfRow(chunk: Buffer, c: number, i: number): number {
    if (c === CLOSE_BRACKET && this.#at === At.FirstRow) {
      this.#at = At.AfterValue;
      return i + 1;
    }
    if (c === CLOSE_BRACKET || c === COMMA || c === CLOSE_BRACE || c === COLON) return this.#syntax(c, i);
    this.#rowStart = this.#offset + i;
    if (!this.#slowRun) {
      // Rows the scanner was cutting (the tail of its last run): decode them, then go fast.
      if (this.#runActive) {
        this.#runParts.push(chunk.subarray(this.#partFrom, i));
        this.#flushRun(false);
      }
      this.#at = At.Fast;
      this.#runActive = true;
      this.#runStart = this.#rowStart;
      this.#partFrom = i;
      return chunk.length;
    }
    if (!this.#runActive) {
      this.#runActive = true;
      this.#runStart = this.#rowStart;
      this.#wholeEnd = this.#rowStart;
      this.#partFrom = i;
    }
    this.#startValue(c);
    this.#at = At.InRow;
    return this.#scalar ? i : i + 1;
  }

  #inRow(chunk: Buffer, i: number): number {
    const end = this.#valueEnd(chunk, i);
    if (end < 0) return chunk.length;
    this.#wholeEnd = this.#offset + end;
    this.#at = At.AfterRow;
    return end;
  }

  /** After a scanned row: `,` and the next row, or `]` and the body's end. */
  #afterRow(chunk: Buffer, c: number, i: number): number {
    if (c === COMMA) {
      this.#at = At.Row;
      return i + 1;
    }
    if (c !== CLOSE_BRACKET) return this.#syntax(c, i);
    if (this.#runActive) {
      this.#runParts.push(chunk.subarray(this.#partFrom, i));
      this.#flushRun(false);
    }
    this.#at = At.AfterValue;
    return i + 1;
  }

  #syntax(c: number, i: number): never {
    const position = this.#offset + i;
    throw invalid({ problem: 'notJson' }, new S2SPError('S2SP_ERR_JSON_SYNTAX', { problem: 'token', token: String.fromCharCode(c), position }));
  }

  /**
   * Decodes the run up to its last `}` that ends whole rows (a few are
   * tried, from the end), then scans what follows it: a separator, the next
   * row's start, maybe the body's end. Without one, the byte scanner cuts
   * the run.
   */
  #flushFast(): void {
    const bytes = Buffer.concat(this.#runParts);
    const start = this.#runStart;
    this.#runParts = [];
    this.#runActive = false;
    // First where a row ends and the next begins (any spacing), then the last few `}`.
    const join = lastRowJoin(bytes);
    let end = bytes.length;
    for (let attempt = join < 0 ? 1 : 0; attempt <= CUT_ATTEMPTS; attempt++) {
      end = attempt === 0 ? join : bytes.lastIndexOf(CLOSE_BRACE, end - 1);
      if (end < 0) break;
      const text = `[${bytes.toString('utf8', 0, end + 1)}]`;
      let parsed: unknown;
      try {
        // JSON.parse alone tells a boundary; a text only the exact reader takes (bare NaN) is left to the scanner.
        parsed = JSON.parse(text);
      } catch {
        if (attempt === 0) end = bytes.length;
        continue; // not a row boundary (or not JSON: the scanner will say so)
      }
      const rows = exactFromParsed(text, parsed) as unknown[];
      for (let r = 0; r < rows.length; r++) this.#row(rows[r]);
      this.#at = At.AfterRow;
      this.#rescan(bytes.subarray(end + 1), start + end + 1);
      return;
    }
    this.#slowRun = true;
    this.#at = At.Row;
    this.#rescan(bytes, start);
  }

  /** Scans bytes already received again, from absolute offset `at`. */
  #rescan(bytes: Buffer, at: number): void {
    const offset = this.#offset;
    const partFrom = this.#partFrom;
    this.#offset = at;
    try {
      this.#scan(bytes);
    } finally {
      this.#offset = offset;
      this.#partFrom = partFrom;
    }
  }

  /** Starts scanning a value whose first byte is `c`. */
  #startValue(c: number): void {
    this.#depth = 0;
    this.#escaped = false;
    this.#scalar = false;
    this.#inString = false;
    if (c === OPEN_BRACE || c === OPEN_BRACKET) this.#depth = 1;
    else if (c === QUOTE) this.#inString = true;
    else this.#scalar = true;
  }

  /**
   * Scans the value in progress from `i`; returns the offset just after its
   * end in this chunk, or -1 when it goes on past the chunk. Brackets are
   * counted, not matched: a value that is not JSON is refused when decoded.
   */
  #valueEnd(chunk: Buffer, i: number): number {
    const n = chunk.length;
    if (this.#scalar) {
      while (i < n) {
        const c = chunk[i];
        if (isSpace(c) || c === COMMA || c === CLOSE_BRACKET || c === CLOSE_BRACE) return i;
        i++;
      }
      return -1;
    }
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    while (i < n) {
      const c = chunk[i++];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (depth === 0) return i;
        }
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--depth === 0) return i;
      }
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    return -1;
  }

  /** The offset just after the closing quote of the key in progress, or -1. */
  #stringEnd(chunk: Buffer, i: number): number {
    let escaped = this.#escaped;
    for (; i < chunk.length; i++) {
      const c = chunk[i];
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) return i + 1;
    }
    this.#escaped = escaped;
    return -1;
  }

  /** Decodes a root value other than the body array and keeps what the checks need. */
  #rootValue(text: string): void {
    const value = parseJsonExact(text, { wholeFloats: true });
    if (this.#key === BODY_KEY) {
      // A body that is not an array: noBody, unless a later `body` is one.
      this.#startBody();
      this.#bodyIsArray = false;
    } else if (this.#key === TOTAL_ROWS_KEY) this.#totalRows = value;
    else if (this.#key === COLUMNS_RETURNED_KEY) this.#columnsReturned = value;
  }

  #startBody(): void {
    this.#bodyIsArray = true;
    this.#rows = new RowColumns();
    this.#rowIndex = 0;
    this.#rowError = undefined;
    this.#seenBits = new Uint8Array(0);
    this.#seenLarge = new Set();
    this.#runParts = [];
    this.#runActive = false;
    this.#slowRun = false;
  }

  /**
   * Decodes the run's whole rows; with `keepTail`, the row in progress
   * starts the next run.
   */
  #flushRun(keepTail: boolean): void {
    const bytes = Buffer.concat(this.#runParts);
    const wholeLength = this.#wholeEnd - this.#runStart;
    this.#slowRun = false;
    const tail = keepTail ? Buffer.from(bytes.subarray(this.#rowStart - this.#runStart)) : undefined;
    this.#runParts = tail === undefined ? [] : [tail];
    this.#runActive = tail !== undefined;
    this.#runStart = this.#rowStart;
    this.#wholeEnd = this.#rowStart;
    if (wholeLength <= 0) return;
    const rows = parseJsonExactFast(`[${bytes.toString('utf8', 0, wholeLength)}]`) as unknown[];
    for (let r = 0; r < rows.length; r++) this.#row(rows[r]);
  }

  /** Checks one row as bodyFromJson does (the first bad one is the error) and adds it. */
  #row(row: unknown): void {
    const index = this.#rowIndex++;
    if (this.#rowError !== undefined) return;
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      this.#rowError = invalid({ problem: 'rowNotObject', index });
      return;
    }
    const id = (row as Record<string, unknown>)[ROW_ID];
    if (!isRowId(id)) {
      this.#rowError = invalid({ problem: 'rowNoRowId', index });
      return;
    }
    if (this.#seen(id)) {
      this.#rowError = invalid({ problem: 'duplicateRowId', id });
      return;
    }
    this.#rows.add(row as Record<string, unknown>, id);
  }

  /** True when `id` was seen before in this body; records it. */
  #seen(id: number): boolean {
    if (id >= BITMAP_IDS) {
      if (this.#seenLarge.has(id)) return true;
      this.#seenLarge.add(id);
      return false;
    }
    const byte = id >> 3;
    if (byte >= this.#seenBits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.#seenBits.length * 2, 1024));
      grown.set(this.#seenBits);
      this.#seenBits = grown;
    }
    const bit = 1 << (id & 7);
    if (this.#seenBits[byte] & bit) return true;
    this.#seenBits[byte] |= bit;
    return false;
  }
}

/**
 * The offset of the `}` of the last `}`, `,`, `{` in `bytes` (whitespace
 * allowed between them, as in `json.dumps` output), or -1: where a row
 * probably ends and the next begins. Only a probability (the bytes may sit
 * in a string, or in a list of objects inside a row): the caller checks it.
 */
function lastRowJoin(bytes: Buffer): number {
  let open = bytes.length;
  for (let attempt = 0; attempt < JOIN_ATTEMPTS; attempt++) {
    open = bytes.lastIndexOf(OPEN_BRACE, open - 1);
    if (open <= 0) return -1;
    let k = open - 1;
    while (k > 0 && isSpace(bytes[k])) k--;
    if (bytes[k] !== COMMA) continue;
    k--;
    while (k > 0 && isSpace(bytes[k])) k--;
    if (bytes[k] === CLOSE_BRACE) return k;
  }
  return -1;
}

/** A decoding failure as the consumer reports it: the text's own syntax errors say the answer is not JSON; our other errors pass. */
function answerError(error: unknown): S2SPError {
  return isS2SPError(error) && !isS2SPError(error, 'S2SP_ERR_JSON_SYNTAX') ? error : invalid({ problem: 'notJson' }, error);
}
