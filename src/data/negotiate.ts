/**
 * Content negotiation for the data plane (SPEC 3.2): JSON by default, Arrow
 * IPC stream when asked for, with the codecs the client lists in the Accept
 * parameters (`application/vnd.apache.arrow.stream; codecs="lz4"`).
 */
import { S2SPError } from '../errors.js';

/** The media type of an Arrow IPC stream. */
export const ARROW_STREAM_TYPE = 'application/vnd.apache.arrow.stream';
/** The media type of the JSON body. */
export const JSON_TYPE = 'application/json';

/** What a response will be. */
export interface ResponseFormat {
  readonly kind: 'json' | 'arrow';
  /** Arrow only: the IPC buffer codec, or undefined for uncompressed. */
  readonly codec?: 'lz4';
}

/** The Arrow formats this server can write; issue #3 adds more. */
export interface NegotiationSupport {
  readonly arrow: boolean;
  readonly lz4: boolean;
}

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
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
    ranges.push({ type, params, q });
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
 * Picks the response format for an Accept header: the acceptable range with
 * the highest q wins, earlier ranges winning ties.
 * @throws S2SPError `S2SP_ERR_ACCEPT_UNSUPPORTED` when nothing acceptable is supported
 */
export function negotiateFormat(accept: string | undefined, support: NegotiationSupport): ResponseFormat {
  if (accept === undefined || accept.trim() === '') return { kind: 'json' };
  let best: { format: ResponseFormat; q: number } | undefined;
  for (const range of parseAccept(accept)) {
    if (range.q <= 0) continue;
    const format = formatFor(range, support);
    if (format !== undefined && (best === undefined || range.q > best.q)) best = { format, q: range.q };
  }
  if (best === undefined) throw new S2SPError('S2SP_ERR_ACCEPT_UNSUPPORTED', unsupportedMessage(accept, support));
  return best.format;
}

function formatFor(range: MediaRange, support: NegotiationSupport): ResponseFormat | undefined {
  if (range.type === '*/*' || range.type === 'application/*' || range.type === JSON_TYPE) return { kind: 'json' };
  if (range.type !== ARROW_STREAM_TYPE || !support.arrow) return undefined;
  const codecs = range.params.get('codecs');
  if (codecs === undefined || codecs.trim() === '') return { kind: 'arrow' };
  // The client lists what it can read; we pick the first one we can write.
  for (const codec of codecs.split(',').map((c) => c.trim().toLowerCase())) {
    if ((codec === 'lz4' || codec === 'lz4_frame') && support.lz4) return { kind: 'arrow', codec: 'lz4' };
  }
  return undefined;
}

function unsupportedMessage(accept: string, support: NegotiationSupport): string {
  const types = [JSON_TYPE];
  if (support.arrow) types.push(ARROW_STREAM_TYPE, ...(support.lz4 ? [`${ARROW_STREAM_TYPE}; codecs="lz4"`] : []));
  return `unsupported Accept ${JSON.stringify(accept.slice(0, 120))}; supported: ${types.join(', ')}`;
}
