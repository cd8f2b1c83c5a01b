/**
 * Maps anything thrown inside the data plane to SPEC 3.3's error document,
 * `{"error": {"code": "S2SP_ERR_...", "message": "..."}}`. Fastify's own body
 * parsing errors are translated to our codes; anything unknown is a 500 whose
 * message names no internals.
 */
import { S2SPError, isS2SPError } from '../errors.js';

const FASTIFY_CODES: Record<string, () => S2SPError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new S2SPError('S2SP_ERR_REQUEST_TOO_LARGE'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new S2SPError('S2SP_ERR_CONTENT_TYPE_UNSUPPORTED'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new S2SPError('S2SP_ERR_REQUEST_BODY_INVALID', { problem: 'lengthMismatch' }),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new S2SPError('S2SP_ERR_REQUEST_BODY_INVALID', { problem: 'notJson' }),
  FST_ERR_CTP_INVALID_TYPE: () => new S2SPError('S2SP_ERR_CONTENT_TYPE_UNSUPPORTED'),
};

/** The S2SPError a thrown value stands for on the wire. */
export function errorForReply(error: unknown): S2SPError {
  // An invariant's situation is for the log (the error handler logs every 500), not for the client.
  if (error instanceof S2SPError) return error.code === 'S2SP_ERR_INTERNAL_INVARIANT' ? new S2SPError('S2SP_ERR_INTERNAL') : error;
  if (isS2SPError(error)) {
    // A worker's error after structured clone: `{code, message}`, no class.
    const { code, message } = error as { code: S2SPError['code']; message?: unknown };
    return S2SPError.fromWire(code, typeof message === 'string' ? message : code);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in FASTIFY_CODES) return FASTIFY_CODES[code]();
  if (error instanceof SyntaxError) return new S2SPError('S2SP_ERR_REQUEST_BODY_INVALID', { problem: 'notJson' });
  return new S2SPError('S2SP_ERR_INTERNAL');
}
