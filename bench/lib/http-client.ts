/**
 * HTTP clients of the benchmarks, all to 127.0.0.1.
 *
 * Big transfers use curl, a separate native process that reads a socket at
 * several GB/s, so the figure is the server's speed (Node's fetch tops out
 * near 0.3 GB/s). Without curl, a node:http client that only counts bytes.
 * Small requests use node:http with a keep-alive agent.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';

/** One timed transfer. */
export interface Transfer {
  seconds: number;
  bytes: number;
  status: number;
  /** The response's Content-Type. */
  contentType: string;
}

/** A POST with a JSON body and an optional Accept. */
export interface PostSpec {
  body: string;
  accept?: string;
  /** Save the response body here instead of dropping it. */
  saveTo?: string;
}

let curlPresent: boolean | undefined;

/** True when `curl` runs. */
export function hasCurl(): boolean {
  curlPresent ??= spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
  return curlPresent;
}

/** The big-transfer client this machine uses: `curl` or `node:http`. */
export function bigClientName(): string {
  return hasCurl() ? 'curl' : 'node:http';
}

/** Times one POST with the big-transfer client. */
export function timedPost(url: string, spec: PostSpec): Promise<Transfer> {
  return hasCurl() ? curlPost(url, spec) : nodePost(url, spec);
}

/** `curl -s -o /dev/null -w '%{time_total} %{size_download} %{http_code}' -X POST ...`. */
export function curlPost(url: string, spec: PostSpec): Promise<Transfer> {
  const args = ['-s', '-o', spec.saveTo ?? '/dev/null', '-w', '%{time_total} %{size_download} %{http_code} %{content_type}', '-X', 'POST'];
  args.push('-H', 'content-type: application/json', '-d', spec.body);
  if (spec.accept !== undefined) args.push('-H', `accept: ${spec.accept}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('curl', args, { timeout: 120_000 }, (error, stdout) => {
      if (error) return reject(error);
      const [seconds, bytes, status, ...type] = stdout.trim().split(' ');
      resolve({ seconds: Number(seconds), bytes: Number(bytes), status: Number(status), contentType: type.join(' ') });
    });
  });
}

/** The fallback: node:http, counting bytes (or saving them). */
export function nodePost(url: string, spec: PostSpec): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(spec.body) };
    if (spec.accept !== undefined) headers.accept = spec.accept;
    const req = httpRequest(url, { method: 'POST', headers, timeout: 120_000 }, (res) => {
      let bytes = 0;
      const file = spec.saveTo === undefined ? undefined : createWriteStream(spec.saveTo);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.byteLength;
        file?.write(chunk);
      });
      res.on('end', () => {
        const done = {
          seconds: (performance.now() - started) / 1000,
          bytes,
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
        };
        if (file === undefined) return resolve(done);
        file.end(() => resolve(done));
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(spec.body);
  });
}

/** One small request's result. */
export interface SmallResponse {
  ms: number;
  status: number;
  body: Buffer;
}

/** A node:http client with one keep-alive connection, for latency series. */
export function keepAliveClient(): { post: (url: string, spec: PostSpec) => Promise<SmallResponse>; close: () => void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (url: string, spec: PostSpec) =>
    new Promise<SmallResponse>((resolve, reject) => {
      const started = performance.now();
      const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(spec.body) };
      if (spec.accept !== undefined) headers.accept = spec.accept;
      const req = httpRequest(url, { method: 'POST', headers, agent, timeout: 30_000 }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end(spec.body);
    });
  return { post, close: () => agent.destroy() };
}
