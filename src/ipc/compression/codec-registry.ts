/**
 * The Arrow IPC buffer codecs, behind a plug-in point: each codec is a loader
 * that runs the first time the codec is needed (a client lists it in Accept,
 * or a response uses it), never at import, so a platform without a native
 * binary loses that codec and nothing else. The built-in loaders are
 * lz4-napi for LZ4_FRAME (lz4-codec.ts) and node:zlib for ZSTD
 * (zstd-codec.ts).
 *
 * An application may register its own implementation, or `null` to switch a
 * codec off (the tests simulate a platform without a binary this way).
 * Registrations are per thread: encoder workers load the built-in codecs.
 */
import { CompressionType } from 'apache-arrow';
import { S2SPError } from '../../errors.js';
import { IPC_CODECS, IpcCodec } from '../../protocol/media-types.js';
import type { IpcBufferCodec } from './buffer-codec.js';
import { loadLz4Codec } from './lz4-codec.js';
import { loadZstdCodec } from './zstd-codec.js';

export type { IpcBufferCodec };

/** What {@link registerIpcCodec} takes: a codec, a loader that returns one (or throws why it cannot), or null for "unavailable". */
export type IpcCodecSource = IpcBufferCodec | (() => IpcBufferCodec) | null;

/** The Arrow format's CompressionType of each codec. */
export const COMPRESSION_TYPE_OF: Readonly<Record<IpcCodec, CompressionType>> = {
  [IpcCodec.lz4]: CompressionType.LZ4_FRAME,
  [IpcCodec.zstd]: CompressionType.ZSTD,
};

type State = { codec: IpcBufferCodec } | { error: string };

interface Slot {
  source: IpcCodecSource;
  state?: State;
}

const BUILT_IN: Readonly<Record<IpcCodec, () => IpcBufferCodec>> = {
  [IpcCodec.lz4]: loadLz4Codec,
  [IpcCodec.zstd]: loadZstdCodec,
};

const slots = new Map<IpcCodec, Slot>(IPC_CODECS.map((name) => [name, { source: BUILT_IN[name] }]));

function slotOf(name: IpcCodec): Slot {
  const slot = slots.get(name);
  if (slot === undefined) throw new S2SPError('S2SP_ERR_CODEC_UNAVAILABLE', { problem: 'unknown', codec: name, known: IPC_CODECS });
  return slot;
}

function stateOf(name: IpcCodec): State {
  const slot = slotOf(name);
  if (slot.state !== undefined) return slot.state;
  const { source } = slot;
  if (source === null) slot.state = { error: 'switched off (registered as null)' };
  else if (typeof source === 'function') {
    try {
      slot.state = { codec: source() };
    } catch (error) {
      slot.state = { error: (error as Error).message.split('\n')[0] };
    }
  } else slot.state = { codec: source };
  return slot.state;
}

/**
 * Replaces the implementation of a codec on this thread: a codec, a loader
 * (run on first use; a loader that throws makes the codec unavailable), or
 * `null` to make it unavailable.
 * @returns the previous registration, to restore it later
 */
export function registerIpcCodec(name: IpcCodec, source: IpcCodecSource): IpcCodecSource {
  const slot = slotOf(name);
  const previous = slot.source;
  slot.source = source;
  slot.state = undefined;
  return previous;
}

/** True when the codec loads on this platform (loads it on first call). */
export function ipcCodecAvailable(name: IpcCodec): boolean {
  return 'codec' in stateOf(name);
}

/** The codecs that load here, most preferred first (see IPC_CODECS). */
export function availableIpcCodecs(): IpcCodec[] {
  return IPC_CODECS.filter(ipcCodecAvailable);
}

/**
 * The codec's implementation.
 * @throws S2SPError `S2SP_ERR_CODEC_UNAVAILABLE` when it does not load on this platform
 */
export function ipcCodec(name: IpcCodec): IpcBufferCodec {
  const state = stateOf(name);
  if ('codec' in state) return state.codec;
  throw new S2SPError('S2SP_ERR_CODEC_UNAVAILABLE', { problem: 'missing', codec: name, reason: state.error });
}

/** Our codec name for an Arrow CompressionType, if we have one. */
export function ipcCodecOfCompressionType(type: CompressionType): IpcCodec | undefined {
  return IPC_CODECS.find((name) => COMPRESSION_TYPE_OF[name] === type);
}
