import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { createDataPlane } from '../../src/data/data-plane-handle.js';
import { withRowIds } from '../../src/table/with-row-ids.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { codeThrownBy } from '../support/code-of.js';

const TOKEN_PATH = /\/s2sp\/data\/[A-Za-z0-9_-]{43}$/;

async function mintOn(store: MemoryStore): Promise<string> {
  const { token } = await store.put(withRowIds(tableFromRows([{ a: 1 }, { a: 2 }]).select(['a'])));
  return token;
}

test('the handle builds resource_urls from its mount prefix and the listening address', async (t) => {
  const store = new MemoryStore();
  const plane = createDataPlane({ store, workers: 0 });
  const app = Fastify();
  t.after(async () => {
    await app.close();
    await store.close();
  });
  const token = await mintOn(store);
  assert.equal(
    codeThrownBy(() => plane.resourceUrlFor(token)),
    'S2SP_ERR_DATA_PLANE_DOWN',
    'not mounted yet',
  );
  await app.register(plane.plugin, { prefix: '/internal' });
  assert.equal(plane.prefix, '/internal');
  assert.equal(
    codeThrownBy(() => plane.resourceUrlFor(token)),
    'S2SP_ERR_DATA_PLANE_DOWN',
    'mounted, not listening, no publicUrl',
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = plane.resourceUrlFor(token);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/internal\/s2sp\/data\//);
  assert.ok(url.endsWith(`/${token}`));
  const response = await fetch(url, { method: 'POST' });
  assert.equal(response.status, 200);
  assert.deepEqual(((await response.json()) as { body: unknown }).body, [
    { _row_id: 0, a: 1 },
    { _row_id: 1, a: 2 },
  ]);
});

test('publicUrl replaces the listening address and keeps the mount prefix', async (t) => {
  const store = new MemoryStore();
  const plane = createDataPlane({ store, workers: 0, publicUrl: 'https://data.example.test/proxy/' });
  const app = Fastify();
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.register(plane.plugin, { prefix: '/v1' });
  const token = await mintOn(store);
  assert.equal(plane.resourceUrlFor(token), `https://data.example.test/proxy/v1/s2sp/data/${token}`);
  // Mounted at the root: no prefix at all.
  const rootStore = new MemoryStore();
  const root = createDataPlane({ store: rootStore, workers: 0, publicUrl: 'https://data.example.test' });
  const rootApp = Fastify();
  t.after(async () => {
    await rootApp.close();
    await rootStore.close();
  });
  await rootApp.register(root.plugin);
  assert.match(root.resourceUrlFor(token), /^https:\/\/data\.example\.test\/s2sp\/data\//);
  assert.match(root.resourceUrlFor(token), TOKEN_PATH);
});

test('a wildcard bind is named by its loopback address', async (t) => {
  const store = new MemoryStore();
  const plane = createDataPlane({ store, workers: 0 });
  const app = Fastify();
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.register(plane.plugin);
  await app.listen({ host: '0.0.0.0', port: 0 });
  assert.match(plane.resourceUrlFor(await mintOn(store)), /^http:\/\/127\.0\.0\.1:\d+\/s2sp\/data\//);
});

test('a handle mounts once; the store TTL is the handle TTL unless given', async (t) => {
  const store = new MemoryStore({ ttlMs: 1234 });
  const plane = createDataPlane({ store, workers: 0 });
  assert.equal(plane.ttlMs, 1234);
  assert.equal(createDataPlane({ store, workers: 0, ttlMs: 99 }).ttlMs, 99);
  const app = Fastify();
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.register(plane.plugin);
  const second = Fastify();
  t.after(() => second.close());
  await assert.rejects(async () => second.register(plane.plugin), { code: 'S2SP_ERR_SERVER_STATE' });
});
