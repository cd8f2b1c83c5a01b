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
 * bodyFromJson over the whole body (json-body.ts, which stays the reference):
 * any syntax error anywhere is `notJson`, and otherwise the checks come in
 * its order (noBody, the first bad row, total_rows, columns_returned). A
 * document whose root is not an object is buffered and handed to
 * bodyFromJson whole: it is not ours, and that keeps its error exact.
 */
import { isS2SPError, type S2SPError } from '../errors.js';
import { ROW_ID, isRowId } from '../protocol/row-id.js';
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
/** How the data plane's JSON writer joins two rows (json-encoding.ts): a likely cut, checked like any other. */
const ROW_BOUNDARY = Buffer.from('},{"_row_id":');

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Where the scanner is in the document. */
const enum At {
  /** Before the root: whitespace, then `{`. */
  Start,
  /** After `{`: a key or `}`. */
  FirstKey,
  /** After `,` in the root: a key. */
  Key,
  /** Inside a key string. */
  InKey,
  /** After a key: `:`. */
  Colon,
  /** After `:`: a value. */
  Value,
  /** Inside a value other than the body array (captured whole). */
  InValue,
  /** After a root value: `,` or `}`. */
  AfterValue,
  /** After `[` of the body: a row or `]`. */
  FirstRow,
  /** After `,` in the body: a row. */
  Row,
  /** Inside a row, scanned byte by byte. */
  InRow,
  /** Inside the body from a row's start, bytes gathered unscanned. */
  Fast,
  /** After a row: `,` or `]`. */
  AfterRow,
  /** After the root's `}`: whitespace only. */
  Done,
  /** The root is not an object: every byte kept for bodyFromJson. */
  NotOurs,
}

const isSpace = (c: number): boolean => c === SPACE || c === LF || c === CR || c === TAB;

/** A JSON body decoder fed chunk by chunk: {@link write} each chunk, then {@link end}. */
export class JsonBodyStream {
  readonly #runBytes: number;
  #at = At.Start;
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
   * @param options.runBytes bytes of rows gathered before they are decoded
   *   (default 1 MiB; tests make it small to cut runs everywhere)
   */
  constructor(options: { runBytes?: number } = {}) {
    this.#runBytes = options.runBytes ?? FLUSH_BYTES;
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
      this.#failed = isS2SPError(error) ? error : invalid({ problem: 'notJson' }, error);
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
        throw isS2SPError(error) ? error : invalid({ problem: 'notJson' }, error);
      }
    }
    if (this.#at !== At.Done) throw invalid({ problem: 'notJson' }, new SyntaxError('Unexpected end of JSON input'));
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
    let i = 0;
    /** Where the part of this chunk that belongs to the value in progress starts. */
    let partFrom = 0;
    while (i < n) {
      const c = chunk[i];
      switch (this.#at) {
        case At.Start:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (c === OPEN_BRACE) {
            this.#kept = [];
            this.#at = At.FirstKey;
            i++;
            continue;
          }
          // Not an object: not ours. bodyFromJson reads it whole and words the error.
          this.#at = At.NotOurs;
          return;
        case At.NotOurs:
          return;
        case At.FirstKey:
        case At.Key:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (c === QUOTE) {
            this.#at = At.InKey;
            this.#parts = [];
            this.#escaped = false;
            partFrom = i;
            i++;
            continue;
          }
          if (c === CLOSE_BRACE && this.#at === At.FirstKey) {
            this.#at = At.Done;
            i++;
            continue;
          }
          return syntax(c, this.#offset + i);
        case At.InKey: {
          const end = this.#stringEnd(chunk, i);
          if (end < 0) {
            i = n;
            continue;
          }
          this.#parts.push(chunk.subarray(partFrom, end));
          this.#key = JSON.parse(Buffer.concat(this.#parts).toString('utf8')) as string;
          this.#parts = [];
          this.#at = At.Colon;
          i = end;
          continue;
        }
        case At.Colon:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (c !== COLON) return syntax(c, this.#offset + i);
          this.#at = At.Value;
          i++;
          continue;
        case At.Value:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (this.#key === 'body' && c === OPEN_BRACKET) {
            // The last `body` wins, as in any JSON reader: an earlier one is forgotten.
            this.#startBody();
            this.#at = At.FirstRow;
            i++;
            continue;
          }
          this.#startValue(c);
          this.#parts = [];
          partFrom = i;
          this.#at = At.InValue;
          if (this.#scalar) continue; // the scalar's first byte is read again by valueEnd
          i++;
          continue;
        case At.InValue: {
          const end = this.#valueEnd(chunk, i);
          if (end < 0) {
            i = n;
            continue;
          }
          this.#parts.push(chunk.subarray(partFrom, end));
          this.#rootValue(Buffer.concat(this.#parts).toString('utf8'));
          this.#parts = [];
          this.#at = At.AfterValue;
          i = end;
          continue;
        }
        case At.AfterValue:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (c === COMMA) this.#at = At.Key;
          else if (c === CLOSE_BRACE) this.#at = At.Done;
          else return syntax(c, this.#offset + i);
          i++;
          continue;
        case At.FirstRow:
        case At.Row:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (c === CLOSE_BRACKET && this.#at === At.FirstRow) {
            this.#at = At.AfterValue;
            i++;
            continue;
          }
          if (c === CLOSE_BRACKET || c === COMMA || c === CLOSE_BRACE || c === COLON) return syntax(c, this.#offset + i);
          this.#rowStart = this.#offset + i;
          if (!this.#slowRun) {
            // Rows the scanner was cutting (the tail of its last run): decode them, then go fast.
            if (this.#runActive) {
              this.#runParts.push(chunk.subarray(partFrom, i));
              this.#flushRun(false);
            }
            this.#at = At.Fast;
            this.#runActive = true;
            this.#runStart = this.#rowStart;
            partFrom = i;
            i = n;
            continue;
          }
          if (!this.#runActive) {
            this.#runActive = true;
            this.#runStart = this.#rowStart;
            this.#wholeEnd = this.#rowStart;
            partFrom = i;
          }
          this.#startValue(c);
          this.#at = At.InRow;
          if (!this.#scalar) i++;
          continue;
        case At.Fast:
          i = n;
          continue;
        case At.InRow: {
          const end = this.#valueEnd(chunk, i);
          if (end < 0) {
            i = n;
            continue;
          }
          this.#wholeEnd = this.#offset + end;
          this.#at = At.AfterRow;
          i = end;
          continue;
        }
        case At.AfterRow:
          if (isSpace(c)) {
            i++;
            continue;
          }
          if (c === COMMA) {
            this.#at = At.Row;
            i++;
            continue;
          }
          if (c === CLOSE_BRACKET) {
            if (this.#runActive) {
              this.#runParts.push(chunk.subarray(partFrom, i));
              this.#flushRun(false);
            }
            this.#at = At.AfterValue;
            i++;
            continue;
          }
          return syntax(c, this.#offset + i);
        case At.Done:
          if (isSpace(c)) {
            i++;
            continue;
          }
          return syntax(c, this.#offset + i);
      }
    }
    // A key or root value goes on in the next chunk: keep its bytes (copied: they are few).
    if (this.#at === At.InKey || this.#at === At.InValue) this.#parts.push(Buffer.from(chunk.subarray(partFrom)));
    if (this.#runActive) {
      this.#runParts.push(chunk.subarray(partFrom));
      if (this.#at === At.Fast) {
        if (this.#offset + n - this.#runStart >= this.#runBytes) this.#flushFast();
      } else if (this.#wholeEnd - this.#runStart >= this.#runBytes) this.#flushRun(this.#at === At.InRow);
    }
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
    // First where the data plane starts a row (its `_row_id` comes first), then the last few `}`.
    const boundary = bytes.lastIndexOf(ROW_BOUNDARY);
    let end = bytes.length;
    for (let attempt = boundary < 0 ? 1 : 0; attempt <= CUT_ATTEMPTS; attempt++) {
      end = attempt === 0 ? boundary : bytes.lastIndexOf(CLOSE_BRACE, end - 1);
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
    this.#offset = at;
    try {
      this.#scan(bytes);
    } finally {
      this.#offset = offset;
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
    if (this.#key === 'body') {
      // A body that is not an array: noBody, unless a later `body` is one.
      this.#startBody();
      this.#bodyIsArray = false;
    } else if (this.#key === 'total_rows') this.#totalRows = value;
    else if (this.#key === 'columns_returned') this.#columnsReturned = value;
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

function syntax(c: number, position: number): never {
  throw invalid({ problem: 'notJson' }, new SyntaxError(`Unexpected token ${JSON.stringify(String.fromCharCode(c))} in JSON at position ${position}`));
}
