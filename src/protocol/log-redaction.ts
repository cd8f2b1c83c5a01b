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
