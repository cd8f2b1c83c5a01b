/**
 * The encoder core (src/data/encoder-core.ts): its one-inline-buffer
 * strategy for small selections answers the same bytes as the chunked path,
 * for every type of the type matrix, for projections, scattered ids, ids
 * across stored batches and nulls; it is really taken where it should be,
 * and a token it answers is consumed once.
 *
 * Two planes over one store: one as configured by default (the fast path
 * for small selections) and one with `inlineCellLimit: 0`, which turns the
 * fast path off (both encode on the main thread: `workers: 0`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Type } from 'apache-arrow';
import { tableFromIPC, type Table } from 'apache-arrow';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import { resolveFetch } from '../../src/data/fetch-request.js';
import { selectionBuffer } from '../../src/data/encoder-core.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { allTypes } from '../support/all-types-table.js';
import { GATHERED_TYPES, MATRIX, MATRIX_ROWS, matrixTable } from '../support/type-matrix.js';

const ARROW = 'application/vnd.apache.arrow.stream';

interface Planes {
  store: MemoryStore;
  fast: FastifyInstance;
  streamed: FastifyInstance;
}

async function planes(t: import('node:test').TestContext): Promise<Planes> {
  const store = new MemoryStore();
  const fast = Fastify({ logger: false });
  const streamed = Fastify({ logger: false });
  await fast.register(s2spDataPlane, { store, workers: 0 });
  await streamed.register(s2spDataPlane, { store, workers: 0, inlineCellLimit: 0 });
  t.after(async () => {
    await fast.close();
    await streamed.close();
    await store.close();
  });
  return { store, fast, streamed };
}

async function fetchFrom(app: FastifyInstance, token: string, request: object, accept?: string) {
  const response = await app.inject({
    method: 'POST',
    url: `/s2sp/data/${token}`,
    headers: { 'content-type': 'application/json', ...(accept === undefined ? {} : { accept }) },
    payload: JSON.stringify(request),
  });
  assert.equal(response.statusCode, 200, response.body.slice(0, 300));
  return response;
}

/**
 * Fetches `request` of `table` through both planes (a fresh token each) and
 * asserts the same status, content type and bytes. Returns the fast answer
 * and what selectionBuffer made of it (undefined: the chunked path answered).
 */
async function sameBytes(p: Planes, table: Table, request: { row_ids?: number[]; columns?: string[] }, accept?: string) {
  const fastToken = (await p.store.put(table)).token;
  const lease = await p.store.lease(fastToken);
  const format = accept === undefined ? ({ kind: 'json' } as const) : ({ kind: 'arrow' } as const);
  const direct = selectionBuffer(lease.body.table, resolveFetch({ rowIds: request.row_ids, columns: request.columns }, lease.body), format, 4096);
  await lease.release();
  const fast = await fetchFrom(p.fast, fastToken, request, accept);
  const streamed = await fetchFrom(p.streamed, (await p.store.put(table)).token, request, accept);
  const label = `${accept ?? 'json'} ${JSON.stringify(request)}`;
  assert.equal(fast.headers['content-type'], streamed.headers['content-type'], label);
  if (accept !== undefined && direct !== undefined && isRange(request.row_ids)) {
    // A range is sliced on the chunked path, and arrow-js then writes each bitmap at the size of
    // the stored one (truncateBitmap keeps an aligned buffer whole): other padding, same values.
    assert.deepEqual(exactRows(fast.rawPayload), exactRows(streamed.rawPayload), `${label}: the same rows`);
  } else {
    assert.ok(fast.rawPayload.equals(streamed.rawPayload), `${label}: the fast path wrote other bytes than the chunked path`);
  }
  if (direct !== undefined) assert.ok(direct.equals(fast.rawPayload), `${label}: the plane answered from the fast path`);
  // Single use holds on the fast path too: the token is gone once answered.
  const again = await p.fast.inject({ method: 'POST', url: `/s2sp/data/${fastToken}`, headers: { 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(again.statusCode, 404, `${label}: consumed`);
  return { fast: fast.rawPayload, direct };
}

/** True when the ids (as the server sorts them) are one run of consecutive positions, or every row. */
function isRange(ids: number[] | undefined): boolean {
  if (ids === undefined) return true;
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  return sorted[sorted.length - 1] - sorted[0] + 1 === sorted.length;
}

/** The schema and every row of an Arrow stream (flat columns: rowsFromTable reads them exactly, int64 as bigint). */
function exactRows(bytes: Uint8Array): unknown {
  const table = tableFromIPC(bytes);
  return { schema: table.schema.fields.map((f) => `${f.name}: ${String(f.type)} ${f.nullable}`), rows: rowsFromTable(table) };
}

test("every type of the type matrix, alone and together: the fast path writes the chunked path's bytes (JSON and Arrow)", async (t) => {
  const p = await planes(t);
  const table = matrixTable();
  const scattered = [5, 0, 3, 3, 1]; // unsorted, a duplicate, the null row (5)
  // The body's types: dictionaries are decoded when cached (a dictionary of strings is Utf8 there).
  const lease = await p.store.lease((await p.store.put(table)).token);
  const bodyType = new Map(lease.body.table.schema.fields.map((f) => [f.name, f.type.typeId as Type]));
  await lease.release();
  for (const request of [{}, { row_ids: scattered }, { row_ids: [2, 3, 4] }]) {
    const json = await sameBytes(p, table, request);
    assert.notEqual(json.direct, undefined, 'JSON of any type takes the fast path');
  }
  for (const column of MATRIX) {
    for (const request of [{ row_ids: scattered, columns: [column.name] }, { columns: [column.name] }]) {
      const json = await sameBytes(p, table, request);
      assert.notEqual(json.direct, undefined, `${column.name}: JSON takes the fast path`);
      const arrow = await sameBytes(p, table, request, ARROW);
      const flat = GATHERED_TYPES.has(bodyType.get(column.name)!);
      assert.equal(arrow.direct !== undefined, flat, `${column.name}: the Arrow fast path is taken for flat layouts only`);
    }
  }
  const flatNames = MATRIX.filter((c) => GATHERED_TYPES.has(bodyType.get(c.name)!)).map((c) => c.name);
  const arrow = await sameBytes(p, table, { row_ids: scattered, columns: flatNames }, ARROW);
  assert.notEqual(arrow.direct, undefined);
  assert.equal(tableFromIPC(arrow.fast).numRows, 4);
  // Every row, projected (the whole body unprojected is the cached stream itself).
  await sameBytes(p, table, { columns: flatNames.slice(0, 5) }, ARROW);
  await sameBytes(p, table, { row_ids: Array.from({ length: MATRIX_ROWS }, (_, i) => i) }, ARROW);
});

test('a body of several stored batches: scattered ids across them, nulls, projections', async (t) => {
  const p = await planes(t);
  const table = allTypes(70_000, 0, 7);
  const lease = await p.store.lease((await p.store.put(table)).token);
  assert.ok(lease.body.table.batches.length > 1, 'the body has more than one stored batch');
  await lease.release();
  const names = table.schema.fields.map((f) => f.name);
  const scattered = [69_999, 3, 65_535, 65_536, 100, 65_537, 7, 14];
  for (const accept of [undefined, ARROW]) {
    const all = await sameBytes(p, table, { row_ids: scattered }, accept);
    assert.notEqual(all.direct, undefined, 'flat columns only: the fast path answers');
    await sameBytes(p, table, { row_ids: scattered, columns: [names[3], names[0], names[3]] }, accept);
    await sameBytes(p, table, { row_ids: scattered.slice(0, 3), columns: [names[names.length - 1]] }, accept);
  }
  // A run across the batch boundary: the chunked path slices it into two batches, the fast path
  // writes one; the JSON is the same bytes, the Arrow the same rows.
  const run = Array.from({ length: 10 }, (_, i) => 65_530 + i);
  await sameBytes(p, table, { row_ids: run });
  const crossing = await sameBytes(p, table, { row_ids: run }, ARROW);
  assert.equal(tableFromIPC(crossing.fast).batches.length, 1);
});

test('the fast path stays off where it does not apply: compressed Arrow, a selection over the cell limit', async (t) => {
  const p = await planes(t);
  const table = allTypes(2_000);
  const lease = await p.store.lease((await p.store.put(table)).token);
  const body = lease.body.table;
  const few = resolveFetch({ rowIds: [1, 2, 3] }, lease.body);
  assert.equal(selectionBuffer(body, few, { kind: 'arrow', codec: 'lz4' }, 4096), undefined, 'compressed');
  assert.equal(selectionBuffer(body, resolveFetch({}, lease.body), { kind: 'json' }, 4096), undefined, 'every row is too many cells');
  assert.equal(selectionBuffer(body, few, { kind: 'json' }, 0), undefined, 'a cell limit of 0 turns it off');
  assert.notEqual(selectionBuffer(body, few, { kind: 'json' }, 4096), undefined);
  // The whole body as Arrow is the cached stream itself, whatever the cell limit.
  const whole = await fetchFrom(p.fast, (await p.store.put(table)).token, {}, ARROW);
  assert.ok(Buffer.from(lease.body.ipc).equals(whole.rawPayload), 'the whole body as Arrow is the cached IPC stream');
  await lease.release();
});

test('small JSON answers share a slab: each stays intact while later ones are written, across new and grown slabs', async (t) => {
  const p = await planes(t);
  const table = allTypes(2_000);
  const lease = await p.store.lease((await p.store.put(table)).token);
  t.after(() => lease.release());
  const body = lease.body.table;
  const json = { kind: 'json' } as const;
  const answer = (ids: number[], columns?: string[]) => selectionBuffer(body, resolveFetch({ rowIds: ids, columns }, lease.body), json, 1_000_000)!;
  // A copy of each answer as first written, then enough answers to fill several slabs, one of them
  // larger than a slab (the writer grows mid-answer and copies its start along).
  const kept: Array<[Buffer, Buffer]> = [];
  for (let k = 0; k < 300; k++) {
    const ids = k === 150 ? Array.from({ length: 1_500 }, (_, i) => i) : [k, k + 1, (k * 37) % 2_000];
    const bytes = answer(ids);
    kept.push([bytes, Buffer.from(bytes)]);
    assert.equal(JSON.parse(bytes.toString()).body.length, new Set(ids).size);
  }
  kept.forEach(([bytes, copy], k) => assert.ok(bytes.equals(copy), `answer ${k} unchanged by the answers after it`));
  assert.ok(new Set(kept.map(([bytes]) => bytes.buffer)).size > 2, 'the answers span several slabs');
  // The cell limit counts the response's columns: `_row_id` named again is not one more.
  const few = resolveFetch({ rowIds: [1, 2], columns: ['_row_id', body.schema.fields[1].name] }, lease.body);
  assert.notEqual(selectionBuffer(body, few, json, 4), undefined, '2 rows x 2 columns fit a limit of 4 cells');
  assert.equal(selectionBuffer(body, few, json, 3), undefined);
});
