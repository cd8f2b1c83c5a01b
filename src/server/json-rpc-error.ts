/**
 * The JSON-RPC error document of a request the MCP endpoint refuses before
 * (or instead of) the SDK answering it: what an MCP client shows, with the
 * S2SP error code in `error.data.code`.
 */
import type { ErrorCode, S2SPError } from '../errors.js';

/** JSON-RPC error codes: the SDK's own -32000 for transport-level refusals, -32600/-32700/-32603 from the spec. */
const JSON_RPC_CODES: Partial<Record<ErrorCode, number>> = {
  S2SP_ERR_MCP_BODY_TOO_LARGE: -32600,
  S2SP_ERR_REQUEST_BODY_INVALID: -32700,
  S2SP_ERR_INTERNAL: -32603,
};

/** A JSON-RPC error document for a refused request (the request's id is unknown). */
export function jsonRpcErrorOf(error: S2SPError): { jsonrpc: '2.0'; error: { code: number; message: string; data: { code: ErrorCode } }; id: null } {
  return { jsonrpc: '2.0', error: { code: JSON_RPC_CODES[error.code] ?? -32000, message: error.message, data: { code: error.code } }, id: null };
}
