/**
 * Cancellation on protocol 2026-07-28 (a v2 Client closes its request's
 * stream when its call is aborted): a resource tool cancelled while its body
 * is being cached keeps nothing in the store, and a consumer tool cancelled
 * mid-fetch cuts its transfer, so the resource server releases the lease and
 * keeps the token for a later fetch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { toolCallOf } from '../../src/control/tool-host.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { watchLeases } from '../support/lease-watch.js';
import { connectInMemory } from '../support/in-memory-client.js';

const MODERN = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const ROWS = Array.from({ length: 100 }, (_, i) => ({ id: i, text: `row ${i}` }));
const BIG_ROWS = Array.from({ length: 200_000 }, (_, i) => ({ id: i, mag: i / 7, place: `a place called ${i}`, note: 'x'.repeat(40) }));

/** A MemoryStore that tells when a token was deleted. */
class DeleteWatchingStore extends MemoryStore {
  readonly #deleted: ((token: string) => void)[] = [];
  readonly deletions: string[] = [];
  override async delete(token: string): Promise<boolean> {
    const deleted = await super.delete(token);
    this.deletions.push(token);
    for (const listener of this.#deleted.splice(0)) listener(token);
    return deleted;
  }
  nextDeletion(): Promise<string> {
    return new Promise((resolve) => this.#deleted.push(resolve));
  }
}

/** A server whose tool `slow` waits for its call's cancellation, then answers rows; `started` resolves once it runs. */
function slowResourceServer(options: ConstructorParameters<typeof S2SPServer>[0]): { server: S2SPServer; started: Promise<void> } {
  const server = new S2SPServer(options);
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  server.resourceTool('slow', { description: 'waits for its cancellation, then answers' }, async (_args, extra) => {
    markStarted();
    const { signal } = toolCallOf(extra);
    assert.ok(signal, 'the call has an abort signal');
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return ROWS;
  });
  return { server, started };
}

/**
 * Starts `call`, cancels it once the tool runs, and checks the call fails and
 * the body the tool then cached was revoked: nothing stays in `store`.
 */
async function cancelOnceStarted(store: DeleteWatchingStore, started: Promise<void>, call: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
  const abort = new AbortController();
  const answer = call(abort.signal);
  await started;
  const revoked = store.nextDeletion();
  abort.abort();
  await assert.rejects(answer);
  // The handler answered after the cancellation: its body was cached, then revoked.
  await revoked;
  assert.equal((await store.stats()).entries, 0, 'nothing left in the store');
}

async function modernClient(url: string): Promise<Client> {
  const client = new Client({ name: 'cancelling-agent', version: '0' }, MODERN);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

test('a resource tool cancelled while it works keeps nothing in the store', async (t) => {
  const store = new DeleteWatchingStore();
  const { server, started: handlerStarted } = slowResourceServer({ name: 'resource', store, sdk: 'v2' });
  const url = await server.listen({ mcpPath: '/mcp' });
  t.after(() => server.close());
  const client = await modernClient(url);
  t.after(() => client.close());

  await cancelOnceStarted(store, handlerStarted, (signal) => client.callTool({ name: 'slow', arguments: { abstract_domains: 'id' } }, { signal }));
});

test('a consumer tool cancelled mid-fetch cuts the transfer: the lease is released and the token kept', async (t) => {
  const resourceStore = watchLeases(new MemoryStore());
  const resource = new S2SPServer({ name: 'resource', store: resourceStore });
  resource.resourceTool('big', { description: 'a large table' }, () => BIG_ROWS);
  const resourceUrl = await resource.listen({ mcpPath: '/mcp' });
  t.after(() => resource.close());
  const consumer = new S2SPServer({ name: 'consumer', sdk: 'v2' });
  consumer.consumerTool('count', { description: 'counts rows' }, ({ rows }) => ({ rows: rows.length }));
  const consumerUrl = await consumer.listen({ mcpPath: '/mcp' });
  t.after(() => consumer.close());

  const resourceClient = await modernClient(resourceUrl);
  t.after(() => resourceClient.close());
  const read = await resourceClient.callTool({ name: 'big', arguments: { abstract_domains: 'id' } });
  const bodyUrl = (read.structuredContent as { resource_url: string }).resource_url;
  const token = bodyUrl.slice(bodyUrl.lastIndexOf('/') + 1);

  const consumerClient = await modernClient(consumerUrl);
  t.after(() => consumerClient.close());
  const abort = new AbortController();
  const call = consumerClient.callTool(
    { name: 'count', arguments: { abstract_data: '*', resource_url: bodyUrl } },
    // Cancelled as soon as the consumer reports the first bytes of the body: the transfer is under way.
    { signal: abort.signal, onprogress: () => abort.abort() },
  );
  await assert.rejects(call);
  assert.deepEqual(await resourceStore.settled(token, 1), ['release'], 'the cut transfer released its lease');
  // The token was not consumed: the whole body is still there for one fetch.
  const again = await fetchBody(bodyUrl, { format: 'arrow' });
  assert.equal(again.table.numRows, BIG_ROWS.length);
});

test('a resource tool cancelled by notifications/cancelled (a v1 client, the 2025 handshake) keeps nothing in the store', async (t) => {
  const store = new DeleteWatchingStore();
  const { server, started: handlerStarted } = slowResourceServer({ name: 'resource', store, http: { publicUrl: 'http://127.0.0.1:9' } });
  const client = await connectInMemory(server, t);
  // The v1 client sends notifications/cancelled for an aborted request.
  await cancelOnceStarted(store, handlerStarted, (signal) => client.callTool({ name: 'slow', arguments: { abstract_domains: 'id' } }, undefined, { signal }));
});
