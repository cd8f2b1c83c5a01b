/**
 * Test helpers: a node:http stand-in for a resource server (the Python
 * reference, or a misbehaving one) and a real fastify data plane, both on
 * 127.0.0.1 with an ephemeral port, closed by the test's `t.after`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import Fastify from 'fastify';
import { MemoryStore } from '../../src/cache/memory-store.js';
import { watchLeases, type WatchedStore } from './lease-watch.js';
import { mintToken } from '../../src/protocol/token.js';
import { s2spDataPlane } from '../../src/data/data-plane-plugin.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';

/** A request the stand-in received. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A running stand-in: its data URL (with a fresh token) and the requests it saw. */
export interface StandIn {
  url: string;
  origin: string;
  requests: SeenRequest[];
}

/** Starts a node:http server whose handler runs after the request body was read. */
export async function startStandIn(t: TestContext, handler: (req: SeenRequest, res: http.ServerResponse) => void): Promise<StandIn> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      handler(seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${origin}/s2sp/data/${mintToken()}`, origin, requests };
}

/** Answers a JSON document with the given status. */
export function sendJson(res: http.ServerResponse, status: number, doc: unknown): void {
  const text = JSON.stringify(doc);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A real data plane on 127.0.0.1 holding `rows`; returns its resource_url and store. */
export async function startDataPlane(
  t: TestContext,
  rows: Record<string, unknown>[],
): Promise<{ url: string; token: string; store: WatchedStore<MemoryStore> }> {
  const store = watchLeases(new MemoryStore());
  const app = Fastify();
  await app.register(s2spDataPlane, { store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  const { token } = await store.put(tableFromRows(rows));
  const port = (app.server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/s2sp/data/${token}`, token, store };
}
