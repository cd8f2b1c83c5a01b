/**
 * A raw node:http client that reports what actually arrived,
 * including cut transfers, and can hang up after the first bytes.
 */
import { request, type Agent } from 'node:http';

/** What a request got back. */
export interface HttpOutcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** False when the connection ended before the response did. */
  complete: boolean;
}

/** Options of {@link httpRequest}. */
export interface HttpRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  agent?: Agent;
  /** Destroy the connection once this many body bytes arrived. */
  hangUpAfterBytes?: number;
  /** Send this path verbatim (a URL string would have its dot segments resolved). */
  rawPath?: string;
}

/** Sends one request and collects the answer (never rejects for a cut response). */
export function httpRequest(url: string, options: HttpRequestOptions = {}): Promise<HttpOutcome> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const path = options.rawPath ?? `${target.pathname}${target.search}`;
    const headers = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const requestOptions = { host: target.hostname, port: target.port, path, method: options.method ?? 'POST', headers, agent: options.agent };
    const req = request(requestOptions, (res) => {
      const chunks: Buffer[] = [];
      let received = 0;
      let settled = false;
      const done = (complete: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (options.hangUpAfterBytes !== undefined && received >= options.hangUpAfterBytes) {
          req.destroy();
          done(false);
        }
      });
      res.on('end', () => done(res.complete));
      res.on('aborted', () => done(false));
      res.on('error', () => done(false));
      res.on('close', () => done(res.complete));
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}
