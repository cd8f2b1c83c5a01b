/**
 * The media types of the data plane (SPEC 3.2) and the `codecs` parameter
 * that asks for Arrow IPC buffer compression the Arrow-over-HTTP way:
 * `application/vnd.apache.arrow.stream; codecs="lz4"`.
 */

/** The media type of an Arrow IPC stream. */
export const ARROW_STREAM_TYPE = 'application/vnd.apache.arrow.stream';
/** The media type of the JSON body and of every error document. */
export const JSON_TYPE = 'application/json';
/** The Content-Type of JSON responses. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Arrow IPC buffer codecs this implementation knows, by their `codecs` parameter name. */
export const IpcCodec = { lz4: 'lz4' } as const;
/** One of {@link IpcCodec}. */
export type IpcCodec = (typeof IpcCodec)[keyof typeof IpcCodec];

/** Spellings of a codec other implementations use, mapped to ours. */
const CODEC_ALIASES: Readonly<Record<string, string>> = { lz4_frame: IpcCodec.lz4 };

/** The Arrow stream media type with its codec parameter (none: uncompressed). */
export function arrowStreamType(codec?: IpcCodec): string {
  return codec === undefined ? ARROW_STREAM_TYPE : `${ARROW_STREAM_TYPE}; codecs="${codec}"`;
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
