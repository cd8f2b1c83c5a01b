/**
 * Every error s2sp raises, in one place: a stable code, the HTTP status the
 * data plane answers with, and a default message. Tests match on `code`, never
 * on message text; errors that cross a worker boundary are matched by `code`
 * too, because structured clone drops the class.
 */

/** The error table: code -> HTTP status and default message. */
export const ERRORS = {
  // Data plane (SPEC 3.3)
  S2SP_ERR_REQUEST_BODY_INVALID: { status: 400, message: 'request body must be a JSON object' },
  S2SP_ERR_REQUEST_ROW_IDS_INVALID: { status: 400, message: 'row_ids must be an array of integers in [0, total_rows)' },
  S2SP_ERR_REQUEST_COLUMNS_INVALID: { status: 400, message: 'columns must be an array of existing column names' },
  S2SP_ERR_TOKEN_NOT_FOUND: { status: 404, message: 'unknown, expired or already consumed token' },
  S2SP_ERR_ROUTE_NOT_FOUND: { status: 404, message: 'no such endpoint' },
  S2SP_ERR_METHOD_NOT_ALLOWED: { status: 405, message: 'method not allowed' },
  S2SP_ERR_ACCEPT_UNSUPPORTED: { status: 406, message: 'unsupported Accept; supported: application/json' },
  S2SP_ERR_TOKEN_IN_FLIGHT: { status: 409, message: 'the transfer for this token is already in flight' },
  S2SP_ERR_REQUEST_TOO_LARGE: { status: 413, message: 'request body is over the limit' },
  S2SP_ERR_CONTENT_TYPE_UNSUPPORTED: { status: 415, message: 'request body must be application/json' },
  S2SP_ERR_INTERNAL: { status: 500, message: 'internal error' },

  // HTTP surfaces (SPEC 3.5, 4): requests refused before any route runs
  S2SP_ERR_REQUEST_MALFORMED: { status: 400, message: 'the HTTP request is malformed; the server could not parse it' },
  S2SP_ERR_REQUEST_TIMEOUT: { status: 408, message: 'the request did not arrive in full within the server time limit' },
  S2SP_ERR_REQUEST_HEADERS_TOO_LARGE: { status: 431, message: 'the request headers are over the server limit' },
  S2SP_ERR_MCP_HOST_REFUSED: {
    status: 403,
    message: 'this MCP endpoint does not accept requests for that Host or from that Origin (DNS-rebinding protection)',
  },
  S2SP_ERR_MCP_BODY_TOO_LARGE: {
    status: 413,
    message: 'the MCP request is over the server body limit; pass big tables by resource_url (async mode) instead of body_data',
  },

  // Cache
  S2SP_ERR_CACHE_FULL: { status: 507, message: 'the body cache is full' },
  S2SP_ERR_CACHE_CLOSED: { status: 503, message: 'the body cache is closed' },
  S2SP_ERR_DATA_PLANE_DOWN: { status: 503, message: 'the data plane is not listening, so no resource_url can be issued; use mode "sync" or start the server' },

  // Control plane: resource tools (SPEC 2.1)
  S2SP_ERR_DOMAINS_INVALID: { status: 400, message: 'abstract_domains is malformed or names no column' },
  S2SP_ERR_DOMAINS_UNKNOWN: { status: 400, message: 'abstract_domains names unknown columns' },
  S2SP_ERR_TABLE_INVALID: { status: 500, message: 'the tool did not return a table (an array of objects or an Arrow Table)' },
  S2SP_ERR_TABLE_TOO_LARGE: { status: 500, message: 'the table is too large for one Arrow column' },

  // Control plane: consumer tools (SPEC 2.2)
  S2SP_ERR_CONSUMER_ARG_INVALID: { status: 400, message: 'a consumer tool argument is malformed' },
  S2SP_ERR_CONSUMER_URL_INVALID: { status: 400, message: 'resource_url is not an S2SP data-plane URL' },
  S2SP_ERR_CONSUMER_ORIGIN_REFUSED: { status: 403, message: 'resource_url origin is not allowed' },
  S2SP_ERR_CONSUMER_BODY_TOO_LARGE: { status: 502, message: 'the resource body is over the consumer size limit' },
  S2SP_ERR_CONSUMER_FETCH_FAILED: { status: 502, message: 'fetching the resource body failed' },
  S2SP_ERR_CONSUMER_RESPONSE_INVALID: { status: 502, message: 'the resource server answered something that is not an S2SP body' },

  // Agent side (SPEC 2.3)
  S2SP_ERR_DDI_HANDLE_UNKNOWN: { status: 404, message: 'unknown or already used ddi:// handle' },

  // Native codecs
  S2SP_ERR_CODEC_UNAVAILABLE: { status: 406, message: 'the LZ4 codec (lz4-napi) is not available on this platform' },

  // Configuration: options checked when a plugin, store or server is built
  S2SP_ERR_OPTION_INVALID: { status: 500, message: 'an option is invalid' },
  S2SP_ERR_PUBLIC_URL_REQUIRED: {
    status: 500,
    message:
      'the server binds every interface (0.0.0.0 or ::), so it cannot tell which address consumers reach it at; ' +
      'pass publicUrl (--public-url http://<reachable-host>:<port>)',
  },

  // Tool handlers
  S2SP_ERR_TOOL_FAILED: {
    status: 500,
    message: 'the tool failed unexpectedly; the details are in the server log. Try again, or tell the server operator',
  },

  // CLI
  S2SP_ERR_INPUT_UNREADABLE: { status: 400, message: 'the input file could not be read as a table' },
} as const satisfies Record<string, { status: number; message: string }>;

/** A stable error code, `S2SP_ERR_<AREA>_<WHAT>`. */
export type ErrorCode = keyof typeof ERRORS;

/** Error carrying a stable code and the HTTP status the data plane maps it to. */
export class S2SPError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  /**
   * @param code stable error code from {@link ERRORS}
   * @param message specific message; defaults to the code's message
   */
  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown }) {
    super(message ?? ERRORS[code].message, options);
    this.name = 'S2SPError';
    this.code = code;
    this.status = ERRORS[code].status;
  }
}

/** True for an S2SPError, or for a plain object carrying one of our codes (after structured clone). */
export function isS2SPError(value: unknown, code?: ErrorCode): value is S2SPError {
  if (typeof value !== 'object' || value === null) return false;
  const c = (value as { code?: unknown }).code;
  if (typeof c !== 'string' || !(c in ERRORS)) return false;
  return code === undefined || c === code;
}

/** Longest quote of one input value in an error message, in characters. */
export const QUOTE_LIMIT = 80;

/**
 * One input value quoted for an error message: JSON, cut to `maxChars` with
 * an ellipsis, so a hostile value (a million-character column name, a value
 * nested too deep to stringify) never reaches a message whole.
 */
export function quoteForMessage(value: unknown, maxChars = QUOTE_LIMIT): string {
  let text: string;
  try {
    // Only a prefix can be shown: do not stringify all of a huge string to find it.
    text = typeof value === 'string' ? JSON.stringify(value.slice(0, maxChars + 1)) : String(JSON.stringify(value));
  } catch {
    text = Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  }
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}

/** Lists at most `limit` values for an error message (each quoted and bounded), noting how many were left off. */
export function listForMessage(values: readonly unknown[], limit = 5): string {
  const shown = values.slice(0, limit).map((v) => quoteForMessage(v)).join(', ');
  return values.length > limit ? `${shown} (and ${values.length - limit} more)` : shown;
}
