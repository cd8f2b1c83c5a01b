/**
 * Every error s2sp raises, in one place: a stable code, the HTTP status the
 * data plane answers with, and the message template. As in fastify's
 * lib/errors.js, callers pass values and the catalogue owns the wording, so
 * each situation is worded once. Messages are written for an LLM to act on:
 * what is wrong, and what to do next.
 *
 * A code whose situations differ takes `{ problem, ...values }`: `problem`
 * names one of the texts listed under that code, and the compiler checks that
 * a call passes the values that text needs.
 *
 * Safety: every input a message echoes goes through {@link quoteInput}
 * (JSON-quoted, at most {@link QUOTED_INPUT_MAX_CHARS} characters); bearer
 * capabilities (data-plane tokens, ddi:// handles) arrive already redacted, in
 * params whose names say so.
 *
 * Tests match on `code`, never on message text; errors that cross a worker
 * boundary are matched by `code` too, because structured clone drops the
 * class (see {@link S2SPError.fromWire}).
 */
// Leaf modules of the wire contract (they import nothing of ours), so no cycle.
import { DATA_PATH_PREFIX } from './protocol/data-path.js';
import { MAX_ROW_ID, ROW_ID } from './protocol/row-id.js';
import { TOKEN_LENGTH } from './protocol/token.js';

/** Longest piece of an input a message echoes, in characters (an ellipsis marks the cut). */
export const QUOTED_INPUT_MAX_CHARS = 120;

/** Longest piece of a foreign server's error text quoted in a consumer's message. */
const SERVER_TEXT_MAX_CHARS = 200;

/**
 * An input as a message echoes it: a string JSON-quoted (so control
 * characters and quotes are escaped), any other value as JSON or as text,
 * cut to `maxChars` characters with an ellipsis.
 * @param value the input, as received
 * @param maxChars longest text kept before the ellipsis
 */
export function quoteInput(value: unknown, maxChars = QUOTED_INPUT_MAX_CHARS): string {
  if (typeof value === 'string') return JSON.stringify(cut(value, maxChars));
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined) {
    return String(value);
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // Cycles, or nesting too deep for the stack; fall through to String().
  }
  try {
    text ??= String(value);
  } catch {
    // String() of an array nested thousands deep overflows the stack too.
    text = describeValue(value);
  }
  return cut(text, maxChars);
}

/** Lists at most `limit` values for an error message, each quoted by {@link quoteInput}, noting how many were left off. */
export function listForMessage(values: readonly unknown[], limit = 5): string {
  const shown = values
    .slice(0, limit)
    .map((v) => quoteInput(v))
    .join(', ');
  return values.length > limit ? `${shown} (and ${values.length - limit} more)` : shown;
}

function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  // Never split a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** What kind of value an input was (`an array`, `a string`, `null`...), without echoing it. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/**
 * A message template: the values it needs in (one object, no default value),
 * the message out; no parameter when it needs none. The constructor tells the
 * two apart by the function's `length`.
 */
type Template = (params: never) => string;

/** The texts of a code whose situations differ, keyed by situation. */
type SituationTexts = Record<string, Template>;

/** `{ problem, ...values }`: one situation of `S` and the values its text needs. */
export type SituationParams<S extends SituationTexts> = {
  [K in keyof S & string]: { readonly problem: K } & (S[K] extends () => string ? unknown : Parameters<S[K]>[0]);
}[keyof S & string];

/** A template that picks its text by `params.problem`; `problems` lists the situations. */
function situations<S extends SituationTexts>(texts: S): ((params: SituationParams<S>) => string) & { readonly problems: readonly (keyof S & string)[] } {
  const render = (params: SituationParams<S>): string => {
    const text = Object.hasOwn(texts, params.problem) ? (texts[params.problem] as Template as (p: unknown) => string) : undefined;
    return text === undefined ? String(params.problem) : text(params);
  };
  return Object.assign(render, { problems: Object.keys(texts) as (keyof S & string)[] });
}

const RESOURCE_URL_HINT = 'resource_url must be the URL returned by the resource tool, passed unchanged';
const LOOPBACK_TEXT = 'loopback (localhost, 127.0.0.0/8, [::1])';
const MAPPING_EXAMPLE = '{"event": "alert_type"}';
const DOMAINS_EXAMPLE = `"a,b" or '["a","b"]'`;

/** What to do about each consumer parameter holding rows. */
const ROWS_HINT = {
  abstract_data:
    'pass the abstract rows exactly as the resource tool returned them (in the "columns" format, its header array first), ' +
    'a JSON array of their _row_id numbers, or "*" for every row',
  body_data: 'pass the body rows exactly as the resource tool returned them',
} as const;

/** A consumer parameter holding rows. */
type RowsParam = keyof typeof ROWS_HINT;

/** Advice per HTTP status of a failed data-plane fetch, for the agent that passed the resource_url. */
const FETCH_ADVICE: Record<number, string> = {
  400: 'the request was refused; check that the abstract rows and columns come from this resource',
  404:
    'the resource_url is unknown, expired or already consumed (each resource_url is single use and lives 10 minutes); ' +
    'call the resource tool again for a fresh resource_url',
  409: 'another consumer is fetching this resource_url right now; each resource_url serves one transfer',
};
const REDIRECT_ADVICE = 'redirects are not followed; pass the resource_url unchanged';

/** Node's file-system error codes, as a person would say them. */
const FS_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** An Arrow batch (from a peer or a file) whose buffers do not hold what its header declares (ipc/decode/batch-validation.ts). */
function corruptBatch(p: { column: string | undefined; reason: string }): string {
  return `an Arrow record batch is corrupt${p.column === undefined ? '' : ` in column ${quoteInput(p.column)}`}: ${p.reason}`;
}

/** What is wrong with a 2xx answer that is not an S2SP body, completing "...is not an S2SP body: ". */
const responseProblems = situations({
  notObject: () => 'it is not a JSON object',
  noBody: () => 'it has no "body" array',
  badTotalRows: () => '"total_rows" is not a non-negative integer',
  badColumnsReturned: () => '"columns_returned" is not an array of strings',
  /** The rows did not make a table; `reason` is that error's message. */
  badRows: (p: { reason: string }) => p.reason,
  empty: () => 'it is empty',
  notJson: () => 'it is not valid JSON (or was cut short)',
  rowNotObject: (p: { index: number }) => `body row ${p.index} is not a JSON object`,
  rowNoRowId: (p: { index: number }) => `body row ${p.index} has no integer ${ROW_ID}`,
  duplicateRowId: (p: { id: number }) => `${ROW_ID} ${p.id} occurs twice in the body`,
  wrongFormat: (p: { asked: string; contentType: string | undefined }) =>
    `it was asked for ${p.asked} only but answered Content-Type ${quoteInput(p.contentType ?? '')}`,
  arrowUndecodable: (p: { reason: string }) => `arrow-js could not decode the Arrow stream (${p.reason})`,
  rowCountMismatch: (p: { declared: number; decoded: number }) => `the Arrow stream declares ${p.declared} rows but ${p.decoded} were decoded`,
  noFields: () => 'the Arrow schema has no fields',
  firstField: (p: { name: string }) => `the first Arrow field is ${quoteInput(p.name)}, not ${ROW_ID}`,
  rowIdType: (p: { type: string }) => `${ROW_ID} has Arrow type ${p.type}, not an integer type`,
  rowIdRange: (p: { id: number }) => `${ROW_ID} ${p.id} is not in [0, ${MAX_ROW_ID}]`,
  rowIdNulls: () => `${ROW_ID} has null values`,
  cutShort: (p: { reason: string }) => `the transfer was cut short: ${p.reason}; none of its rows are used`,
  badStream: (p: { reason: string }) => p.reason,
  noSchema: () => 'the Arrow stream has no schema message',
  batchRowCount: (p: { index: number; declared: number; decoded: number }) =>
    `record batch ${p.index} declares ${p.declared} rows but ${p.decoded} were decoded`,
  rowIdNotAscending: (p: { id: number; last: number }) => `${ROW_ID} ${p.id} does not ascend (after ${p.last})`,
  // The Python reference answers unknown row ids and columns with 200 and less data.
  missingRows: (p: { missing: readonly number[]; asked: number }) =>
    `it lacks ${p.missing.length} of the ${p.asked} rows asked for (${ROW_ID} ${listForMessage(p.missing)}); ` +
    "the resource may not hold them: check abstract_data against the resource tool's abstract",
  missingColumns: (p: { missing: readonly string[] }) => `it lacks columns asked for: ${listForMessage(p.missing)}; the resource may not hold them`,
  /** A batch whose buffers do not hold what its header declares (ipc/decode/batch-validation.ts); `column` is its field path, or undefined for the batch as a whole. */
  batchInvalid: corruptBatch,
});

/** The error table: code -> HTTP status and message template. */
export const ERRORS = {
  // Data plane (SPEC 3.3)
  S2SP_ERR_REQUEST_BODY_INVALID: {
    status: 400,
    message: situations({
      notObject: (p: { got: unknown }) => `request body must be a JSON object, got ${describeValue(p.got)}`,
      notJson: () => 'request body is not valid JSON',
      lengthMismatch: () => 'request body length does not match Content-Length',
    }),
  },
  S2SP_ERR_REQUEST_ROW_IDS_INVALID: {
    status: 400,
    message: situations({
      notArray: (p: { got: unknown }) => `row_ids must be an array of integers, got ${describeValue(p.got)}`,
      notIntegers: (p: { bad: readonly unknown[] }) => `row_ids must be non-negative integers; bad values: ${listForMessage(p.bad)}`,
      outOfRange: (p: { totalRows: number; bad: readonly unknown[] }) => `row_ids must be in [0, ${p.totalRows}); out of range: ${listForMessage(p.bad)}`,
    }),
  },
  S2SP_ERR_REQUEST_COLUMNS_INVALID: {
    status: 400,
    message: situations({
      notArray: (p: { got: unknown }) => `columns must be an array of strings, got ${describeValue(p.got)}`,
      notStrings: (p: { bad: readonly unknown[] }) => `columns must be strings; bad values: ${listForMessage(p.bad)}`,
      unknown: (p: { unknown: readonly string[]; available: readonly string[] }) =>
        `unknown columns: ${listForMessage(p.unknown)}; available: ${listForMessage(p.available, 40)}`,
    }),
  },
  S2SP_ERR_TOKEN_NOT_FOUND: { status: 404, message: () => 'unknown, expired or already consumed token' },
  S2SP_ERR_ROUTE_NOT_FOUND: { status: 404, message: () => 'no such endpoint' },
  S2SP_ERR_METHOD_NOT_ALLOWED: {
    status: 405,
    message: (p: { method: string }) => `use POST on a resource_url, not ${quoteInput(p.method)}`,
  },
  S2SP_ERR_ACCEPT_UNSUPPORTED: {
    status: 406,
    /** `missingCodecs`: codecs the Accept listed that this server knows but cannot load on its platform. */
    message: (p: { accept: string; supported: readonly string[]; missingCodecs: readonly string[] }) =>
      `unsupported Accept ${quoteInput(p.accept)}` +
      (p.missingCodecs.length > 0 ? ` (not available on this server: ${p.missingCodecs.join(', ')}; its native codec has no binary for this platform)` : '') +
      `; supported: ${p.supported.join(', ')}`,
  },
  S2SP_ERR_TOKEN_IN_FLIGHT: { status: 409, message: () => 'the transfer for this token is already in flight' },
  S2SP_ERR_REQUEST_TOO_LARGE: { status: 413, message: () => 'request body is over the limit' },
  S2SP_ERR_CONTENT_TYPE_UNSUPPORTED: { status: 415, message: () => 'request body must be application/json' },
  S2SP_ERR_INTERNAL: { status: 500, message: () => 'internal error (the details are in the server log)' },
  /** A bug of ours, never the caller's: logged with its situation, answered on the wire as S2SP_ERR_INTERNAL (error-reply.ts). */
  S2SP_ERR_INTERNAL_INVARIANT: {
    status: 500,
    message: situations({
      columnSplit: () => 'a compressed record batch message does not split into its columns',
      notRecordBatch: () => 'a message read back as a record batch is not one',
      compressorMissing: (p: { codec: string }) => `a chunk in ${p.codec} was to be encoded without a ${p.codec} compressor`,
      floatText: () => 'the float-text addon refused a column (its buffers do not fit the values)',
    }),
  },

  // HTTP surfaces (SPEC 3.5, 4): requests refused before any route runs
  S2SP_ERR_REQUEST_MALFORMED: {
    status: 400,
    message: situations({
      /** `parserCode` is node's HPE_* code: what was wrong, without quoting the request. */
      parser: (p: { parserCode: string | undefined }) =>
        `the HTTP request is malformed; the server could not parse it${p.parserCode === undefined ? '' : ` (${p.parserCode})`}`,
      url: () => 'the request URL is malformed; pass a resource_url unchanged',
    }),
  },
  S2SP_ERR_REQUEST_TIMEOUT: {
    status: 408,
    message: () => 'the request did not arrive in full within the server time limit; send it again at once, not byte by byte',
  },
  S2SP_ERR_REQUEST_HEADERS_TOO_LARGE: { status: 431, message: () => 'the request headers are over the server limit' },
  S2SP_ERR_MCP_HOST_REFUSED: {
    status: 403,
    message: situations({
      host: (p: { host: unknown }) =>
        `Host ${quoteInput(p.host)} is not allowed at this MCP endpoint (DNS-rebinding protection); ` +
        'if it is legitimate, the server operator can allow it with --mcp-allowed-host',
      origin: (p: { origin: unknown }) =>
        `Origin ${quoteInput(p.origin)} is not allowed at this MCP endpoint (DNS-rebinding protection); ` +
        'if it is legitimate, the server operator can allow it with --mcp-allowed-origin',
    }),
  },
  S2SP_ERR_MCP_BODY_TOO_LARGE: {
    status: 413,
    message: (p: { limitBytes: number }) =>
      `the MCP request is over this server's limit of ${p.limitBytes} bytes; pass big tables by resource_url (async mode) ` +
      'instead of body_data, or ask the operator to raise --mcp-body-limit',
  },

  // Authorization of the MCP endpoint (README, Security > Authorization): OAuth 2.1 bearer tokens
  S2SP_ERR_AUTH_TOKEN_MISSING: {
    status: 401,
    message: () =>
      'this MCP endpoint needs an OAuth access token (Authorization: Bearer <token>); the resource metadata named in ' +
      'WWW-Authenticate says which authorization server issues it',
  },
  /** Never echoes the token; `problem` says which check it failed. */
  S2SP_ERR_AUTH_TOKEN_INVALID: {
    status: 401,
    message: situations({
      malformed: () => 'the access token is not a signed JWT this server can read; get a fresh one from the authorization server',
      signature: () => 'the access token signature does not verify against the authorization server keys; get a fresh token',
      algorithm: () => 'the access token is signed with an algorithm the authorization server keys do not name; get a fresh token',
      issuer: () => 'the access token was issued by another authorization server than the one this endpoint trusts',
      audience: (p: { audience: string }) =>
        `the access token is not meant for this resource; ask the authorization server for a token with resource=${p.audience}`,
      expired: () => 'the access token has expired; get a fresh one from the authorization server',
      notYetValid: () => 'the access token is not valid yet (nbf in the future); check the clocks, or get a fresh one',
      inactive: () => 'the access token is not active (introspection said so); get a fresh one from the authorization server',
    }),
  },
  S2SP_ERR_AUTH_SCOPE_INSUFFICIENT: {
    status: 403,
    message: (p: { scopes: readonly string[] }) =>
      `the access token lacks a scope tools/call needs here: ${listForMessage(p.scopes)}; ask the authorization server for a token with these scopes`,
  },
  /** Discovery (RFC 8414 / OpenID) or the JWKS could not be read: not the caller's fault. */
  S2SP_ERR_AUTH_ISSUER_UNAVAILABLE: {
    status: 503,
    message: () => "the authorization server's metadata or signing keys could not be read; try again shortly",
  },

  // Cache
  S2SP_ERR_CACHE_FULL: {
    status: 507,
    message: situations({
      /** The store's byte budget (MemoryStore's, or RedisStore's across replicas) has no room. */
      budget: (p: { neededBytes: number; freeBytes: number; maxBytes: number }) =>
        `the body cache is full: this body needs ${p.neededBytes} bytes, ${p.freeBytes} of ${p.maxBytes} are free; ` +
        'fetch or let expire earlier results, or request fewer rows',
      /** Redis itself refused the memory (its maxmemory, policy noeviction). */
      storeMemory: (p: { neededBytes: number }) =>
        `the shared body store (Redis) has no memory left for this body of ${p.neededBytes} bytes; ` +
        'fetch or let expire earlier results, or request fewer rows',
    }),
  },
  S2SP_ERR_CACHE_CLOSED: { status: 503, message: () => 'the body cache is closed' },
  S2SP_ERR_ENCODER_POOL_CLOSED: { status: 503, message: () => 'the encoder pool is closed; create a new one' },
  S2SP_ERR_STORE_UNAVAILABLE: {
    status: 503,
    message: () => 'the shared body store (Redis) is unreachable right now; nothing was lost on your side, retry in a few seconds',
  },
  S2SP_ERR_DATA_PLANE_DOWN: {
    status: 503,
    message: () => 'the data plane is not listening, so no resource_url can be issued; use mode "sync" or start the server',
  },

  // Control plane: resource tools (SPEC 2.1)
  S2SP_ERR_DOMAINS_INVALID: {
    status: 400,
    message: situations({
      jsonObject: () => `abstract_domains must be ${DOMAINS_EXAMPLE}, not a JSON object`,
      badJson: () => `abstract_domains looks like a JSON array but is not valid JSON; pass column names as ${DOMAINS_EXAMPLE}`,
      notStrings: () => 'abstract_domains as JSON must be an array of column-name strings',
      noColumn: (p: { value: string }) =>
        `abstract_domains ${quoteInput(p.value)} names no column (${ROW_ID} is always included); ` +
        'name the columns you need, or omit abstract_domains for the full table',
    }),
  },
  S2SP_ERR_DOMAINS_UNKNOWN: {
    status: 400,
    message: (p: { unknown: readonly string[]; columns: readonly string[] }) =>
      `unknown abstract_domains: ${listForMessage(p.unknown)}. Available columns: ${listForMessage(p.columns, 100)}`,
  },
  S2SP_ERR_TABLE_INVALID: {
    status: 500,
    message: situations({
      notTable: () => 'the tool did not return a table (an array of objects or an Arrow Table)',
      batchColumnsDiffer: (p: { index: number }) => `record batch ${p.index} has other columns than the first batch`,
      notRecordBatch: (p: { index: number }) => `item ${p.index} of the returned batches is not an Arrow RecordBatch`,
      rowNotObject: (p: { index: number }) => `row ${p.index} is not a JSON object`,
      rowNoRowId: (p: { index: number }) => `row ${p.index} has no integer ${ROW_ID}`,
      notJsonValue: (p: { column: string; type: string }) => `column ${quoteInput(p.column)} holds a ${p.type}; rows must hold JSON values`,
      // Arrow holds text as UTF-8, which has no lone surrogate: refused rather than served as U+FFFD.
      loneSurrogateName: (p: { column: string }) =>
        `column name ${quoteInput(p.column)} holds a lone UTF-16 surrogate, which Arrow's UTF-8 cannot hold; rename the column`,
      loneSurrogateValue: (p: { column: string; index: number }) =>
        `column ${quoteInput(p.column)} row ${p.index} holds a string with a lone UTF-16 surrogate, which Arrow's UTF-8 cannot hold; ` +
        'fix the text (String#toWellFormed replaces it with U+FFFD)',
      // A table given to a store (bodyTableOf): _row_id is the row's position, never user data.
      rowIdNotNumbers: (p: { type: string }) =>
        `the table's ${ROW_ID} column is ${p.type}, not the numbers 0..n-1 in row order; drop the column and s2sp numbers the rows`,
      rowIdNulls: () => `the table's ${ROW_ID} column has nulls; drop the column and s2sp numbers the rows`,
      rowIdNotPositional: (p: { row: number; has: number }) =>
        `the table's ${ROW_ID} column is not 0..n-1 in row order: row ${p.row} has ${p.has}; drop the column and s2sp numbers the rows`,
    }),
  },
  S2SP_ERR_TABLE_TOO_LARGE: {
    status: 500,
    message: situations({
      column: (p: { column: string }) => `column ${quoteInput(p.column)} holds over 2 GiB of text, too much for one Arrow column`,
      streamedBody: (p: { maxBytes: number }) => `the streamed body is over ${p.maxBytes} bytes, the most one cached body can hold`,
      tooManyRows: () => `the batches hold over ${MAX_ROW_ID + 1} rows, more than ${ROW_ID} (Int32) can number`,
    }),
  },
  S2SP_ERR_TABLE_UNSUPPORTED_TYPE: {
    status: 500,
    message: situations({
      unsupportedType: (p: { column: string; type: string }) =>
        `column ${quoteInput(p.column)} has the Arrow type ${p.type}, which s2sp cannot carry; cast it to a supported type (README, "JSON encoding of Arrow types")`,
      nestedDictionary: (p: { column: string; type: string }) =>
        `column ${quoteInput(p.column)} is dictionary-encoded inside a nested type (${p.type}); decode the dictionary before returning the table`,
      unknownZone: (p: { column: string; zone: string }) =>
        `column ${quoteInput(p.column)} has the time zone ${quoteInput(p.zone)}, which is neither a fixed offset (+05:30) nor a zone name this runtime knows; ` +
        'convert it to UTC or to a known zone',
      duplicateField: (p: { column: string; field: string }) =>
        `column ${quoteInput(p.column)} is a struct with two fields named ${quoteInput(p.field)}; a JSON object cannot hold both, so rename one`,
    }),
  },

  // Control plane: consumer tools (SPEC 2.2)
  S2SP_ERR_CONSUMER_ARG_INVALID: {
    status: 400,
    message: situations({
      // fetchBody's options
      rowIdsEmpty: () => 'rowIds is empty; pass undefined to fetch every row',
      rowIdsNotIntegers: () => 'rowIds must be non-negative integers',
      format: (p: { value: unknown }) => `format must be "auto", "json" or "arrow", got ${quoteInput(p.value)}`,
      codec: (p: { value: unknown }) => `codec must be "auto", "none", "zstd" or "lz4", got ${quoteInput(p.value)}`,
      allowedOriginNotUrl: (p: { origin: unknown }) => `allowed origin ${quoteInput(p.origin)} is not a URL`,
      allowedOriginScheme: (p: { origin: unknown }) => `allowed origin ${quoteInput(p.origin)} must be http: or https:`,
      // abstract_data and body_data
      rowsNotString: (p: { param: RowsParam; got: unknown }) =>
        `${p.param} must be a string holding a JSON array, got ${describeValue(p.got)}; ${ROWS_HINT[p.param]}`,
      rowsMissing: (p: { param: RowsParam }) => `${p.param} is missing or empty; ${ROWS_HINT[p.param]}`,
      rowsNotJson: (p: { param: RowsParam }) => `${p.param} is not valid JSON; ${ROWS_HINT[p.param]} (a JSON array of objects)`,
      rowsNotArray: (p: { param: RowsParam; got: unknown }) =>
        `${p.param} must be a JSON array of row objects, got ${describeValue(p.got)}; ${ROWS_HINT[p.param]}`,
      rowNotObject: (p: { param: RowsParam; index: number }) => `${p.param} row ${p.index} is not a JSON object; ${ROWS_HINT[p.param]}`,
      rowNoRowId: (p: { param: RowsParam; index: number }) => `${p.param} row ${p.index} has no ${ROW_ID}; ${ROWS_HINT[p.param]}`,
      rowBadRowId: (p: { param: RowsParam; index: number; id: unknown }) =>
        `${p.param} row ${p.index} has ${ROW_ID} ${quoteInput(p.id)}, not a non-negative integer; ${ROWS_HINT[p.param]}`,
      rowTooDeep: (p: { param: RowsParam; index: number; maxDepth: number }) =>
        `${p.param} row ${p.index} nests deeper than ${p.maxDepth} levels; ${ROWS_HINT[p.param]}`,
      // abstract_data as bare ids, or in the columns layout (SPEC 2.4)
      idBad: (p: { index: number; id: unknown }) =>
        `abstract_data item ${p.index} is ${quoteInput(p.id)}, not a ${ROW_ID} (a non-negative integer); ${ROWS_HINT.abstract_data}`,
      headerNotNames: () => `abstract_data starts with an array, but that first array is not the header of column names; ${ROWS_HINT.abstract_data}`,
      headerDuplicate: (p: { name: string }) => `abstract_data header names column ${quoteInput(p.name)} twice; ${ROWS_HINT.abstract_data}`,
      headerNoRowId: () => `abstract_data header has no ${ROW_ID}; ${ROWS_HINT.abstract_data}`,
      lineNotArray: (p: { index: number }) => `abstract_data row ${p.index} is not an array like its header; ${ROWS_HINT.abstract_data}`,
      lineLength: (p: { index: number; values: number; columns: number }) =>
        `abstract_data row ${p.index} has ${p.values} values for ${p.columns} header columns; ${ROWS_HINT.abstract_data}`,
      urlAndBody: () => 'pass either resource_url (async mode) or body_data (sync mode), not both',
      starWithoutBody: () =>
        'abstract_data "*" selects every row of a resource, so resource_url or body_data is required; ' + 'pass the resource_url the resource tool returned',
      // column_mapping
      mappingNotString: () => 'column_mapping must be a string holding a JSON object',
      mappingNotJson: () => `column_mapping is not valid JSON; pass a JSON object such as ${MAPPING_EXAMPLE}`,
      mappingNotObject: () => `column_mapping must be a JSON object such as ${MAPPING_EXAMPLE}`,
      mappingBadTarget: (p: { source: string; target: unknown }) =>
        `column_mapping maps ${quoteInput(p.source)} to ${quoteInput(p.target)}; every value must be a non-empty column name`,
      mappingRowId: () => `column_mapping must not rename ${ROW_ID} or rename a column to it; ${ROW_ID} joins the rows`,
      mappingSameTarget: (p: { first: string; second: string; target: string }) =>
        `column_mapping maps both ${quoteInput(p.first)} and ${quoteInput(p.second)} to ${quoteInput(p.target)}; targets must differ`,
    }),
  },
  S2SP_ERR_CONSUMER_URL_INVALID: {
    status: 400,
    message: situations({
      missing: () => `resource_url is missing or empty; ${RESOURCE_URL_HINT}`,
      // The text may hold a token: it is not echoed.
      notUrl: () => `resource_url is not a valid URL; ${RESOURCE_URL_HINT}`,
      scheme: (p: { protocol: string }) =>
        `resource_url must use http: or https:, not ${quoteInput(p.protocol)}; ${RESOURCE_URL_HINT}` +
        (p.protocol === 'ddi:' ? ' (a ddi:// handle is only understood by an S2SP-aware agent SDK)' : ''),
      path: () => `resource_url path must end with ${DATA_PATH_PREFIX}<token>; ${RESOURCE_URL_HINT}`,
      token: (p: { redactedToken: string }) =>
        `resource_url token ${quoteInput(p.redactedToken)} is malformed (a token is ${TOKEN_LENGTH} base64url characters); ${RESOURCE_URL_HINT}`,
    }),
  },
  S2SP_ERR_CONSUMER_ORIGIN_REFUSED: {
    status: 403,
    message: (p: { origin: string; allowedOrigins: readonly string[] }) =>
      `resource_url origin ${quoteInput(p.origin)} is not allowed; allowed origins: ${[LOOPBACK_TEXT, ...p.allowedOrigins].join(', ')}. ` +
      `${RESOURCE_URL_HINT}; if it is, the consumer server must add that origin to its allowed origins`,
  },
  S2SP_ERR_CONSUMER_BODY_TOO_LARGE: {
    status: 502,
    message: situations({
      declared: (p: { maxBytes: number; declaredBytes: number }) =>
        `the resource body is over the consumer limit of ${p.maxBytes} bytes (Content-Length says ${p.declaredBytes} bytes); ` + 'select fewer rows or columns',
      received: (p: { maxBytes: number }) =>
        `the resource body is over the consumer limit of ${p.maxBytes} bytes (over ${p.maxBytes} bytes received); select fewer rows or columns`,
      jsonTooLong: (p: { bytes: number }) => `the JSON body (${p.bytes} bytes) is too large to decode; request fewer rows or columns`,
      /** Compressed Arrow whose buffers decompress past the limit; `reason` says by how much. */
      decompressed: (p: { maxBytes: number; reason: string }) =>
        `the resource body decompresses past the consumer limit of ${p.maxBytes} bytes (${p.reason}); select fewer rows or columns`,
    }),
  },
  S2SP_ERR_CONSUMER_FETCH_FAILED: {
    status: 502,
    message: situations({
      aborted: () => 'the fetch was aborted',
      timeout: (p: { timeoutMs: number }) => `the resource server did not answer in full within ${p.timeoutMs} ms; try again`,
      unreachable: (p: { origin: string; reason: string }) => `could not reach the resource server at ${quoteInput(p.origin)}: ${p.reason}`,
      closedEarly: () => 'the resource server closed the connection before the body was complete; try again',
      broken: () => 'the connection to the resource server broke before the body was complete; try again',
      /** A non-2xx answer; `serverCode`/`serverText` are what its body said (our error document, or foreign text). */
      httpStatus: (p: { status: number; serverCode?: string; serverText?: string }) => {
        const said = [
          p.serverCode === undefined ? undefined : /^S2SP_ERR_[A-Z0-9_]{1,64}$/.test(p.serverCode) ? p.serverCode : quoteInput(p.serverCode),
          p.serverText === undefined ? undefined : quoteInput(p.serverText.replace(/\s+/g, ' '), SERVER_TEXT_MAX_CHARS),
        ].filter((s) => s !== undefined);
        const advice = FETCH_ADVICE[p.status] ?? (p.status >= 300 && p.status < 400 ? REDIRECT_ADVICE : undefined);
        return `the resource server answered HTTP ${p.status}` + (said.length > 0 ? ` (${said.join(': ')})` : '') + (advice === undefined ? '' : `; ${advice}`);
      },
    }),
  },
  S2SP_ERR_CONSUMER_RESPONSE_INVALID: {
    status: 502,
    message: Object.assign((p: Parameters<typeof responseProblems>[0]) => `the resource server's answer is not an S2SP body: ${responseProblems(p)}`, {
      problems: responseProblems.problems,
    }),
  },

  // Agent side (SPEC 2.3)
  S2SP_ERR_DDI_HANDLE_UNKNOWN: {
    status: 404,
    // redactDdiHandle already quotes and bounds the handle.
    message: (p: { redactedHandle: string }) =>
      `resource_url ${p.redactedHandle} is an unknown or already used ddi:// handle (each is single use); ` +
      'call the resource tool again (mode "sync") for a fresh one',
  },

  // Native codecs
  S2SP_ERR_CODEC_UNAVAILABLE: {
    status: 406,
    message: situations({
      /** `codec`: our name (lz4, zstd); `reason`: why its loader failed. */
      missing: (p: { codec: string; reason: string }) =>
        `the ${p.codec} codec is not available on this platform (${p.reason}); ask without codecs="${p.codec}"`,
      /** A response used a codec we know but cannot load here (so this client did not list it). */
      sentMissing: (p: { codec: string }) =>
        `the resource server sent ${p.codec}-compressed Arrow, but ${p.codec} is not available on this platform; ` +
        `the server should answer uncompressed, since this client did not list codecs="${p.codec}"`,
      codecSent: (p: { codec: string }) => `the resource server sent Arrow compressed with ${p.codec}, which this client cannot decode`,
      /** A name that is no IPC codec at all (a caller's bug: the media types list the known ones). */
      unknown: (p: { codec: unknown; known: readonly string[] }) => `unknown IPC codec ${quoteInput(p.codec)}; known: ${p.known.join(', ')}`,
    }),
  },

  // Configuration: options checked when a plugin, store, pool or server is built
  S2SP_ERR_OPTION_INVALID: {
    status: 500,
    /** `expected` completes "option X must be ...". */
    message: (p: { option: string; expected: string; value: unknown }) => `option ${p.option} must be ${p.expected}, got ${quoteInput(p.value)}`,
  },
  S2SP_ERR_PUBLIC_URL_REQUIRED: {
    status: 500,
    message: (p: { host: string }) =>
      `the server binds ${quoteInput(p.host)}, every interface, so it cannot tell which address consumers reach it at; ` +
      'pass publicUrl (--public-url http://<reachable-host>:<port>)',
  },

  /** An S2SPServer or a data plane used out of order: mounted or listening twice. */
  S2SP_ERR_SERVER_STATE: {
    status: 500,
    message: situations({
      mounted: () => 'the S2SPServer is already mounted; mount it once, or close it first',
      listening: () => 'the S2SPServer is already listening; close it first',
      dataPlaneMounted: () => 'this S2SP data plane is already mounted; create one per app',
    }),
  },

  /** Text the exact JSON reader (src/json/literal-reader.ts) or the streaming body decoder cannot read, worded as JSON.parse words it. */
  S2SP_ERR_JSON_SYNTAX: {
    status: 400,
    message: situations({
      end: () => 'unexpected end of JSON input',
      token: (p: { token: string; position: number }) => `unexpected token ${quoteInput(p.token)} in JSON at position ${p.position}`,
      tooDeep: (p: { position: number }) => `JSON nested too deeply at position ${p.position}`,
      badEscape: (p: { position: number }) => `bad escape in the JSON string at position ${p.position}`,
    }),
  },

  // Tool handlers
  S2SP_ERR_TOOL_FAILED: {
    status: 500,
    message: () => 'the tool failed unexpectedly; the details are in the server log. Try again, or tell the server operator',
  },
  /** The caller cancelled the tool call (notifications/cancelled, or its HTTP request stream closed); nothing it cached was kept. */
  S2SP_ERR_TOOL_CANCELLED: {
    status: 499,
    message: () => 'the tool call was cancelled by its caller; nothing was kept',
  },

  // CLI
  S2SP_ERR_INPUT_UNREADABLE: {
    status: 400,
    message: situations({
      // The file as a whole (read-table-file.ts)
      unknownFormat: (p: { path: string; format: string; formats: readonly string[] }) =>
        `cannot read ${quoteInput(p.path)}: unknown format ${quoteInput(p.format)} (expected ${p.formats.join(', ')})`,
      /** `fsCode` is Node's error code (ENOENT...); `reason` the error's message, used when the code has no wording here. */
      fileUnreadable: (p: { path: string; fsCode: unknown; reason: string }) =>
        `cannot read ${quoteInput(p.path)}: ${(typeof p.fsCode === 'string' ? FS_PROBLEMS[p.fsCode] : undefined) ?? p.reason}`,
      /** `reason` is the message of the reader's own error. */
      asFormat: (p: { path: string; format: string; reason: string }) => `cannot read ${quoteInput(p.path)} as ${p.format}: ${p.reason}`,
      emptyFile: () => 'the file is empty',
      notUtf8: () => 'the text is not valid UTF-8',
      // JSON and GeoJSON
      invalidJson: (p: { reason: string; jsonLines: boolean }) =>
        `invalid JSON: ${p.reason}${p.jsonLines ? ' (newline-delimited JSON is not supported: use a JSON array)' : ''}`,
      notFeatureCollection: (p: { found: unknown }) => `expected a GeoJSON FeatureCollection, found ${describeValue(p.found)}`,
      notTable: (p: { found: unknown; singleFeature: boolean }) =>
        `expected an array of objects or a GeoJSON FeatureCollection, found ${describeValue(p.found)}` +
        (p.singleFeature ? ' (a single GeoJSON Feature: wrap it in a FeatureCollection)' : ''),
      elementNotObject: (p: { index: number; found: unknown }) => `element ${p.index} of the JSON array is ${describeValue(p.found)}, not an object`,
      geojsonNoType: () => 'not a GeoJSON FeatureCollection (no type "FeatureCollection")',
      geojsonNoFeatures: () => 'GeoJSON FeatureCollection has no "features" array',
      geojsonFeatureNotObject: (p: { index: number }) => `GeoJSON feature ${p.index} is not an object`,
      geojsonPropertiesNotObject: (p: { index: number }) => `GeoJSON feature ${p.index} has "properties" that is not an object`,
      // CSV (lines are 1-based)
      csvEmpty: () => 'empty CSV: no header row',
      csvUnclosedQuote: (p: { line: number }) => `CSV line ${p.line}: a quoted field is never closed`,
      csvTextAfterQuote: (p: { line: number; char: string }) => `CSV line ${p.line}: unexpected ${quoteInput(p.char)} after a closing quote`,
      csvTooManyFields: (p: { line: number; fields: number; headerFields: number }) =>
        `CSV line ${p.line}: ${p.fields} fields but the header has ${p.headerFields}`,
      // Arrow IPC
      arrowReaderFailed: (p: { reason: string }) => `Arrow IPC reader failed: ${p.reason}`,
      arrowNoColumns: () => 'Arrow IPC data holds no columns',
      arrowFileTruncated: () => 'Arrow IPC file is truncated (no closing ARROW1 magic)',
      arrowStreamTruncated: (p: { reason: string }) => `Arrow IPC stream is truncated: ${p.reason}`,
      arrowStreamMalformed: (p: { reason: string }) => p.reason,
      /** A batch whose buffers do not hold what its header declares; `column` is its field path, or undefined for the batch as a whole. */
      arrowBatchInvalid: corruptBatch,
      arrowTooLarge: (p: { reason: string }) => `the Arrow data decompresses past what can be held: ${p.reason}`,
      featherV1: () => 'Feather v1 is not supported; save it again as Feather v2 (Arrow IPC)',
      notArrow: () => 'not Arrow IPC data (no ARROW1 magic and no stream continuation marker; pre-0.15 streams are not supported)',
      // Parquet
      parquetUnavailable: (p: { reason: string }) => `the Parquet reader (parquet-wasm) could not be loaded: ${p.reason}`,
      notParquet: () => 'not a Parquet file (no PAR1 magic at the start)',
      parquetTooShort: () => 'the Parquet file is truncated (too short for a footer)',
      parquetEncrypted: () => 'encrypted Parquet files are not supported',
      parquetNoClosingMagic: () => 'the Parquet file is truncated (no closing PAR1 magic)',
      parquetNoColumns: () => 'the Parquet file holds no columns',
      /** A Rust panic (`RuntimeError: unreachable`), which says nothing to a user; corrupt data triggers it in practice. */
      parquetCrashed: (p: { reason: string }) => `the Parquet reader crashed (${p.reason}); the file is probably corrupt`,
      parquetReaderFailed: (p: { reason: string }) => `Parquet reader failed: ${p.reason}`,
    }),
  },
  S2SP_ERR_CHART_UNDRAWABLE: {
    status: 500,
    /** `reason` is what Vega or resvg said. */
    message: (p: { reason: string }) => `the chart could not be drawn from these rows (${p.reason}); the statistics above are complete`,
  },
  /** `reason` is the text of the tool error the demo's own call got. */
  S2SP_ERR_DEMO_FAILED: {
    status: 500,
    message: (p: { reason: string }) => `a tool call of the demo failed: ${quoteInput(p.reason)}`,
  },
  S2SP_ERR_QUERY_ARG_INVALID: {
    status: 400,
    message: situations({
      sqlEmpty: () => 'sql must be a non-empty string holding one SELECT statement',
      tablesNotObject: (p: { got: unknown }) =>
        `tables must be an object mapping each table name in the SQL to a resource_url, e.g. {"orders": "http://..."}, got ${describeValue(p.got)}`,
      tablesEmpty: () => 'tables names no table; map each table name in the SQL to the resource_url a resource tool returned',
      tableSource: (p: { table: string; got: unknown }) =>
        `tables[${quoteInput(p.table)}] must be a resource_url (http or https) or a ddi:// handle, got ${describeValue(p.got)}`,
      ddiNotDelivered: (p: { table: string }) =>
        `tables[${quoteInput(p.table)}] is a ddi:// handle, which the agent's SDK replaces with the rows it holds (tables_data); ` +
        'call this tool through an S2SP-aware client (s2sp/ai-sdk, s2sp/langchain, ...), or use mode "async" and pass the resource_url',
      tableTwice: (p: { table: string }) => `the table ${quoteInput(p.table)} is named in both tables and tables_data; name each table once`,
      tableDataNotRows: (p: { table: string }) => `tables_data[${quoteInput(p.table)}] must be a string holding a JSON array of rows`,
    }),
  },
  S2SP_ERR_QUERY_SQL_INVALID: {
    status: 400,
    message: situations({
      /** Refused before any source was fetched: the source tokens are still unspent. */
      rejected: (p: { detail: string }) =>
        `the SQL was refused before any source was fetched (the resource_urls are still unused): ${cut(p.detail, SERVER_TEXT_MAX_CHARS)}`,
      /** Failed once the sources were being fetched: their tokens may be spent. */
      failed: (p: { detail: string }) =>
        `the SQL failed against the fetched tables (a resource_url read to its end is spent; call its resource tool again for a fresh one): ${cut(p.detail, SERVER_TEXT_MAX_CHARS)}`,
      duplicateColumn: (p: { column: string }) =>
        `the result has two columns named ${quoteInput(p.column)}; name each result column once (SELECT a.id AS order_id, b.id AS customer_id, ...)`,
    }),
  },
  S2SP_ERR_QUERY_TABLE_UNKNOWN: {
    status: 400,
    message: (p: { name: string; known: readonly string[] }) =>
      `the SQL reads the table ${quoteInput(p.name)}, which tables does not name (it names ${p.known.map((k) => quoteInput(k)).join(', ')}); ` +
      'the resource_urls are still unused: add the table to tables, or fix its name in the SQL',
  },
  S2SP_ERR_QUERY_NOT_ALLOWED: {
    status: 403,
    message: situations({
      statements: (p: { count: number }) => `sql must hold exactly one statement, a SELECT; it holds ${p.count}`,
      statementType: (p: { type: string }) => `sql must be a SELECT (or WITH ... SELECT); this is a ${p.type} statement`,
      tableFunction: (p: { name: string }) =>
        `the query calls the table function ${quoteInput(p.name)}; query_rows reads only its tables (and range, generate_series, unnest), never files or the network`,
      sandbox: (p: { detail: string }) =>
        `the query tried to reach something outside its tables (files, the network, settings, extensions), which query_rows does not allow: ${cut(p.detail, SERVER_TEXT_MAX_CHARS)}`,
    }),
  },
  S2SP_ERR_QUERY_SOURCE_FAILED: {
    status: 502,
    message: (p: { table: string; code: string; detail: string }) => `the table ${quoteInput(p.table)} could not be fetched (${p.code}): ${p.detail}`,
  },
  S2SP_ERR_QUERY_TOO_LARGE: {
    status: 507,
    message: situations({
      result: (p: { limitBytes: number }) =>
        `the query's result outgrew ${p.limitBytes} bytes, the most the body store can hold; aggregate it, select fewer columns, or add a WHERE or LIMIT`,
      memory: (p: { detail: string }) =>
        `the query needs more memory than the engine may use: ${cut(p.detail, SERVER_TEXT_MAX_CHARS)}; aggregate or filter earlier in the query`,
    }),
  },
  S2SP_ERR_QUERY_TIMEOUT: {
    status: 504,
    message: (p: { limitMs: number }) =>
      `the query ran past its time limit of ${p.limitMs} ms and was stopped; make it cheaper (filter before joining, aggregate), or ask for a longer limit`,
  },
  S2SP_ERR_QUERY_TYPE_UNSUPPORTED: {
    status: 400,
    message: situations({
      source: (p: { table: string; column: string; type: string }) =>
        `column ${quoteInput(p.column)} of the table ${quoteInput(p.table)} has the Arrow type ${p.type}, which the SQL engine cannot hold exactly ` +
        '(README, "query_rows" > "Types")',
      result: (p: { column: string; type: string }) =>
        `result column ${quoteInput(p.column)} has the engine type ${p.type}, which has no exact Arrow counterpart here; ` +
        `cast it in the SQL (CAST(... AS VARCHAR), or a number or date type)`,
      hugeintRange: (p: { column: string }) =>
        `result column ${quoteInput(p.column)} holds an integer of more than 38 digits, beyond Decimal(38, 0); cast it to DOUBLE or VARCHAR`,
    }),
  },
  S2SP_ERR_CLI_PACKAGE_MISSING: {
    status: 500,
    /** `purpose` completes "NAME is needed for ..."; `install` is the npm install argument (name, or 'name@range'). */
    message: (p: { pkg: string; purpose: string; install: string }) =>
      `the package ${p.pkg} is needed for ${p.purpose} and is not installed; install it next to s2sp: npm install ${p.install}`,
  },
} as const satisfies Record<string, { status: number; message: Template }>;

/** A stable error code, `S2SP_ERR_<AREA>_<WHAT>`. */
export type ErrorCode = keyof typeof ERRORS;

type TemplateOf<C extends ErrorCode> = (typeof ERRORS)[C]['message'];

/** The values a code's message template needs; `undefined` when it needs none. */
export type ErrorParams<C extends ErrorCode> = TemplateOf<C> extends () => string ? undefined : Parameters<TemplateOf<C>>[0];

/** Options of an S2SPError, as `Error` takes them. */
export interface S2SPErrorOptions {
  cause?: unknown;
}

/** What `new S2SPError(code, ...)` takes after the code: `[options?]`, or `[params, options?]` when the template needs values. */
export type ErrorArgs<C extends ErrorCode> =
  TemplateOf<C> extends () => string ? [options?: S2SPErrorOptions] : [params: ErrorParams<C>, options?: S2SPErrorOptions];

/** A message rendered elsewhere; only {@link S2SPError.fromWire} makes one. */
class RenderedMessage {
  constructor(readonly text: string) {}
}

/**
 * Error carrying a stable code and the HTTP status the data plane maps it to.
 * Its message is the code's template rendered with the params passed:
 * `new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND')`,
 * `new S2SPError('S2SP_ERR_CACHE_FULL', { neededBytes, freeBytes, maxBytes })`,
 * `new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'emptyFile' }, { cause })`.
 */
export class S2SPError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly status: number;

  /**
   * @param code stable error code from {@link ERRORS}
   * @param args the values the code's template needs (omitted when it needs none), then `{ cause }` if any
   */
  constructor(code: C, ...args: ErrorArgs<C>) {
    const [first, second] = args as readonly unknown[];
    const template = ERRORS[code].message as (params: unknown) => string;
    let message: string;
    let options: unknown;
    if (first instanceof RenderedMessage) {
      message = first.text;
      options = second;
    } else if (template.length === 0) {
      message = template(undefined);
      options = first;
    } else {
      message = template(first);
      options = second;
    }
    super(message, options as S2SPErrorOptions | undefined);
    this.name = 'S2SPError';
    this.code = code;
    this.status = ERRORS[code].status;
  }

  /**
   * Rebuilds an error from its wire form `{code, message}`: an error a worker
   * sent back (structured clone keeps no class) or an error document. This is
   * the only way to give an S2SPError a message its template did not render
   * here; never use it to bring your own wording.
   * @param code the code as received (check it with {@link isS2SPError} first)
   * @param message the message as received, already rendered
   */
  static fromWire(code: ErrorCode, message: string, options?: S2SPErrorOptions): S2SPError {
    return new S2SPError(code, ...([new RenderedMessage(message), options] as unknown as ErrorArgs<ErrorCode>));
  }
}

/** True for an S2SPError, or for a plain object carrying one of our codes (after structured clone). */
export function isS2SPError(value: unknown, code?: ErrorCode): value is S2SPError {
  if (typeof value !== 'object' || value === null) return false;
  const c = (value as { code?: unknown }).code;
  if (typeof c !== 'string' || !Object.hasOwn(ERRORS, c)) return false;
  return code === undefined || c === code;
}
