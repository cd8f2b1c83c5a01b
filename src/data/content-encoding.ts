/**
 * HTTP Content-Encoding for JSON responses (gzip or br, when the client asks
 * with Accept-Encoding). Never applied to Arrow: Arrow bodies compress their
 * buffers with LZ4 inside the IPC stream, and two layers would only cost CPU.
 */
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import type { Transform } from 'node:stream';
import { parseAccept } from './negotiate.js';

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

/**
 * A compressing stream for `encoding`. Levels favour throughput: this runs on
 * the main thread over bodies of many megabytes (brotli's default quality 11
 * would cost seconds).
 */
export function createEncoder(encoding: ContentEncoding): Transform {
  if (encoding === 'gzip') return createGzip({ level: 4 });
  return createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
}
