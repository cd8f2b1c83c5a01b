/**
 * The consumer survives kept-alive connections the server closed: a request
 * sent on a reused socket that fails with ECONNRESET/EPIPE before any
 * response byte is sent once more, on a fresh connection; fetchBody and
 * fetchBodyBatches alike (they share consumer/http-exchange.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { fetchBodyBatches } from '../../src/consumer/fetch-body.js';
import { fetchBody } from '../../src/consumer/fetch-body.js';
import { codeOf } from '../support/code-of.js';
import { sendJson, startStandIn } from '../support/stand-in-server.js';

for (const [label, fetchRows] of [
  ['fetchBody', async (url: string) => (await fetchBody(url, { format: 'json' })).rows()],
  [
    'fetchBodyBatches',
    async (url: string) => {
      const rows: unknown[] = [];
      for await (const batch of await fetchBodyBatches(url, { format: 'json' })) rows.push(...batch.toArray().map((row) => row.toJSON()));
      return rows;
    },
  ],
] as const) {
  test(`${label}: after a 500 on a kept-alive connection the server then closes, the next fetch retries on a fresh connection`, async (t) => {
    // Node's global agent keeps connections alive (since Node 19), so the second fetch reuses the first's.
    const requestsOn = new Map<Socket, number>();
    // Like the Python reference: answers 500 and keeps the connection in the client's pool (no
    // Connection: close), then drops it when the next request arrives on it; a fresh connection is served.
    const standIn = await startStandIn(t, (_req, res) => {
      const socket = res.socket!;
      const seen = (requestsOn.get(socket) ?? 0) + 1;
      requestsOn.set(socket, seen);
      const first = [...requestsOn.keys()][0] === socket;
      if (first && seen === 1) return sendJson(res, 500, { error: 'Internal Server Error' });
      if (first) return socket.destroy();
      sendJson(res, 200, { body: [{ _row_id: 0, x: 1 }], total_rows: 1, columns_returned: ['_row_id', 'x'] });
    });

    assert.equal(await codeOf(fetchRows(standIn.url)), 'S2SP_ERR_CONSUMER_FETCH_FAILED', 'the 500 is a failure');
    assert.deepEqual(await fetchRows(standIn.url), [{ _row_id: 0, x: 1 }]);
    assert.equal(standIn.requests.length, 3, 'the 500, the request the server dropped, the retry');
    assert.equal(requestsOn.size, 2, 'the retry went out on a fresh connection');
  });
}

test('a fresh connection that is reset is not retried', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => res.socket!.destroy());
  assert.equal(await codeOf(fetchBody(standIn.url, { format: 'json' })), 'S2SP_ERR_CONSUMER_FETCH_FAILED');
  assert.equal(standIn.requests.length, 1, 'one request, no retry');
});
