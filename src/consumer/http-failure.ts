/**
 * Turns a failed data-plane fetch into an S2SPError an LLM can act on.
 *
 * A non-2xx answer usually carries our error document (SPEC 3.3); its code
 * and message go into ours, with advice for the common cases (worded in
 * errors.ts): a 404 means the single-use token is gone and the resource tool
 * must be called again. The Python reference answers `{"error": "<text>"}`,
 * which is read too. (A 2xx answer that cannot be decoded is
 * json/decoded-body.ts's RESPONSE_INVALID.)
 */
import { S2SPError, type ErrorParams } from '../errors.js';

/** `S2SP_ERR_CONSUMER_FETCH_FAILED` for one of its situations, with an optional cause. */
export function fetchFailed(params: ErrorParams<'S2SP_ERR_CONSUMER_FETCH_FAILED'>, cause?: unknown): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_FETCH_FAILED', params, cause === undefined ? undefined : { cause });
}

/**
 * The error for a non-2xx answer.
 * @param status the HTTP status
 * @param bytes the (possibly partial) response body
 */
export function httpFailure(status: number, bytes: Uint8Array): S2SPError {
  return fetchFailed({ problem: 'httpStatus', status, ...serverSaid(bytes) });
}

/** The code and text of our error document, the reference's string, or the body itself. */
function serverSaid(bytes: Uint8Array): { serverCode?: string; serverText?: string } {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').trim();
  if (text === '') return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { serverText: text };
  }
  const error = (doc as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return { serverText: error };
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const serverCode = typeof code === 'string' ? code : undefined;
    const serverText = typeof message === 'string' ? message : undefined;
    if (serverCode !== undefined || serverText !== undefined) return { serverCode, serverText };
  }
  const detail = (doc as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return { serverText: detail };
  return { serverText: text };
}
