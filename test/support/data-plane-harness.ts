/**
 * Test support for the columnar data-plane tests: a data plane listening on
 * 127.0.0.1, a raw node:http client that keeps the response bytes exactly as
 * sent (no automatic decompression) and says whether the transfer completed,
 * and encoder pools that encode on the main thread (the worker's code path)
 * while counting and failing on demand.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { TestContext } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import type { BodyStore } from '../../src/cache/body-store.js';
import { tableFromSharedIpc } from '../../src/ipc/shared-body.js';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane, type DataPlaneOptions } from '../../src/data/data-plane-plugin.js';
import { encodeChunk } from '../../src/table/chunk-encoding.js';
import { concatParts } from '../../src/ipc/encode/message.js';
import { compressionFor } from './arrow-streams.js';
import { projectColumns } from '../../src/table/select.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import type { EncodeTask } from '../../src/worker/encode-task.js';
import type { EncoderPool } from '../../src/worker/encoder-pool.js';
import { watchLeases, type WatchedStore } from './lease-watch.js';

/** The Arrow stream media type, and the LZ4 variant. */
export const ARROW = 'application/vnd.apache.arrow.stream';
export const ARROW_LZ4 = `${ARROW}; codecs="lz4"`;
/** The Arrow stream media type asking for ZSTD. */
export const ARROW_ZSTD = `${ARROW}; codecs="zstd"`;

/** A data plane listening on 127.0.0.1. */
export interface Plane {
  app: FastifyInstance;
  /** The store given (or a MemoryStore), with its leases watched. */
  store: WatchedStore;
  base: string;
  /** Caches rows; returns the token. */
  mint(rows: readonly Record<string, unknown>[]): Promise<string>;
  /** POSTs a fetch request to a token's resource_url. */
  post(token: string, request?: object | string, headers?: Record<string, string>, onFirstBytes?: () => void): Promise<RawResponse>;
}

/** Starts a data plane (over `store`, default a fresh MemoryStore, watched); app and store close after the test. */
export async function startPlane(
  t: TestContext,
  options: Omit<DataPlaneOptions, 'store'> & { store?: BodyStore; beforeRegister?: (app: FastifyInstance) => void } = {},
): Promise<Plane> {
  const { beforeRegister, store: given, ...pluginOptions } = options;
  const store = watchLeases(given ?? new MemoryStore());
  const app = Fastify({ logger: false });
  beforeRegister?.(app);
  await app.register(s2spDataPlane, { ...pluginOptions, store });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  const base = `http://127.0.0.1:${address.port}`;
  return {
    app,
    store,
    base,
    mint: async (rows) => (await store.put(tableFromRows(rows))).token,
    post: (token, request = {}, headers = {}, onFirstBytes) => postRaw(`${base}/s2sp/data/${token}`, request, headers, onFirstBytes),
  };
}

/** A response as the socket delivered it. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Every body byte received, still content-encoded. */
  bytes: Buffer;
  /** True when the response ended properly (the whole body arrived). */
  complete: boolean;
  /** The body as JSON (throws on a short or non-JSON body). */
  json(): any;
}

/**
 * POSTs with node:http and collects the raw response, complete or cut.
 * @param onFirstBytes called once the status line and the first body bytes arrived
 */
export function postRaw(url: string, request: object | string = {}, headers: Record<string, string> = {}, onFirstBytes?: () => void): Promise<RawResponse> {
  const payload = typeof request === 'string' ? request : JSON.stringify(request);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        if (chunks.length === 0) onFirstBytes?.();
        chunks.push(chunk);
      });
      res.on('error', () => {}); // a cut transfer: 'close' below reports it
      res.on('close', () => {
        const bytes = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes,
          complete: res.complete,
          json: () => JSON.parse(bytes.toString('utf8')),
        });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Asserts a complete 200 and returns it. */
export function ok(res: RawResponse, label = ''): RawResponse {
  assert.equal(res.status, 200, `${label}: ${res.bytes.toString('utf8', 0, 300)}`);
  assert.equal(res.complete, true, `${label}: the transfer completed`);
  return res;
}

/** Asserts an error document with `status` and `code`; returns its message. */
export function assertErrorDocument(res: RawResponse, status: number, code: string): string {
  assert.equal(res.status, status, res.bytes.toString('utf8'));
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const doc = res.json();
  assert.equal(doc.error.code, code);
  assert.equal(typeof doc.error.message, 'string');
  return doc.error.message as string;
}

/** Encodes a task exactly as encode-worker.ts does, on this thread. */
export function encodeTaskInline(task: EncodeTask): Uint8Array {
  const table = projectColumns(tableFromSharedIpc(task.ipc), task.columns ?? undefined);
  return concatParts(encodeChunk(table, task.chunk, task.format, compressionFor(task.format)));
}

/** A fake EncoderPool: encodes on the main thread (after a turn of the loop), counts calls, fails where told. */
export interface SpyPool extends EncoderPool {
  /** run() calls so far. */
  calls: number;
  /** run() calls that have resolved or rejected. */
  settled: number;
  /** run() call number (1-based) that rejects; reset to undefined to heal. */
  failOnCall: number | undefined;
  closed: boolean;
  /** The byte arrays run() returned (to recognise them when the server writes them). */
  results: WeakSet<Uint8Array>;
}

/** Creates a {@link SpyPool}; `delegate` (a real pool) does the encoding when given. */
export function createSpyPool(
  threads: number,
  options: {
    failOnCall?: number;
    /** The failing call waits for this before it rejects (e.g. until the client saw the first bytes). */
    failAfter?: () => Promise<void>;
    delegate?: EncoderPool;
    onRun?: (call: number) => void;
    /** Told after each run() resolved or rejected (`settled` already counts it). */
    onSettle?: () => void;
  } = {},
): SpyPool {
  const pool: SpyPool = {
    threads,
    calls: 0,
    settled: 0,
    failOnCall: options.failOnCall,
    closed: false,
    results: new WeakSet(),
    async run(task) {
      const call = ++pool.calls;
      options.onRun?.(call);
      try {
        await nextTurn();
        if (pool.failOnCall !== undefined && call === pool.failOnCall) {
          await options.failAfter?.();
          throw new Error(`simulated worker crash on call ${call}`);
        }
        const bytes = options.delegate ? await options.delegate.run(task) : encodeTaskInline(task);
        pool.results.add(bytes);
        return bytes;
      } finally {
        pool.settled++;
        options.onSettle?.();
      }
    },
    async close() {
      pool.closed = true;
    },
  };
  return pool;
}

export { waitUntilIdle } from './wait-until-idle.js';

/** Rows with ints, floats, Int64 epoch ms, unicode strings with nulls, booleans and nested values (a JSON-text column). */
export function mixedRows(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    n: i * 7 - 1000,
    mag: i % 11 === 0 ? -0.5 : i / 16 + 0.1,
    time: 1517966773840 + i * 1013,
    place: i % 5 === 0 ? null : `${i} km W of Ōkuma, 日本 — "q" \\ ${'é'.repeat(i % 4)}`,
    tsunami: i % 7 === 0 ? null : i % 3 === 0,
    detail: i % 6 === 0 ? null : i % 2 ? [i, 'x', { deep: [true, null] }] : { id: `ci${i}`, tags: ['a', 'ü'], n: i / 2 },
  }));
}
