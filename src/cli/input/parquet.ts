/**
 * Parquet bytes -> a Table with `_row_id` first, through parquet-wasm (the
 * Rust `parquet` crate compiled to WebAssembly), loaded on first use so that
 * importing the CLI never instantiates the wasm module.
 *
 * Layout checked before the reader sees the bytes:
 *   "PAR1" | column chunks ... | footer (Thrift FileMetaData) | int32 footer len | "PAR1"
 * An encrypted footer ends in "PARE" instead; parquet-wasm cannot read it.
 *
 * Two things shape the reading:
 * - Only parquet-wasm's synchronous entry points touch data. A panic in the
 *   Rust code surfaces as a `RuntimeError` thrown to the caller there, but
 *   inside the async reader (`ParquetFile.read`) it is thrown from a
 *   microtask and kills the process (seen with a corrupted page and with a
 *   fuzzed footer). The async `ParquetFile` is used only for row-group sizes,
 *   after the synchronous `readSchema` has parsed the very same footer.
 * - Big files are read a few row groups per call, one Arrow batch per call.
 *   That gives progress lines and keeps the wasm heap small: it grows to hold
 *   whatever one call decodes and never shrinks again (flights-3m: 58 MB of
 *   heap read per row group, 420-660 MB read in one call). parquet-wasm's
 *   default of 1,024-row batches made the one call 3x slower as well.
 */
import { Binary, Field, RecordBatch, Schema, Struct, Table, Type, Utf8, makeData, tableFromIPC, type Data } from 'apache-arrow';
import { S2SPError, isS2SPError, type ErrorParams } from '../../errors.js';
import { withRowIds } from '../../table/with-row-ids.js';
import { importOptional } from '../../optional-package.js';
import { checkedInputTable } from './arrow-file.js';
import { PARQUET_MAGIC, startsWithBytes } from './table-file-format.js';

type ParquetWasm = typeof import('parquet-wasm');

/** Files above this size are read row group by row group, with progress. */
export const PARQUET_PROGRESS_MIN_BYTES = 8 * 1024 * 1024;

// Rows per Arrow batch: a whole row group when it is not huge. Fewer, larger
// batches are much cheaper for arrow-js than thousands of 1,024-row ones.
const MAX_BATCH_ROWS = 1 << 20;
// Each read call copies the whole file into the wasm heap, so a file with
// very many small row groups is read several groups per call.
const MAX_READ_CALLS = 32;
/** "PARE": the closing magic of a file with an encrypted footer. */
const ENCRYPTED_MAGIC = Uint8Array.from([0x50, 0x41, 0x52, 0x45]);

let loading: Promise<ParquetWasm> | undefined;

/**
 * Reads Parquet bytes into a Table with `_row_id` (Int32, 0..n-1) first.
 * LargeUtf8 and LargeBinary columns come back as Utf8 and Binary when their
 * bytes fit Int32 offsets; Timestamp columns keep their unit (JSON writes
 * them as ISO 8601 text with that unit's precision).
 *
 * @param bytes the whole file
 * @param onProgress called after each read of a file over
 *   {@link PARQUET_PROGRESS_MIN_BYTES} (one row group, or a few when there are
 *   many), e.g. `row group 3/11, 818,181 of 3,000,000 rows`
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` when the bytes are not a
 *   readable Parquet file or hold no columns
 */
export async function tableFromParquetBytes(bytes: Uint8Array, onProgress?: (message: string) => void): Promise<Table> {
  checkFraming(bytes);
  const pw = await loadParquetWasm();
  let schema: Schema;
  let batches: RecordBatch[];
  if (bytes.length <= PARQUET_PROGRESS_MIN_BYTES) {
    ({ schema, batches } = readBatches(pw, bytes, { batchSize: MAX_BATCH_ROWS }));
  } else {
    // readSchema parses the footer synchronously: if it is malformed enough
    // to make the Rust code panic, that panic is catchable here and never
    // reaches the async metadata reader below.
    schema = wasmCall(() => tableFromIPC(pw.readSchema(bytes).intoIPCStream()).schema);
    batches = [];
    const groups = await rowGroupSizes(pw, bytes);
    const total = groups.reduce((a, b) => a + b, 0);
    const perCall = Math.ceil(groups.length / MAX_READ_CALLS);
    let done = 0;
    for (let first = 0; first < groups.length; first += perCall) {
      const indexes = range(first, Math.min(groups.length, first + perCall));
      const rows = indexes.reduce((sum, i) => sum + groups[i], 0);
      const read = readBatches(pw, bytes, { rowGroups: indexes, batchSize: clampBatch(rows) });
      batches.push(...read.batches);
      done += rows;
      onProgress?.(`row group ${first + indexes.length}/${groups.length}, ${grouped(done)} of ${grouped(total)} rows`);
      // Let the event loop run between groups: progress lines on async
      // streams get written, signals get handled.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  if (schema.fields.length === 0) throw unreadable({ problem: 'parquetNoColumns' });
  return withRowIds(assemble(schema, batches));
}

/**
 * Imports parquet-wasm (an optional package) once; a failed import is retried
 * on the next call. Not installed: `S2SP_ERR_CLI_PACKAGE_MISSING`, saying what
 * to install.
 */
function loadParquetWasm(): Promise<ParquetWasm> {
  loading ??= importOptional<ParquetWasm>('parquet-wasm').catch((err: unknown) => {
    loading = undefined;
    if (isS2SPError(err)) throw err;
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'parquetUnavailable', reason: messageOf(err) }, { cause: err });
  });
  return loading;
}

/** Checks both magics, so a truncated file is named as such instead of as a footer parse error. */
function checkFraming(bytes: Uint8Array): void {
  if (bytes.length === 0) throw unreadable({ problem: 'emptyFile' });
  if (!startsWithBytes(bytes, PARQUET_MAGIC)) throw unreadable({ problem: 'notParquet' });
  if (bytes.length < 12) throw unreadable({ problem: 'parquetTooShort' });
  const end = bytes.length - 4;
  if (startsWithBytes(bytes, ENCRYPTED_MAGIC, end)) throw unreadable({ problem: 'parquetEncrypted' });
  if (!startsWithBytes(bytes, PARQUET_MAGIC, end)) throw unreadable({ problem: 'parquetNoClosingMagic' });
}

/** Rows in each row group, from the footer. */
async function rowGroupSizes(pw: ParquetWasm, bytes: Uint8Array): Promise<number[]> {
  let file: Awaited<ReturnType<ParquetWasm['ParquetFile']['fromFile']>>;
  try {
    file = await pw.ParquetFile.fromFile(new Blob([bytes]));
  } catch (err) {
    throw readerFailed(err);
  }
  try {
    const metadata = file.metadata();
    const sizes = metadata.rowGroups().map((group) => {
      const rows = group.numRows();
      group.free();
      return rows;
    });
    metadata.free();
    return sizes;
  } finally {
    file.free();
  }
}

/** One synchronous read, moved to arrow-js through an IPC stream (copied out of the wasm heap), its batches checked as an Arrow file's are. */
function readBatches(pw: ParquetWasm, bytes: Uint8Array, options: { rowGroups?: number[]; batchSize: number }): { schema: Schema; batches: RecordBatch[] } {
  const table = checkedInputTable(
    wasmCall(() => pw.readParquet(bytes, options).intoIPCStream()),
    'stream',
  );
  return { schema: table.schema, batches: table.batches };
}

/** Runs a parquet-wasm call, turning what it throws into our error. */
function wasmCall<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw readerFailed(err);
  }
}

/**
 * One Table of `batches` (read separately, so rebuilt on one schema), with
 * LargeUtf8 -> Utf8 and LargeBinary -> Binary wherever every chunk's offsets
 * fit Int32. parquet-wasm returns every string column as LargeUtf8; the
 * common types are what s2sp's readers have fast paths for and what every
 * Arrow reader takes. Value bytes are shared, only offsets are rebuilt.
 */
function assemble(source: Schema, batches: RecordBatch[]): Table {
  const narrow = source.fields.map((field, c) => narrowedType(field, batches, c));
  const fields = source.fields.map((f, c) => (narrow[c] ? new Field(f.name, narrow[c], f.nullable, f.metadata) : f));
  const schema = new Schema(fields, source.metadata);
  if (batches.length === 0) return new Table(schema);
  const type = new Struct(fields);
  const rebuilt = batches.map((batch) => {
    const children = batch.data.children.map((data, c) => (narrow[c] ? narrowOffsets(data, narrow[c]) : data));
    return new RecordBatch(schema, makeData({ type, length: batch.numRows, nullCount: 0, children }));
  });
  return new Table(schema, rebuilt);
}

const INT32_MAX = 0x7fffffff;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Utf8 or Binary when column `c` is a large type whose offsets fit Int32 in every batch. */
function narrowedType(field: Field, batches: RecordBatch[], c: number): Utf8 | Binary | undefined {
  const type = field.type.typeId === Type.LargeUtf8 ? new Utf8() : field.type.typeId === Type.LargeBinary ? new Binary() : undefined;
  if (type === undefined) return undefined;
  for (const batch of batches) {
    const offsets = batch.data.children[c].valueOffsets as unknown as BigInt64Array;
    // Offsets never decrease: the first and last bound them all.
    if (offsets.length > 0 && (offsets[0] < 0n || offsets[offsets.length - 1] > BigInt(INT32_MAX))) return undefined;
  }
  return type;
}

/** `data` with its Int64 offsets rewritten as Int32; validity and value buffers shared. */
function narrowOffsets(data: Data, type: Utf8 | Binary): Data {
  const wide = data.valueOffsets as unknown as BigInt64Array;
  const offsets = new Int32Array(Math.max(1, wide.length));
  if (LITTLE_ENDIAN) {
    // Each offset is < 2^31, so its low 32-bit word is the value: no BigInt
    // conversion per element (6M of them for flights-3m).
    const words = new Int32Array(wide.buffer, wide.byteOffset, wide.length * 2);
    for (let i = 0; i < wide.length; i++) offsets[i] = words[2 * i];
  } else {
    for (let i = 0; i < wide.length; i++) offsets[i] = Number(wide[i]);
  }
  const props = {
    offset: data.offset,
    length: data.length,
    nullCount: data.nullCount,
    nullBitmap: data.nullBitmap,
    valueOffsets: offsets,
    data: data.values as Uint8Array,
  };
  return type instanceof Utf8 ? makeData({ type, ...props }) : makeData({ type, ...props });
}

function clampBatch(rows: number): number {
  return Math.max(1, Math.min(rows, MAX_BATCH_ROWS));
}

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}

/** 3000000 -> "3,000,000", independent of the ICU data Node was built with. */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function readerFailed(err: unknown): S2SPError {
  // A Rust panic arrives as `RuntimeError: unreachable`, which says nothing
  // to a user; corrupt data is what triggers it in practice.
  const problem = err instanceof Error && err.name === 'RuntimeError' ? 'parquetCrashed' : 'parquetReaderFailed';
  return new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem, reason: messageOf(err) }, { cause: err });
}

function unreadable(params: ErrorParams<'S2SP_ERR_INPUT_UNREADABLE'>): S2SPError {
  return new S2SPError('S2SP_ERR_INPUT_UNREADABLE', params);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
