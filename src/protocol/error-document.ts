/**
 * The error document every data-plane error answers with (SPEC 3.3):
 * `{"error": {"code": "S2SP_ERR_...", "message": "..."}}`.
 */
import type { ErrorCode, S2SPError } from '../errors.js';

/** The wire shape of an error. */
export interface ErrorDocument {
  error: { code: ErrorCode; message: string };
}

/** The error document of an S2SPError. */
export function errorDocumentOf(error: S2SPError): ErrorDocument {
  return { error: { code: error.code, message: error.message } };
}
