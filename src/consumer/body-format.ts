/**
 * The consumer's half of content negotiation (SPEC 3.2): which Accept to
 * send, and which decoder a response's Content-Type picks.
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
import { bodyFromArrow } from './arrow-body.js';
import { responseInvalid } from './http-failure.js';
import { bodyFromJson, type DecodedBody } from './json-body.js';
import { JsonBodyStream } from './json-body-stream.js';

/** The wire formats a fetch can ask for; `auto` prefers Arrow and takes JSON. */
export const BodyFormat = { auto: 'auto', json: 'json', arrow: 'arrow' } as const;
/** One of {@link BodyFormat}. */
export type BodyFormat = (typeof BodyFormat)[keyof typeof BodyFormat];

/** A decoded body and the wire format it came in. */
export interface AnsweredBody extends DecodedBody {
  /** The wire format the server answered in (its Content-Type). */
  format: 'json' | 'arrow';
  /** True when the Arrow stream used buffer compression; always false for JSON. */
  compressed: boolean;
  /** The buffer codec of compressed Arrow (lz4, zstd). */
  codec?: IpcCodec;
}


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
 * Decodes a complete 2xx body by its Content-Type. Media-type parameters are
 * ignored (the server may echo its codec there; the stream's own headers say
 * what it is). Anything but the Arrow stream type goes to the JSON decoder,
 * which refuses what is not JSON, as before Arrow existed here.
 *
 * @param bytes the response body
 * @param contentType the response's Content-Type header, if any
 * @param format the format asked for; `json` or `arrow` refuses the other one
 * @param maxBytes the consumer's body limit, which also bounds what compressed Arrow decompresses to
 * @throws S2SPError `S2SP_ERR_CONSUMER_RESPONSE_INVALID`, `S2SP_ERR_CODEC_UNAVAILABLE`,
 *   `S2SP_ERR_CONSUMER_BODY_TOO_LARGE` (from the decoders)
 */
export function decodeAnswer(bytes: Uint8Array, contentType: string | undefined, format: BodyFormat, maxBytes: number): AnsweredBody {
  const mediaType = mediaTypeOf(contentType);
  const answered = mediaType === ARROW_STREAM_TYPE ? 'arrow' : 'json';
  if (format !== BodyFormat.auto && answered !== format) {
    throw responseInvalid({ problem: 'wrongFormat', asked: format, contentType });
  }
  if (answered === 'arrow') return { ...bodyFromArrow(bytes, maxBytes), format: answered };
  return { ...bodyFromJson(bytes), format: answered, compressed: false };
}

/**
 * A decoder to feed a 2xx body to as it arrives, when decodeAnswer would
 * read it as JSON; undefined otherwise (Arrow, or JSON where Arrow was
 * forced: decodeAnswer refuses that one whole).
 */
export function jsonStreamFor(contentType: string | undefined, format: BodyFormat): JsonBodyStream | undefined {
  const answered = mediaTypeOf(contentType) === ARROW_STREAM_TYPE ? 'arrow' : 'json';
  return answered === 'json' && format !== BodyFormat.arrow ? new JsonBodyStream() : undefined;
}
