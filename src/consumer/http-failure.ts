/**
 * Turns a failed data-plane fetch into an S2SPError an LLM can act on.
 *
 * A non-2xx answer usually carries our error document (SPEC 3.3); its code
 * and message go into ours, with advice for the common cases: a 404 means
 * the single-use token is gone and the resource tool must be called again.
 * The Python reference answers `{"error": "<text>"}`, which is read too.
 * A 2xx answer that cannot be decoded (either wire format) is
 * RESPONSE_INVALID, built here so both decoders word it alike.
 */
import { S2SPError } from '../errors.js';

/** Longest piece of a foreign (non-S2SP) error body quoted in a message. */
const QUOTE_CHARS = 200;

/** Advice per HTTP status, for the agent that passed the resource_url. */
const ADVICE: Record<number, string> = {
  400: 'the request was refused; check that the abstract rows and columns come from this resource',
  404:
    'the resource_url is unknown, expired or already consumed (each resource_url is single use and lives 10 minutes); ' +
    'call the resource tool again for a fresh resource_url',
  409: 'another consumer is fetching this resource_url right now; each resource_url serves one transfer',
};

/** `S2SP_ERR_CONSUMER_FETCH_FAILED` with a message and an optional cause. */
export function fetchFailed(message: string, cause?: unknown): S2SPError {
  return new S2SPError('S2SP_ERR_CONSUMER_FETCH_FAILED', message, cause === undefined ? undefined : { cause });
}

/**
 * `S2SP_ERR_CONSUMER_RESPONSE_INVALID`: a 2xx answer that is not a whole S2SP
 * body (not ours, malformed, or cut short), never to be read as fewer rows.
 * @param what what is wrong with it, completing "the answer is not an S2SP body: ..."
 * @param cause the decoder's own error, if any
 */
export function responseInvalid(what: string, cause?: unknown): S2SPError {
  return new S2SPError(
    'S2SP_ERR_CONSUMER_RESPONSE_INVALID',
    `the resource server's answer is not an S2SP body: ${what}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The error for a non-2xx answer.
 * @param status the HTTP status
 * @param bytes the (possibly partial) response body
 */
export function httpFailure(status: number, bytes: Uint8Array): S2SPError {
  const detail = serverDetail(bytes);
  const advice = ADVICE[status] ?? (status >= 300 && status < 400 ? 'redirects are not followed; pass the resource_url unchanged' : undefined);
  const parts = [`the resource server answered HTTP ${status}`];
  if (detail !== undefined) parts.push(detail);
  let message = parts.join(' ');
  if (advice !== undefined) message += `; ${advice}`;
  return fetchFailed(message);
}

/** `CODE: message` from our error document, the reference's string, or a short quote. */
function serverDetail(bytes: Uint8Array): string | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').trim();
  if (text === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return `(${quote(text)})`;
  }
  const error = (doc as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return `(${quote(error)})`;
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const codeText = typeof code === 'string' ? code : undefined;
    const messageText = typeof message === 'string' ? quote(message) : undefined;
    if (codeText !== undefined || messageText !== undefined) {
      return `(${[codeText, messageText].filter((p) => p !== undefined).join(': ')})`;
    }
  }
  const detail = (doc as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return `(${quote(detail)})`;
  return `(${quote(text)})`;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > QUOTE_CHARS ? `${flat.slice(0, QUOTE_CHARS)}…` : flat;
}
