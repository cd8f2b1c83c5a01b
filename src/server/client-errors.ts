/**
 * SPEC 3.5: requests refused before any route runs get the error document
 * too, not fastify's or node's own. Two entry points, both fastify server
 * options: `clientErrorHandler` for what node's HTTP parser rejects (bad
 * chunk sizes, conflicting lengths, NUL in a header, headers too large, a
 * request that did not arrive in time), and `frameworkErrors` for what
 * fastify's router rejects (a URL that does not decode). Neither echoes the
 * request: fastify's default bad-URL document quotes the path, which for a
 * resource_url holds its token.
 */
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { S2SPError } from '../errors.js';
import { errorDocumentOf } from '../protocol/error-document.js';
import { JSON_CONTENT_TYPE } from '../protocol/media-types.js';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** The error a parser-level failure stands for. */
export function clientErrorOf(error: { code?: unknown }): S2SPError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new S2SPError('S2SP_ERR_REQUEST_TIMEOUT');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new S2SPError('S2SP_ERR_REQUEST_HEADERS_TOO_LARGE');
  // The parser's code (HPE_INVALID_CHUNK_SIZE...) says what was wrong without quoting the request.
  const parserCode = typeof error.code === 'string' && /^HPE_[A-Z_]{1,40}$/.test(error.code) ? error.code : undefined;
  return new S2SPError('S2SP_ERR_REQUEST_MALFORMED', { problem: 'parser', parserCode });
}

/**
 * fastify's `clientErrorHandler`: answers with the error document when the
 * socket can still take a response, then closes the connection.
 */
export function s2spClientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // As node does: never write into a response that already started on this socket.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const wire = clientErrorOf(error);
    const body = JSON.stringify(errorDocumentOf(wire));
    socket.write(
      `HTTP/1.1 ${wire.status} ${REASONS[wire.status] ?? 'Bad Request'}\r\n` +
        `Content-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** fastify's `frameworkErrors`: a URL the router cannot decode (or whose parameter is too long) gets a 400 document. */
export function s2spFrameworkErrors(_error: Error, _request: FastifyRequest, reply: FastifyReply): void {
  const wire = new S2SPError('S2SP_ERR_REQUEST_MALFORMED', { problem: 'url' });
  void reply.code(wire.status).type(JSON_CONTENT_TYPE).send(errorDocumentOf(wire));
}
