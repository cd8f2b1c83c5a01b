/**
 * Content negotiation for the data plane (SPEC 3.2): JSON by default, Arrow
 * IPC stream when asked for, with the codecs the client lists in the Accept
 * parameters (`application/vnd.apache.arrow.stream; codecs="zstd, lz4"`);
 * for JSON, the HTTP Content-Encoding (gzip or br) from Accept-Encoding.
 */
import { S2SPError, type ErrorParams } from '../errors.js';
import { ARROW_STREAM_TYPE, IPC_CODECS, JSON_TYPE, arrowStreamType, isIpcCodec, parseCodecsParam, type IpcCodec } from '../protocol/media-types.js';

/** What a response will be. */
export interface ResponseFormat {
  readonly kind: 'json' | 'arrow';
  /** Arrow only: the IPC buffer codec, or undefined for uncompressed. */
  readonly codec?: IpcCodec;
}

/** What this server can write. */
export interface NegotiationSupport {
  readonly arrow: boolean;
  /** True when this server can compress with `codec`; asked only about codecs a client lists (it may load a native addon). */
  codec(codec: IpcCodec): boolean;
}

/** The two formats without a codec, shared by every request (frozen: callers only read them). */
const JSON_FORMAT: ResponseFormat = Object.freeze({ kind: 'json' });
const ARROW_FORMAT: ResponseFormat = Object.freeze({ kind: 'arrow' });

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
  /** The codecs the range lists (`codecs="lz4, zstd"`), normalised. */
  codecs: string[];
}

/** Parses an Accept header into media ranges (lower-cased type, unquoted params). */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of splitOutsideQuotes(header, ',')) {
    const [typePart, ...paramParts] = splitOutsideQuotes(part, ';');
    const type = typePart.trim().toLowerCase();
    if (type === '') continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      let value = p.slice(eq + 1).trim();
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
      if (key === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0;
      } else params.set(key, value);
    }
    ranges.push({ type, params, q, codecs: parseCodecsParam(params.get('codecs')) });
  }
  return ranges;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of s) {
    if (ch === '"') quoted = !quoted;
    if (ch === sep && !quoted) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out;
}

/**
 * Picks the response format for an Accept header, the HTTP way (RFC 9110
 * 12.5.1): each format we can write takes the q of the most specific range
 * that matches it, so an explicit `application/json;q=0` refuses JSON even
 * beside a wildcard; the highest q
 * wins, ties go to the server's order (JSON, compressed Arrow, Arrow).
 * Compression is only ever chosen when a range lists the codec; among
 * several, the client's order wins (it lists the one it prefers first, the
 * Arrow-over-HTTP convention). A range that lists only codecs we cannot
 * write matches nothing.
 * @throws S2SPError `S2SP_ERR_ACCEPT_UNSUPPORTED` when nothing acceptable is supported
 */
export function negotiateFormat(accept: string | undefined, support: NegotiationSupport): ResponseFormat {
  if (accept === undefined || accept.trim() === '') return JSON_FORMAT;
  const { ranges, listed } = parsedAccept(accept);
  // Only listed codecs are asked about, so a codec's native addon loads only when a client wants it.
  const usable = support.arrow ? listed.filter((codec) => support.codec(codec)) : [];
  let best: { format: ResponseFormat; q: number } | undefined;
  for (const format of candidates(support, usable)) {
    const q = qualityOf(format, ranges);
    if (q > 0 && (best === undefined || q > best.q)) best = { format, q };
  }
  if (best === undefined) throw new S2SPError('S2SP_ERR_ACCEPT_UNSUPPORTED', unsupportedParams(accept, support, listed, usable));
  return best.format;
}

/** An Accept header parsed, with the known codecs it lists (never mutated: shared by every request that sends it). */
interface ParsedAccept {
  readonly ranges: readonly MediaRange[];
  readonly listed: readonly IpcCodec[];
}

/** Distinct Accept headers kept parsed: clients send a handful, and a client that sends ever new ones must not grow memory. */
const MAX_PARSED_ACCEPTS = 64;
const parsedAccepts = new Map<string, ParsedAccept>();

/**
 * The parse of `accept`, kept per header string: every fetch negotiates, and
 * parsing the same header character by character again cost about a
 * microsecond a request (bench/small-requests profile). Only the parse is
 * kept; the choice still asks `support` each time, since a codec's
 * availability can change (registerIpcCodec).
 */
function parsedAccept(accept: string): ParsedAccept {
  let parsed = parsedAccepts.get(accept);
  if (parsed === undefined) {
    const ranges = parseAccept(accept);
    parsed = { ranges, listed: listedKnownCodecs(ranges) };
    if (parsedAccepts.size >= MAX_PARSED_ACCEPTS) parsedAccepts.clear();
    parsedAccepts.set(accept, parsed);
  }
  return parsed;
}

/** The codecs we know that ranges with q > 0 list, in the client's order, once each. */
function listedKnownCodecs(ranges: readonly MediaRange[]): IpcCodec[] {
  const out: IpcCodec[] = [];
  for (const range of ranges) {
    if (range.q <= 0) continue;
    for (const codec of range.codecs) if (isIpcCodec(codec) && !out.includes(codec)) out.push(codec);
  }
  return out;
}

function candidates(support: NegotiationSupport, codecs: readonly IpcCodec[]): ResponseFormat[] {
  const out: ResponseFormat[] = [JSON_FORMAT];
  if (support.arrow) for (const codec of codecs) out.push({ kind: 'arrow', codec });
  if (support.arrow) out.push(ARROW_FORMAT);
  return out;
}

/** q of the most specific range matching `format`; 0 when none does. */
function qualityOf(format: ResponseFormat, ranges: readonly MediaRange[]): number {
  let specificity = -1;
  let q = 0;
  for (const range of ranges) {
    const s = matchSpecificity(format, range);
    if (s > specificity) {
      specificity = s;
      q = range.q;
    }
  }
  return q;
}

/** How specifically `range` names `format`: -1 no match, 0 any type, 1 `application/` any, 2 the type, 3 the type and its codec. */
function matchSpecificity(format: ResponseFormat, range: MediaRange): number {
  if (format.kind === 'json') {
    if (range.type === JSON_TYPE) return 2;
    if (range.type === 'application/*') return 1;
    return range.type === '*/*' ? 0 : -1;
  }
  const codecs = range.codecs;
  if (format.codec !== undefined) {
    return range.type === ARROW_STREAM_TYPE && codecs.includes(format.codec) ? 3 : -1;
  }
  if (range.type === ARROW_STREAM_TYPE) return codecs.length === 0 ? 2 : -1;
  if (range.type === 'application/*') return 1;
  return range.type === '*/*' ? 0 : -1;
}

function unsupportedParams(
  accept: string,
  support: NegotiationSupport,
  listed: readonly IpcCodec[],
  usable: readonly IpcCodec[],
): ErrorParams<'S2SP_ERR_ACCEPT_UNSUPPORTED'> {
  const types = [JSON_TYPE];
  if (support.arrow) types.push(ARROW_STREAM_TYPE);
  // Codecs a client did not list are not probed (that could load an addon just to write an error).
  for (const codec of IPC_CODECS) if (usable.includes(codec)) types.push(arrowStreamType(codec));
  return { accept, supported: types, missingCodecs: support.arrow ? listed.filter((codec) => !usable.includes(codec)) : [] };
}

/** The encodings we can apply, in our order of preference on a tie. */
export type ContentEncoding = 'gzip' | 'br';

/** The best encoding the client accepts, or undefined for identity. */
export function negotiateEncoding(acceptEncoding: string | undefined): ContentEncoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding.trim() === '') return undefined;
  const ranges = parseAccept(acceptEncoding);
  const qualityOf = (name: string) => {
    const exact = ranges.find((r) => r.type === name);
    if (exact !== undefined) return exact.q;
    return ranges.find((r) => r.type === '*')?.q ?? 0;
  };
  let best: { encoding: ContentEncoding; q: number } | undefined;
  for (const encoding of ['gzip', 'br'] as const) {
    const q = qualityOf(encoding);
    if (q > 0 && (best === undefined || q > best.q)) best = { encoding, q };
  }
  return best?.encoding;
}
