/**
 * Request serializers for routes whose URLs carry tokens: fastify logs `req.url` on
 * every request, and our URLs carry bearer tokens. Installed per route, so an
 * embedding app's logger configuration stays its own.
 */
import { redactTokensInUrl } from './token.js';

interface LoggableRequest {
  method?: string;
  url?: string;
  ip?: string;
}

/** Pino serializers that redact tokens from request URLs. */
export const dataPlaneLogSerializers = {
  req(request: LoggableRequest): Record<string, unknown> {
    return { method: request.method, url: redactTokensInUrl(request.url ?? ''), remoteAddress: request.ip };
  },
};

/** An error as it may be logged: its name, code, message and stack, with every token redacted. */
export interface RedactedError {
  type: string;
  message: string;
  stack?: string;
  code?: string;
}

/**
 * The loggable form of anything thrown: tokens redacted from its message and
 * stack (a failed fetch's error can quote a resource_url), the rest kept, since
 * the server's log is where an operator looks for the cause.
 */
export function redactedError(error: unknown): RedactedError {
  if (!(error instanceof Error)) return { type: typeof error, message: redactTokensInUrl(String(error)) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: redactTokensInUrl(error.message),
    ...(error.stack === undefined ? {} : { stack: redactTokensInUrl(error.stack) }),
    ...(typeof code === 'string' ? { code } : {}),
  };
}
