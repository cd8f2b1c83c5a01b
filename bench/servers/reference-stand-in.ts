/**
 * A stand-in for the Python reference's resource server (mcp-sd 0.1.0), as
 * its own process: there is no Python here, so this speaks the reference's
 * wire format in Node (SPEC 3.1, 3.2, 3.4 "Reference"): `POST
 * /s2sp/data/<token>` answers `{"body", "total_rows", "columns_returned"}`
 * as JSON whatever the Accept says, rows held as JS objects, and the token is
 * deleted before the body is sent (the reference's single use). node:http,
 * no framework. Tokens are minted over the IPC channel (`mint`).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BENCH_COLUMNS, generateRows } from '../lib/dataset.js';
import { collectGarbage, handle, installProbe, ready } from './probe.js';

type Row = Record<string, unknown>;

const config = JSON.parse(process.argv[2] ?? '{}') as { rows: number };
const rows: Row[] = generateRows(config.rows).map((row, i) => ({ _row_id: i, ...row }));
collectGarbage();
const tokens = new Set<string>();
const COLUMNS = ['_row_id', ...BENCH_COLUMNS];

function document(request: { row_ids?: number[]; columns?: string[] }): string {
  let selected = rows;
  if (Array.isArray(request.row_ids) && request.row_ids.length > 0) {
    const wanted = new Set(request.row_ids);
    selected = rows.filter((row) => wanted.has(row._row_id as number));
  }
  const names = Array.isArray(request.columns) && request.columns.length > 0 ? ['_row_id', ...request.columns.filter((c) => c !== '_row_id')] : COLUMNS;
  const body = names === COLUMNS ? selected : selected.map((row) => Object.fromEntries(names.map((n) => [n, row[n]])));
  return JSON.stringify({ body, total_rows: body.length, columns_returned: names });
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const token = /^\/s2sp\/data\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || token === undefined || !tokens.delete(token)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'S2SP_ERR_TOKEN_NOT_FOUND', message: 'unknown, expired or consumed token' } }));
      return;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const body = document(text.trim() === '' ? {} : (JSON.parse(text) as { row_ids?: number[]; columns?: string[] }));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});

installProbe(undefined);
handle('mint', () => {
  const token = randomBytes(32).toString('base64url');
  tokens.add(token);
  return token;
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
ready({ port: (server.address() as AddressInfo).port, rows: rows.length });
