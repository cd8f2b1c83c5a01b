/**
 * The error catalogue (src/errors.ts), walked: every code is raised
 * somewhere, every documented code exists, the data plane's statuses are
 * SPEC 3.3's, every template renders for sample values, echoed inputs stay
 * bounded, and no call site brings its own prose.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import {
  ERRORS,
  QUOTED_INPUT_MAX_CHARS,
  S2SPError,
  isS2SPError,
  listForMessage,
  quoteInput,
  type ErrorArgs,
  type ErrorCode,
  type ErrorParams,
} from '../src/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CODES = Object.keys(ERRORS) as ErrorCode[];

/** Files that may rebuild an error from `{code, message}` with S2SPError.fromWire. */
const FROM_WIRE_FILES = ['src/data/error-reply.ts'];

/** SPEC 3.3: the status of each data-plane code. */
const SPEC_STATUS: Record<string, number> = {
  S2SP_ERR_REQUEST_BODY_INVALID: 400,
  S2SP_ERR_REQUEST_ROW_IDS_INVALID: 400,
  S2SP_ERR_REQUEST_COLUMNS_INVALID: 400,
  S2SP_ERR_TOKEN_NOT_FOUND: 404,
  S2SP_ERR_ACCEPT_UNSUPPORTED: 406,
  S2SP_ERR_TOKEN_IN_FLIGHT: 409,
  S2SP_ERR_REQUEST_TOO_LARGE: 413,
  S2SP_ERR_CONTENT_TYPE_UNSUPPORTED: 415,
  S2SP_ERR_STORE_UNAVAILABLE: 503,
  S2SP_ERR_INTERNAL: 500,
};

/** Sample values for a code: `null` without params, one params object, or one per situation. */
type Sample<C extends ErrorCode> =
  ErrorParams<C> extends undefined
    ? null
    : ErrorParams<C> extends { problem: string }
      ? { readonly [P in ErrorParams<C>['problem']]: Omit<Extract<ErrorParams<C>, { problem: P }>, 'problem'> }
      : ErrorParams<C>;

// The compiler checks that every code, and every situation of a code, has a sample.
const SAMPLES: { readonly [C in ErrorCode]: Sample<C> } = {
  S2SP_ERR_REQUEST_BODY_INVALID: { notObject: { got: [1] }, notJson: {}, lengthMismatch: {} },
  S2SP_ERR_REQUEST_ROW_IDS_INVALID: {
    notArray: { got: 'x' },
    notIntegers: { bad: [-1, 0.5, 'a'] },
    outOfRange: { totalRows: 10, bad: [10, 11] },
  },
  S2SP_ERR_REQUEST_COLUMNS_INVALID: {
    notArray: { got: {} },
    notStrings: { bad: [1, null] },
    unknown: { unknown: ['nope'], available: ['a', 'b'] },
  },
  S2SP_ERR_TOKEN_NOT_FOUND: null,
  S2SP_ERR_ROUTE_NOT_FOUND: null,
  S2SP_ERR_METHOD_NOT_ALLOWED: { method: 'GET' },
  S2SP_ERR_ACCEPT_UNSUPPORTED: { accept: 'text/html', supported: ['application/json'], missingCodecs: ['lz4'] },
  S2SP_ERR_TOKEN_IN_FLIGHT: null,
  S2SP_ERR_REQUEST_TOO_LARGE: null,
  S2SP_ERR_CONTENT_TYPE_UNSUPPORTED: null,
  S2SP_ERR_INTERNAL: null,
  S2SP_ERR_INTERNAL_INVARIANT: { columnSplit: {}, notRecordBatch: {}, compressorMissing: { codec: 'lz4' }, floatText: {} },
  S2SP_ERR_REQUEST_MALFORMED: { parser: { parserCode: 'HPE_INVALID_CHUNK_SIZE' }, url: {} },
  S2SP_ERR_REQUEST_TIMEOUT: null,
  S2SP_ERR_REQUEST_HEADERS_TOO_LARGE: null,
  S2SP_ERR_MCP_HOST_REFUSED: { host: { host: 'evil.example' }, origin: { origin: 'http://evil.example' } },
  S2SP_ERR_MCP_BODY_TOO_LARGE: { limitBytes: 67_108_864 },
  S2SP_ERR_AUTH_TOKEN_MISSING: null,
  S2SP_ERR_AUTH_TOKEN_INVALID: {
    malformed: {},
    signature: {},
    algorithm: {},
    issuer: {},
    audience: { audience: 'https://mcp.example.com/mcp' },
    expired: {},
    notYetValid: {},
    inactive: {},
  },
  S2SP_ERR_AUTH_SCOPE_INSUFFICIENT: { scopes: ['mcp:tools'] },
  S2SP_ERR_AUTH_ISSUER_UNAVAILABLE: null,
  S2SP_ERR_CACHE_FULL: { budget: { neededBytes: 100, freeBytes: 10, maxBytes: 1000 }, storeMemory: { neededBytes: 100 } },
  S2SP_ERR_CACHE_CLOSED: null,
  S2SP_ERR_ENCODER_POOL_CLOSED: null,
  S2SP_ERR_STORE_UNAVAILABLE: null,
  S2SP_ERR_DATA_PLANE_DOWN: null,
  S2SP_ERR_DOMAINS_INVALID: { jsonObject: {}, badJson: {}, notStrings: {}, noColumn: { value: ' , ' } },
  S2SP_ERR_DOMAINS_UNKNOWN: { unknown: ['nope'], columns: ['mag', 'place'] },
  S2SP_ERR_TABLE_INVALID: {
    notTable: {},
    batchColumnsDiffer: { index: 2 },
    notRecordBatch: { index: 1 },
    rowNotObject: { index: 3 },
    rowNoRowId: { index: 4 },
    notJsonValue: { column: 'n', type: 'function' },
    loneSurrogateName: { column: 'k\ud800' },
    loneSurrogateValue: { column: 's', index: 2 },
    rowIdNotNumbers: { type: 'Utf8' },
    rowIdNulls: {},
    rowIdNotPositional: { row: 1, has: 7 },
  },
  S2SP_ERR_TABLE_TOO_LARGE: { column: { column: 'text' }, streamedBody: { maxBytes: 1024 }, tooManyRows: {} },
  S2SP_ERR_TABLE_UNSUPPORTED_TYPE: {
    unsupportedType: { column: 'c', type: 'RunEndEncoded<Int32, Utf8>' },
    nestedDictionary: { column: 'tags.item', type: 'Dictionary<Int32, Utf8>' },
    unknownZone: { column: 'when', zone: 'Mars/Olympus_Mons' },
    duplicateField: { column: 's', field: 'a' },
  },
  S2SP_ERR_CONSUMER_ARG_INVALID: {
    rowIdsEmpty: {},
    rowIdsNotIntegers: {},
    format: { value: 'xml' },
    codec: { value: 'gzip' },
    allowedOriginNotUrl: { origin: 'nope' },
    allowedOriginScheme: { origin: 'ftp://x' },
    rowsNotString: { param: 'abstract_data', got: [] },
    rowsMissing: { param: 'body_data' },
    rowsNotJson: { param: 'abstract_data' },
    rowsNotArray: { param: 'body_data', got: {} },
    rowNotObject: { param: 'abstract_data', index: 1 },
    rowNoRowId: { param: 'body_data', index: 2 },
    rowBadRowId: { param: 'abstract_data', index: 0, id: '0' },
    rowTooDeep: { param: 'body_data', index: 3, maxDepth: 64 },
    idBad: { index: 1, id: -1 },
    headerNotNames: {},
    headerDuplicate: { name: 'mag' },
    headerNoRowId: {},
    lineNotArray: { index: 2 },
    lineLength: { index: 0, values: 1, columns: 2 },
    urlAndBody: {},
    starWithoutBody: {},
    mappingNotString: {},
    mappingNotJson: {},
    mappingNotObject: {},
    mappingBadTarget: { source: 'a', target: '' },
    mappingRowId: {},
    mappingSameTarget: { first: 'a', second: 'b', target: 'c' },
  },
  S2SP_ERR_CONSUMER_URL_INVALID: {
    missing: {},
    notUrl: {},
    scheme: { protocol: 'ddi:' },
    path: {},
    token: { redactedToken: 'abcdef…' },
  },
  S2SP_ERR_CONSUMER_ORIGIN_REFUSED: { origin: 'https://evil.example', allowedOrigins: ['https://data.example'] },
  S2SP_ERR_CONSUMER_BODY_TOO_LARGE: {
    declared: { maxBytes: 10, declaredBytes: 20 },
    received: { maxBytes: 10 },
    jsonTooLong: { bytes: 600_000_000 },
    decompressed: { maxBytes: 10, reason: 'its buffers declare 20 decompressed bytes' },
  },
  S2SP_ERR_CONSUMER_FETCH_FAILED: {
    aborted: {},
    timeout: { timeoutMs: 5 },
    unreachable: { origin: 'http://127.0.0.1:1', reason: 'connect ECONNREFUSED' },
    closedEarly: {},
    broken: {},
    httpStatus: { status: 404, serverCode: 'S2SP_ERR_TOKEN_NOT_FOUND', serverText: 'gone' },
  },
  S2SP_ERR_CONSUMER_RESPONSE_INVALID: {
    notObject: {},
    noSchema: {},
    batchRowCount: { index: 1, declared: 10, decoded: 9 },
    rowIdNotAscending: { id: 3, last: 5 },
    missingRows: { missing: [5, 9], asked: 3 },
    missingColumns: { missing: ['nope'] },
    batchInvalid: { column: 'name', reason: 'offset 2 is past its data' },
    noBody: {},
    badTotalRows: {},
    badColumnsReturned: {},
    badRows: { reason: 'row 1 is not a JSON object' },
    empty: {},
    notJson: {},
    rowNotObject: { index: 1 },
    rowNoRowId: { index: 2 },
    duplicateRowId: { id: 3 },
    wrongFormat: { asked: 'arrow', contentType: 'text/html' },
    arrowUndecodable: { reason: 'bad' },
    rowCountMismatch: { declared: 3, decoded: 2 },
    noFields: {},
    firstField: { name: 'x' },
    rowIdType: { type: 'Utf8' },
    rowIdRange: { id: -1 },
    rowIdNulls: {},
    cutShort: { reason: 'a message body ends early' },
    badStream: { reason: 'not an Arrow IPC stream' },
  },
  S2SP_ERR_DDI_HANDLE_UNKNOWN: { redactedHandle: '"ddi://abcdef…"' },
  S2SP_ERR_CODEC_UNAVAILABLE: {
    missing: { codec: 'lz4', reason: 'no binary' },
    sentMissing: { codec: 'zstd' },
    codecSent: { codec: 'ZSTD' },
    unknown: { codec: 'snappy', known: ['zstd', 'lz4'] },
  },
  S2SP_ERR_OPTION_INVALID: { option: 'chunkRows', expected: 'an integer >= 1', value: 0 },
  S2SP_ERR_PUBLIC_URL_REQUIRED: { host: '0.0.0.0' },
  S2SP_ERR_SERVER_STATE: { mounted: {}, listening: {}, dataPlaneMounted: {} },
  S2SP_ERR_JSON_SYNTAX: { end: {}, token: { token: 'x', position: 3 }, tooDeep: { position: 10 }, badEscape: { position: 4 } },
  S2SP_ERR_TOOL_FAILED: null,
  S2SP_ERR_TOOL_CANCELLED: null,
  S2SP_ERR_CHART_UNDRAWABLE: { reason: 'SVG has an invalid size' },
  S2SP_ERR_DEMO_FAILED: { reason: 'S2SP_ERR_TOOL_FAILED' },
  S2SP_ERR_QUERY_ARG_INVALID: {
    sqlEmpty: {},
    tablesNotObject: { got: [1] },
    tablesEmpty: {},
    tableSource: { table: 'orders', got: 'ftp://x' },
    ddiNotDelivered: { table: 'orders' },
    tableTwice: { table: 'orders' },
    tableDataNotRows: { table: 'orders' },
  },
  S2SP_ERR_QUERY_SQL_INVALID: {
    rejected: { detail: 'Parser Error: syntax error at or near "SELEC"' },
    failed: { detail: 'Conversion Error: Could not convert string "x" to INT32' },
    duplicateColumn: { column: 'id' },
  },
  S2SP_ERR_QUERY_TABLE_UNKNOWN: { name: 'ordrs', known: ['orders', 'customers'] },
  S2SP_ERR_QUERY_NOT_ALLOWED: {
    statements: { count: 2 },
    statementType: { type: 'COPY' },
    tableFunction: { name: 'read_csv' },
    sandbox: { detail: 'Permission Error: Cannot access file "/etc/passwd"' },
  },
  S2SP_ERR_QUERY_SOURCE_FAILED: { table: 'orders', code: 'S2SP_ERR_TOKEN_CONSUMED', detail: 'the token was used' },
  S2SP_ERR_QUERY_TOO_LARGE: { result: { limitBytes: 1000 }, memory: { detail: 'Out of Memory Error: failed to allocate' } },
  S2SP_ERR_QUERY_TIMEOUT: { limitMs: 30000 },
  S2SP_ERR_QUERY_TYPE_UNSUPPORTED: {
    source: { table: 'orders', column: 'ratio', type: 'Float16' },
    result: { column: 'l', type: 'INTEGER[]' },
    hugeintRange: { column: 'total' },
  },
  S2SP_ERR_CLI_PACKAGE_MISSING: { pkg: 'parquet-wasm', purpose: 'reading Parquet files', install: "'parquet-wasm@~0.8.0'" },
  S2SP_ERR_INPUT_UNREADABLE: {
    unknownFormat: { path: 'a.txt', format: 'xml', formats: ['json', 'csv'] },
    fileUnreadable: { path: 'a.csv', fsCode: 'ENOENT', reason: 'ENOENT: no such file or directory' },
    asFormat: { path: 'a.csv', format: 'csv', reason: 'empty CSV: no header row' },
    emptyFile: {},
    notUtf8: {},
    invalidJson: { reason: 'Unexpected token', jsonLines: true },
    notFeatureCollection: { found: [] },
    notTable: { found: { type: 'Feature' }, singleFeature: true },
    elementNotObject: { index: 2, found: 'x' },
    geojsonNoType: {},
    geojsonNoFeatures: {},
    geojsonFeatureNotObject: { index: 0 },
    geojsonPropertiesNotObject: { index: 1 },
    csvEmpty: {},
    csvUnclosedQuote: { line: 3 },
    csvTextAfterQuote: { line: 2, char: 'x' },
    csvTooManyFields: { line: 4, fields: 3, headerFields: 2 },
    arrowReaderFailed: { reason: 'bad' },
    arrowNoColumns: {},
    arrowFileTruncated: {},
    arrowStreamTruncated: { reason: 'a message body ends early' },
    arrowStreamMalformed: { reason: 'bad metadata' },
    arrowBatchInvalid: { column: undefined, reason: 'buffer 3 lies outside the body' },
    arrowTooLarge: { reason: 'its buffers declare 9000000000000 decompressed bytes' },
    featherV1: {},
    notArrow: {},
    parquetUnavailable: { reason: 'no wasm' },
    notParquet: {},
    parquetTooShort: {},
    parquetEncrypted: {},
    parquetNoClosingMagic: {},
    parquetNoColumns: {},
    parquetCrashed: { reason: 'unreachable' },
    parquetReaderFailed: { reason: 'bad page' },
  },
};

/** Params keys that carry an input (the agent's, a client's, a file's or a foreign server's). */
const INPUT_KEYS = new Set([
  'got',
  'bad',
  'unknown',
  'accept',
  'method',
  'value',
  'origin',
  'source',
  'target',
  'first',
  'second',
  'id',
  'protocol',
  'redactedToken',
  'path',
  'char',
  'found',
  'name',
  'column',
  'contentType',
  'serverCode',
  'serverText',
  'host',
]);

/** One code with one set of sample values. */
interface Walked {
  code: ErrorCode;
  params: Record<string, unknown> | undefined;
  label: string;
}

/** Every (code, params) pair of SAMPLES; params undefined for codes without any. */
function samples(): Walked[] {
  return CODES.flatMap((code): Walked[] => {
    const sample = SAMPLES[code] as Record<string, unknown> | null;
    const problems = (ERRORS[code].message as { problems?: readonly string[] }).problems;
    if (sample === null) return [{ code, params: undefined, label: code }];
    if (problems === undefined) return [{ code, params: sample, label: code }];
    assert.deepEqual(Object.keys(sample).sort(), [...problems].sort(), `${code}: one sample per situation`);
    return problems.map((problem) => ({
      code,
      params: { problem, ...(sample[problem] as Record<string, unknown>) },
      label: `${code} ${problem}`,
    }));
  });
}

function render(code: ErrorCode, params: Record<string, unknown> | undefined, options?: { cause?: unknown }): S2SPError {
  const args = params === undefined ? [options] : [params, options];
  return new S2SPError(code, ...(args as unknown as ErrorArgs<ErrorCode>));
}

/** Every .ts file under a folder of the repository, as [path relative to the root, text]. */
function sourcesUnder(folder: string): Array<[string, string]> {
  const dir = join(ROOT, folder);
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => [relative(ROOT, join(dir, name)).split(sep).join('/'), readFileSync(join(dir, name), 'utf8')]);
}

const SOURCES = [...sourcesUnder('src'), ...sourcesUnder('bench')];

test('the scan finds the sources', () => {
  assert.ok(
    SOURCES.some(([path]) => path === 'src/errors.ts'),
    `no src/errors.ts under ${ROOT}`,
  );
});

test('every code is raised or matched somewhere in src/', () => {
  const others = SOURCES.filter(([path]) => path.startsWith('src/') && path !== 'src/errors.ts').map(([, text]) => text);
  const unused = CODES.filter((code) => !others.some((text) => new RegExp(`['"\`]${code}['"\`]`).test(text)));
  assert.deepEqual(unused, []);
});

test('every code the docs and comments name is in the catalogue', () => {
  const docs = ['README.md', 'native-notes.md', ...(readdirSync(join(ROOT, 'bench')) as string[]).map((n) => `bench/${n}`)]
    .filter((path) => path.endsWith('.md') && existsSync(join(ROOT, path)))
    .map((path) => [path, readFileSync(join(ROOT, path), 'utf8')] as [string, string]);
  const named = new Map<string, string>();
  for (const [path, text] of [...docs, ...SOURCES]) {
    for (const match of text.matchAll(/S2SP_ERR_[A-Z0-9_]*[A-Z0-9]/g)) named.set(match[0], path);
  }
  assert.ok(named.size >= 5, 'the scan finds codes');
  const missing = [...named].filter(([code]) => !Object.hasOwn(ERRORS, code)).map(([code, path]) => `${code} (${path})`);
  assert.deepEqual(missing, []);
});

test('the data plane answers with SPEC 3.3 statuses', () => {
  for (const [code, status] of Object.entries(SPEC_STATUS)) {
    assert.ok(Object.hasOwn(ERRORS, code), `${code} is missing from the catalogue`);
    assert.equal(ERRORS[code as ErrorCode].status, status, code);
  }
  for (const code of CODES) {
    const { status } = ERRORS[code];
    assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
    assert.match(code, /^S2SP_ERR_[A-Z0-9]+(_[A-Z0-9]+)*$/);
  }
});

test('every template renders a message for its sample values', () => {
  const all = samples();
  assert.ok(all.length > CODES.length, 'situations are walked');
  for (const { code, params, label } of all) {
    const cause = new Error('cause');
    const error = render(code, params, { cause });
    assert.ok(error instanceof S2SPError && error instanceof Error, label);
    assert.equal(error.code, code, label);
    assert.equal(error.status, ERRORS[code].status, label);
    assert.equal(error.cause, cause, label);
    assert.equal(error.name, 'S2SPError', label);
    assert.ok(isS2SPError(error, code), label);
    assert.equal(typeof error.message, 'string', label);
    assert.ok(error.message.trim().length > 10, `${label}: ${JSON.stringify(error.message)}`);
    // A value that did not arrive renders as one of these ("pass undefined" is advice about an option).
    for (const junk of ['undefined', '[object Object]', 'NaN']) {
      assert.ok(!error.message.replace('pass undefined', '').includes(junk), `${label}: ${error.message}`);
    }
    // The catalogue's wording, not the situation's name.
    if (params?.problem !== undefined) assert.notEqual(error.message, params.problem, label);
  }
});

test('an echoed input is quoted with a bounded prefix', () => {
  const long = 'x'.repeat(10_000);
  let swept = 0;
  for (const { code, params, label } of samples()) {
    if (params === undefined) continue;
    for (const [key, value] of Object.entries(params)) {
      if (!INPUT_KEYS.has(key)) continue;
      const huge = typeof value === 'string' ? long : Array.isArray(value) && value.every((v) => typeof v === 'string') ? [long] : undefined;
      if (huge === undefined) continue;
      const { message } = render(code, { ...params, [key]: huge });
      swept++;
      // Foreign servers' text is kept up to 200 characters, every other input up to QUOTED_INPUT_MAX_CHARS.
      assert.ok(!message.includes('x'.repeat(201)), `${label} ${key}: ${message.length} characters`);
    }
  }
  assert.ok(swept > 20, `${swept} inputs swept`);
});

test('quoteInput quotes strings and cuts them with an ellipsis', () => {
  assert.equal(quoteInput('a"b'), '"a\\"b"');
  assert.equal(quoteInput('line\nbreak'), '"line\\nbreak"');
  assert.equal(quoteInput(3), '3');
  assert.equal(quoteInput(Number.NaN), 'NaN');
  assert.equal(quoteInput(undefined), 'undefined');
  assert.equal(quoteInput(null), 'null');
  assert.equal(quoteInput({ a: 1 }), '{"a":1}');
  const cut = quoteInput('y'.repeat(1000));
  assert.equal(cut, `"${'y'.repeat(QUOTED_INPUT_MAX_CHARS)}…"`);
  assert.equal(quoteInput('z'.repeat(QUOTED_INPUT_MAX_CHARS)), `"${'z'.repeat(QUOTED_INPUT_MAX_CHARS)}"`);
  assert.ok(quoteInput(Array.from({ length: 1000 }, (_, i) => i)).length <= QUOTED_INPUT_MAX_CHARS + 1);
  // A surrogate pair is never split.
  const emoji = quoteInput(`${'a'.repeat(QUOTED_INPUT_MAX_CHARS - 1)}😀tail`);
  assert.equal(emoji, `"${'a'.repeat(QUOTED_INPUT_MAX_CHARS - 1)}…"`);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(quoteInput(cyclic), '[object Object]');
});

test('listForMessage lists a few bounded values and counts the rest', () => {
  assert.equal(listForMessage(['a', 1, null]), '"a", 1, null');
  assert.equal(listForMessage([1, 2, 3, 4, 5, 6, 7]), '1, 2, 3, 4, 5 (and 2 more)');
  assert.ok(listForMessage(['q'.repeat(10_000)]).length <= QUOTED_INPUT_MAX_CHARS + 3);
});

test('fromWire keeps a rendered message and takes the status from the catalogue', () => {
  // What a worker's error looks like after structured clone.
  const wire = { code: 'S2SP_ERR_TABLE_INVALID', message: 'row 2 is not a JSON object' };
  assert.ok(isS2SPError(wire, 'S2SP_ERR_TABLE_INVALID'));
  const cause = new Error('x');
  const error = S2SPError.fromWire('S2SP_ERR_TABLE_INVALID', wire.message, { cause });
  assert.ok(error instanceof S2SPError);
  assert.equal(error.message, wire.message);
  assert.equal(error.code, 'S2SP_ERR_TABLE_INVALID');
  assert.equal(error.status, 500);
  assert.equal(error.cause, cause);
  assert.equal(S2SPError.fromWire('S2SP_ERR_TOKEN_NOT_FOUND', 'as sent').message, 'as sent');
});

test('isS2SPError knows only the catalogue codes', () => {
  assert.equal(isS2SPError({ code: 'toString' }), false);
  assert.equal(isS2SPError({ code: 'S2SP_ERR_NOPE' }), false);
  assert.equal(isS2SPError(new Error('x')), false);
  assert.equal(isS2SPError({ code: 'S2SP_ERR_INTERNAL' }, 'S2SP_ERR_TOKEN_NOT_FOUND'), false);
});

/** The expression inside any parentheses. */
function unwrap(node: ts.Expression): ts.Expression {
  return ts.isParenthesizedExpression(node) ? unwrap(node.expression) : node;
}

/** True when an argument is text written at the call site: a string or template literal, or one joined or chosen from such. */
function isProse(node: ts.Expression): boolean {
  const n = unwrap(node);
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateExpression(n)) return true;
  if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) return isProse(n.left) || isProse(n.right);
  if (ts.isConditionalExpression(n)) return isProse(n.whenTrue) || isProse(n.whenFalse);
  return false;
}

test('no call site brings its own prose: new S2SPError(code, params) only', () => {
  const problems: string[] = [];
  let calls = 0;
  for (const [path, text] of SOURCES) {
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const where = (node: ts.Node) => `${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && node.expression.getText() === 'S2SPError') {
        calls++;
        const [code, second] = node.arguments ?? [];
        if (path !== 'src/errors.ts') {
          if (code === undefined || !ts.isStringLiteral(code) || !Object.hasOwn(ERRORS, code.text)) {
            problems.push(`${where(node)}: the first argument must be a catalogue code written out`);
          }
        }
        if (second !== undefined && isProse(second)) {
          problems.push(`${where(node)}: message text passed; pass values and word it in src/errors.ts`);
        }
      }
      if (ts.isCallExpression(node) && node.expression.getText() === 'S2SPError.fromWire' && path !== 'src/errors.ts' && !FROM_WIRE_FILES.includes(path)) {
        problems.push(`${where(node)}: S2SPError.fromWire is only for errors rebuilt from the wire (${FROM_WIRE_FILES.join(', ')})`);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  assert.ok(calls > 50, `${calls} call sites scanned`);
  assert.deepEqual(problems, []);
});
