/**
 * The media types of the data plane (SPEC 3.2) and the `codecs` parameter
 * that asks for Arrow IPC buffer compression the Arrow-over-HTTP way:
 * `application/vnd.apache.arrow.stream; codecs="zstd, lz4"` (listed in order
 * of preference, most preferred first).
 */

/** The media type of an Arrow IPC stream. */
export const ARROW_STREAM_TYPE = 'application/vnd.apache.arrow.stream';
/** The media type of the JSON body and of every error document. */
export const JSON_TYPE = 'application/json';
/** The Content-Type of JSON responses. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Arrow IPC buffer codecs this implementation knows, by their `codecs` parameter name. */
export const IpcCodec = { zstd: 'zstd', lz4: 'lz4' } as const;
/** One of {@link IpcCodec}. */
export type IpcCodec = (typeof IpcCodec)[keyof typeof IpcCodec];

/**
 * Every codec, in the order a client lists them when it accepts several:
 * ZSTD first (smaller bodies for about the same decoding time), as the
 * Arrow-over-HTTP convention orders them.
 */
export const IPC_CODECS: readonly IpcCodec[] = [IpcCodec.zstd, IpcCodec.lz4];

/** Spellings of a codec other implementations use, mapped to ours. */
const CODEC_ALIASES: Readonly<Record<string, string>> = { lz4_frame: IpcCodec.lz4 };

/** True when `name` is one of {@link IpcCodec}. */
export function isIpcCodec(name: unknown): name is IpcCodec {
  return typeof name === 'string' && (IPC_CODECS as readonly string[]).includes(name);
}

/**
 * The Arrow stream media type with its codec parameter: one codec (what a
 * response used), several (what a client accepts, most preferred first), or
 * none (uncompressed).
 */
export function arrowStreamType(codecs?: IpcCodec | readonly IpcCodec[]): string {
  const list = codecs === undefined ? [] : typeof codecs === 'string' ? [codecs] : codecs;
  return list.length === 0 ? ARROW_STREAM_TYPE : `${ARROW_STREAM_TYPE}; codecs="${list.join(', ')}"`;
}

/** The codecs a `codecs` parameter value lists (`"lz4, zstd"`), lower-cased, aliases resolved. */
export function parseCodecsParam(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '')
    .map((c) => CODEC_ALIASES[c] ?? c);
}

/** The media type of a Content-Type header without its parameters, lower-cased. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0].trim().toLowerCase();
}
