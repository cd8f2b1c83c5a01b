/**
 * Test support: raw HTTP/1.1 over a TCP socket to 127.0.0.1, for requests no
 * HTTP client would send (malformed framing, pipelining, dribbled bodies) and
 * for watching when the server closes the connection.
 */
import net from 'node:net';

/** What came back on one connection. */
export interface RawExchange {
  /** Every byte the server sent, as latin1 text. */
  text: string;
  /** True when the server closed the connection before the time limit. */
  closed: boolean;
  /** The first response's status, or 0 when none arrived. */
  status: number;
  /** The first response's body (after the blank line), as UTF-8. */
  body: string;
}

/** Opens a connection to 127.0.0.1:`port`. */
export function connectRaw(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Collects what the server sends on `socket` until it closes the connection
 * or `timeoutMs` passes (then the socket is destroyed and `closed` is false).
 */
export function collectRaw(socket: net.Socket, timeoutMs: number): Promise<RawExchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {}); // a reset after the answer: 'close' reports it
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('close', () => done(true));
    let settled = false;
    function done(closed: boolean): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRaw(Buffer.concat(chunks), closed));
    }
  });
}

/** Sends `bytes` on a fresh connection and collects the answer (see {@link collectRaw}). */
export async function exchangeRaw(port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<RawExchange> {
  const socket = await connectRaw(port);
  const answer = collectRaw(socket, timeoutMs);
  socket.write(bytes);
  return answer;
}

function parseRaw(bytes: Buffer, closed: boolean): RawExchange {
  const text = bytes.toString('latin1');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const headerEnd = bytes.indexOf('\r\n\r\n');
  let body = headerEnd < 0 ? '' : bytes.subarray(headerEnd + 4).toString('utf8');
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headerEnd));
  if (length !== null) body = Buffer.from(body).subarray(0, Number(length[1])).toString('utf8');
  return { text, closed, status, body };
}
