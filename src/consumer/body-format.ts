/**
 * The consumer's half of content negotiation (SPEC 3.2): which Accept to
 * send, and which format a response's Content-Type says it is in.
 *
 * By default it asks for an Arrow IPC stream and takes JSON as well at q=0.5,
 * because the Python reference answers JSON whatever the Accept says. Buffer
 * compression is asked for by the `codec` option; by default only when the
 * resource server is not on loopback, where compressing costs more time than
 * the bytes it saves (native-notes.md, "Which codec, and when").
 */
import { S2SPError } from '../errors.js';
import { ARROW_STREAM_TYPE, JSON_TYPE, arrowStreamType, isIpcCodec, mediaTypeOf, type IpcCodec } from '../protocol/media-types.js';
import { availableIpcCodecs, ipcCodec } from '../ipc/compression/codec-registry.js';

/** The wire formats a fetch can ask for; `auto` prefers Arrow and takes JSON. */
export const BodyFormat = { auto: 'auto', json: 'json', arrow: 'arrow' } as const;
/** One of {@link BodyFormat}. */
export type BodyFormat = (typeof BodyFormat)[keyof typeof BodyFormat];

/**
 * Checks a `format` option.
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for anything but auto, json, arrow
 */
export function bodyFormatOption(format: string | undefined): BodyFormat {
  if (format === undefined) return BodyFormat.auto;
  if (typeof format !== 'string' || !Object.hasOwn(BodyFormat, format)) {
    throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'format', value: format });
  }
  return format as BodyFormat;
}

/**
 * Arrow buffer compression to ask for: `none`, one codec, or `auto` (every
 * codec available here, ZSTD first, except on loopback where it is `none`).
 */
export type BodyCodec = 'auto' | 'none' | IpcCodec;

/**
 * Checks a `codec` option and resolves `auto`.
 * @param codec the option as given
 * @param loopback true when the resource server is on this machine
 * @returns the codecs to list in the Accept, most preferred first (empty: uncompressed)
 * @throws S2SPError `S2SP_ERR_CONSUMER_ARG_INVALID` for an unknown value;
 *   `S2SP_ERR_CODEC_UNAVAILABLE` when the codec asked for does not load here
 */
export function codecsToAsk(codec: string | undefined, loopback: boolean): IpcCodec[] {
  if (codec === undefined || codec === 'auto') return loopback ? [] : availableIpcCodecs();
  if (codec === 'none') return [];
  if (!isIpcCodec(codec)) throw new S2SPError('S2SP_ERR_CONSUMER_ARG_INVALID', { problem: 'codec', value: codec });
  ipcCodec(codec); // throws CODEC_UNAVAILABLE here, before any request
  return [codec];
}

/**
 * The Accept header for a format: `json` and `arrow` ask for that one only.
 * @param format the (checked) format option
 * @param codecs the buffer codecs to accept, most preferred first (none: uncompressed Arrow only)
 */
export function acceptFor(format: BodyFormat, codecs: readonly IpcCodec[] = []): string {
  if (format === BodyFormat.json) return JSON_TYPE;
  const arrow = arrowStreamType(codecs);
  return format === BodyFormat.arrow ? arrow : `${arrow}, ${JSON_TYPE};q=0.5`;
}

/**
 * The format of a 2xx answer by its Content-Type. Media-type parameters are
 * ignored (the server may echo its codec there; the stream's own headers say
 * what it is). Anything but the Arrow stream type goes to the JSON decoder,
 * which refuses what is not JSON, as before Arrow existed here.
 */
export function answeredFormat(contentType: string | undefined): 'json' | 'arrow' {
  return mediaTypeOf(contentType) === ARROW_STREAM_TYPE ? 'arrow' : 'json';
}
