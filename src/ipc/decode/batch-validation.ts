/**
 * Checks one record batch body read from outside (a peer's answer, an input
 * file) against its schema before arrow-js builds vectors from it. arrow-js
 * trusts the header: a batch claiming a billion rows over buffers for a few
 * thousand reads past its buffers, and a Utf8 offset past the data comes
 * back as bytes of the next values or zeros. Every buffer, offset and child
 * length is checked here, in one pass over the offsets (O(rows) integers).
 *
 * The walk follows the Arrow columnar format ("Buffer listing for each
 * layout"), in the order the format (and arrow-js's VectorLoader) reads
 * field nodes and buffers: a field's node, its own buffers, then its
 * children depth first.
 */
import { DateUnit, IntervalUnit, Precision, Type, UnionMode, type DataType, type Field } from 'apache-arrow';
import { IpcStreamError } from './stream-walk.js';

/** What the walk reads of a batch header: field nodes, buffer sizes, variadic buffer counts. */
export interface BatchLayout {
  /** Rows the header declares. */
  length: number;
  /** One per field, depth first: length and null count. */
  nodes: readonly { length: number; nullCount: number }[];
  /** The byte length of each body buffer (uncompressed). */
  sizes: readonly number[];
  /** Buffer counts of the view columns (Utf8View, BinaryView), in order. */
  variadicBufferCounts: readonly number[];
}

/**
 * Checks `layout` against `fields`: as many nodes and buffers as the schema
 * needs, every buffer long enough for its node's length, children as long
 * as their parents need. With `buffers` (the bytes of each buffer), also
 * their content: offsets non-decreasing and inside the data or child they
 * index, view structs inside their buffers, union type ids known.
 *
 * @param fields the top-level fields (a record batch) or the one dictionary value field
 * @throws IpcStreamError kind `invalid`, naming the column
 */
export function checkBatchLayout(fields: readonly Field[], layout: BatchLayout, buffers?: readonly Uint8Array[]): void {
  const walk = new LayoutWalk(layout, buffers);
  for (const field of fields) {
    const length = walk.field(field, [field.name]);
    if (length !== layout.length) walk.fail([field.name], `it holds ${length} rows where the batch declares ${layout.length}`);
  }
  if (walk.nodeIndex !== layout.nodes.length || walk.bufferIndex !== layout.sizes.length) {
    throw invalid(
      undefined,
      `the batch lists ${layout.nodes.length} field nodes and ${layout.sizes.length} buffers, its schema needs ${walk.nodeIndex} and ${walk.bufferIndex}`,
    );
  }
}

/** Bytes per value of a fixed-width type, by the format's definition; undefined for other layouts. */
function fixedWidthOf(type: DataType): number | undefined {
  const t = type as DataType & { bitWidth?: number; precision?: number; unit?: number; byteWidth?: number };
  switch (type.typeId) {
    case Type.Int:
    case Type.Time:
    case Type.Decimal:
      return (t.bitWidth as number) / 8;
    case Type.Float:
      return t.precision === Precision.HALF ? 2 : t.precision === Precision.SINGLE ? 4 : 8;
    case Type.Date:
      return t.unit === DateUnit.DAY ? 4 : 8;
    case Type.Timestamp:
    case Type.Duration:
      return 8;
    case Type.Interval:
      return t.unit === IntervalUnit.YEAR_MONTH ? 4 : t.unit === IntervalUnit.DAY_TIME ? 8 : 16;
    case Type.FixedSizeBinary:
      return t.byteWidth as number;
    default:
      return undefined;
  }
}

/** Bytes of a view struct (Utf8View, BinaryView): length, prefix or inline bytes, buffer index, offset. */
const VIEW_BYTES = 16;
/** A view of at most this many bytes holds them inline. */
const VIEW_INLINE_MAX = 12;

class LayoutWalk {
  nodeIndex = 0;
  bufferIndex = 0;
  #variadicIndex = 0;
  readonly #layout: BatchLayout;
  readonly #buffers: readonly Uint8Array[] | undefined;

  constructor(layout: BatchLayout, buffers: readonly Uint8Array[] | undefined) {
    this.#layout = layout;
    this.#buffers = buffers;
  }

  fail(path: readonly string[], reason: string): never {
    throw invalid(path, reason);
  }

  /** Checks one field and its children; returns its length. */
  field(field: Field, path: readonly string[]): number {
    const node = this.#layout.nodes[this.nodeIndex++];
    if (node === undefined) this.fail(path, 'the batch has no field node for it');
    const { length, nullCount } = node;
    if (!Number.isSafeInteger(length) || length < 0) this.fail(path, `its length ${length} is not a row count`);
    if (!Number.isSafeInteger(nullCount) || nullCount < 0 || nullCount > length)
      this.fail(path, `its null count ${nullCount} is not within its ${length} rows`);
    const type = field.type;
    const id = type.typeId;
    if (id === Type.Null) return length;
    if (id === Type.Union) return this.#union(field, length, path);
    const validity = this.#buffer(path);
    if (nullCount > 0 && validity.size < Math.ceil(length / 8)) this.#short(path, 'validity bitmap', validity.size, Math.ceil(length / 8));
    const width = fixedWidthOf(type);
    if (width !== undefined) {
      this.#atLeast(path, 'data', this.#buffer(path).size, length * width);
      return length;
    }
    switch (id) {
      case Type.Bool:
        this.#atLeast(path, 'data', this.#buffer(path).size, Math.ceil(length / 8));
        return length;
      case Type.Dictionary: {
        const indices = fixedWidthOf((type as DataType & { indices: DataType }).indices) ?? 0;
        this.#atLeast(path, 'indices', this.#buffer(path).size, length * indices);
        return length;
      }
      case Type.Utf8:
      case Type.Binary:
      case Type.LargeUtf8:
      case Type.LargeBinary: {
        const offsets = this.#offsets(path, length, id === Type.LargeUtf8 || id === Type.LargeBinary ? 8 : 4);
        const data = this.#buffer(path);
        this.#offsetsWithin(path, offsets, length, data.size, 'its data buffer');
        return length;
      }
      case Type.Utf8View:
      case Type.BinaryView:
        this.#views(path, length);
        return length;
      case Type.List:
      case Type.LargeList:
      case Type.Map: {
        const offsets = this.#offsets(path, length, id === Type.LargeList ? 8 : 4);
        const childField = type.children[0];
        const child = this.field(childField, [...path, childField.name]);
        this.#offsetsWithin(path, offsets, length, child, `its child ${JSON.stringify(childField.name)}`);
        return length;
      }
      case Type.FixedSizeList: {
        const childField = type.children[0];
        const child = this.field(childField, [...path, childField.name]);
        const size = (type as DataType & { listSize: number }).listSize;
        if (child < length * size) this.fail(path, `its child holds ${child} values where ${length} lists of ${size} need ${length * size}`);
        return length;
      }
      case Type.Struct:
        for (const childField of type.children) {
          const child = this.field(childField, [...path, childField.name]);
          if (child < length) this.fail([...path, childField.name], `it holds ${child} rows where its struct holds ${length}`);
        }
        return length;
      default:
        return this.fail(path, `its type ${String(type)} cannot be checked`);
    }
  }

  /** A union: no validity bitmap (format v5), type ids, dense offsets, then the children. */
  #union(field: Field, length: number, path: readonly string[]): number {
    const type = field.type as DataType & { mode: number; typeIds: Int32Array | number[] };
    const typeIds = this.#buffer(path);
    this.#atLeast(path, 'type ids', typeIds.size, length);
    const dense = type.mode === UnionMode.Dense;
    const offsets = dense ? this.#buffer(path) : undefined;
    if (offsets !== undefined) this.#atLeast(path, 'offsets', offsets.size, length * 4);
    const childLengths = type.children.map((childField) => this.field(childField, [...path, childField.name]));
    if (!dense) {
      childLengths.forEach((child, i) => {
        if (child < length) this.fail([...path, type.children[i].name], `it holds ${child} rows where its sparse union holds ${length}`);
      });
    }
    if (typeIds.bytes === undefined) return length;
    const childOf = new Map<number, number>();
    Array.from(type.typeIds).forEach((typeId, i) => childOf.set(typeId, i));
    const ids = new Int8Array(typeIds.bytes.buffer, typeIds.bytes.byteOffset, length);
    const slots = offsets?.bytes === undefined ? undefined : int32View(offsets.bytes, length);
    for (let i = 0; i < length; i++) {
      const child = childOf.get(ids[i]);
      if (child === undefined) this.fail(path, `row ${i} has type id ${ids[i]}, which the union does not declare`);
      if (slots !== undefined && !(slots[i] >= 0 && slots[i] < childLengths[child])) {
        this.fail(path, `row ${i} points at value ${slots[i]} of a child holding ${childLengths[child]}`);
      }
    }
    return length;
  }

  /** A view column: the views, then its variadic data buffers; each long view inside its buffer. */
  #views(path: readonly string[], length: number): void {
    const views = this.#buffer(path);
    this.#atLeast(path, 'views', views.size, length * VIEW_BYTES);
    const count = this.#layout.variadicBufferCounts[this.#variadicIndex++] ?? 0;
    const data = Array.from({ length: count }, () => this.#buffer(path));
    if (views.bytes === undefined) return;
    const view = new DataView(views.bytes.buffer, views.bytes.byteOffset, views.bytes.byteLength);
    for (let i = 0; i < length; i++) {
      const at = i * VIEW_BYTES;
      const size = view.getInt32(at, true);
      if (size < 0) this.fail(path, `value ${i} declares a negative length`);
      if (size <= VIEW_INLINE_MAX) continue;
      const index = view.getInt32(at + 8, true);
      const offset = view.getInt32(at + 12, true);
      const target = data[index];
      if (target === undefined || offset < 0 || offset + size > target.size) {
        this.fail(path, `value ${i} points at bytes ${offset}..${offset + size} of data buffer ${index}, which it does not have`);
      }
    }
  }

  /** An offsets buffer for `length` values; its values when the bytes are known. */
  #offsets(path: readonly string[], length: number, width: 4 | 8): ArrayLike<number | bigint> | undefined {
    const offsets = this.#buffer(path);
    // A column of no values may leave its offsets out altogether.
    if (length === 0) return undefined;
    this.#atLeast(path, 'offsets', offsets.size, (length + 1) * width);
    if (offsets.bytes === undefined) return undefined;
    return width === 4 ? int32View(offsets.bytes, length + 1) : bigInt64View(offsets.bytes, length + 1);
  }

  /** Offsets start at 0 or above, never decrease, and end within `limit`. */
  #offsetsWithin(path: readonly string[], offsets: ArrayLike<number | bigint> | undefined, length: number, limit: number, what: string): void {
    if (offsets === undefined) return;
    let previous = Number(offsets[0]);
    if (previous < 0) this.fail(path, `its first offset is ${previous}`);
    for (let i = 1; i <= length; i++) {
      const next = Number(offsets[i]);
      if (next < previous) this.fail(path, `offset ${i} (${next}) is below offset ${i - 1} (${previous})`);
      previous = next;
    }
    if (previous > limit) this.fail(path, `its offsets reach ${previous}, past the ${limit} of ${what}`);
  }

  /** The next body buffer: its size and, when known, its bytes. */
  #buffer(path: readonly string[]): { size: number; bytes?: Uint8Array } {
    const index = this.bufferIndex++;
    const size = this.#layout.sizes[index];
    if (size === undefined) this.fail(path, 'the batch lists fewer buffers than its schema needs');
    return { size, bytes: this.#buffers?.[index] };
  }

  #atLeast(path: readonly string[], what: string, size: number, needed: number): void {
    if (size < needed) this.#short(path, what, size, needed);
  }

  #short(path: readonly string[], what: string, size: number, needed: number): never {
    return this.fail(path, `its ${what} buffer holds ${size} bytes where its length needs ${needed}`);
  }
}

/** `count` int32 values at the start of `bytes` (copied when unaligned). */
function int32View(bytes: Uint8Array, count: number): Int32Array {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice(0, count * 4);
  return new Int32Array(aligned.buffer, aligned.byteOffset, count);
}

/** `count` int64 values at the start of `bytes` (copied when unaligned). */
function bigInt64View(bytes: Uint8Array, count: number): BigInt64Array {
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice(0, count * 8);
  return new BigInt64Array(aligned.buffer, aligned.byteOffset, count);
}

function invalid(path: readonly string[] | undefined, reason: string): IpcStreamError {
  return new IpcStreamError('invalid', reason, { column: path?.join('.') });
}
