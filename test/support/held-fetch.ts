/**
 * Test support: a fetch whose client reads nothing until asked. The transfer
 * stays open (the server stalls on a full socket) for as long as the test
 * needs, with no reading pace to guess: the test acts on an event (the answer
 * arrived) and then lets the client read.
 */
import http from 'node:http';
import { ARROW } from './data-plane-harness.js';

/** What a held fetch received once read. */
export interface HeldFetchResult {
  status: number;
  /** Every body byte received. */
  body: Buffer;
  /** True when the HTTP response ended properly (not cut). */
  complete: boolean;
}

/** Starts a full Arrow fetch of `url`; `answered` resolves at the status line, `read()` then reads it all. */
export function heldFetch(url: string): { answered: Promise<void>; read(): Promise<HeldFetchResult> } {
  let onAnswer!: (response: http.IncomingMessage) => void;
  const response = new Promise<http.IncomingMessage>((resolve) => (onAnswer = resolve));
  const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ARROW } }, (res) => {
    res.pause();
    onAnswer(res);
  });
  const failed = new Promise<never>((_resolve, reject) => request.on('error', reject));
  request.end('{}');
  const answered = Promise.race([response, failed]).then(() => {});
  const read = async () => {
    const res = await Promise.race([response, failed]);
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    const complete = await new Promise<boolean>((resolve) => {
      res.on('end', () => resolve(res.complete));
      res.on('error', () => resolve(false));
      res.on('close', () => resolve(res.complete));
      res.resume();
    });
    return { status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete };
  };
  return { answered, read };
}
