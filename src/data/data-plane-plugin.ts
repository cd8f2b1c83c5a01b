/**
 * The data plane as a fastify plugin (SPEC 3): `POST /s2sp/data/:token` and
 * `GET /s2sp/health`. Mount it on your own app, with your own prefix and
 * logger; it brings its own JSON body parser and error handler, encapsulated
 * so they do not leak into the rest of the app.
 *
 * Order of checks on a fetch: body shape (400) and Accept (406) first, then
 * the lease (404/409), then ids and columns against the body (400, lease
 * released), then the hand-off to the encoder core (encoder-core.ts), which
 * picks how the answer is encoded and sent; the lease is committed only once
 * the response was written but its last bytes, which go out only after the
 * commit (last-bytes-gate.ts), and released on any failure, so a 4xx or a
 * dropped transfer never consumes the token, and a transfer whose commit
 * fails is cut.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { isWellFormedToken } from '../protocol/token.js';
import { S2SPError } from '../errors.js';
import { ipcCodecAvailable } from '../ipc/compression/codec-registry.js';
import { EncoderCore, type EncoderCoreOptions } from './encoder-core.js';
import { errorForReply } from './error-reply.js';
import { settleLease } from './lease-settlement.js';
import { parseFetchRequest, resolveFetch } from './fetch-request.js';
import { dataPlaneLogSerializers } from '../protocol/log-redaction.js';
import { negotiateEncoding, negotiateFormat, type NegotiationSupport } from './negotiate.js';
import { DATA_ROUTE, DATA_ROUTE_WILDCARD, HEALTH_PATH, METRICS_PATH } from '../protocol/data-path.js';
import { dataPlaneMetricsFor, serveMetrics } from './metrics.js';
import { noteFetch, withFetchSpans } from './fetch-spans.js';
import { errorDocumentOf } from '../protocol/error-document.js';
import { JSON_CONTENT_TYPE, JSON_TYPE } from '../protocol/media-types.js';
import { storeOption, integerOption } from '../option-checks.js';

/** Default limit of a fetch request body: 16 MiB (a million row ids fit). */
export const DEFAULT_REQUEST_BODY_LIMIT = 16 * 1024 * 1024;

/** Options of {@link s2spDataPlane}: the encoder core's, plus the HTTP side's. */
export interface DataPlaneOptions extends EncoderCoreOptions {
  /** Largest accepted request body in bytes (default 16 MiB); larger gets 413. */
  bodyLimit?: number;
  /**
   * A prom-client Registry to record metrics into (fetches, bytes, durations,
   * tokens, leases, cache, store errors; README "Metrics"). Default: none,
   * nothing recorded and prom-client never loaded.
   */
  registry?: Registry;
  /**
   * Where the plugin serves `registry` as Prometheus text (default `/metrics`,
   * under the plugin's prefix); false when the app serves its registry itself.
   */
  metricsPath?: string | false;
}

/**
 * The data-plane fastify plugin.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` at registration for a missing store or an out-of-range number
 */
export const s2spDataPlane: FastifyPluginAsync<DataPlaneOptions> = async (app, options) => {
  const { store } = options;
  storeOption(store);
  const bodyLimit = integerOption(options.bodyLimit, 'bodyLimit', 1) ?? DEFAULT_REQUEST_BODY_LIMIT;
  const core = new EncoderCore(options);
  app.addHook('onClose', () => core.close());
  // A codec is offered only where it loads; elsewhere asking for it alone gets a 406 that says why.
  const support: NegotiationSupport = { arrow: true, codec: ipcCodecAvailable };

  // Our own JSON parser: an empty body means {} (SPEC 3.1), and every other
  // media type is left unparsed so fastify answers 415. As a string: fastify
  // decodes a one-chunk body straight from the socket's buffer, where
  // 'buffer' copies it into a new one first (every small fetch paid the copy).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'string', bodyLimit }, (_req, raw, done) => {
    const text = raw as string;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Blank is checked only here: every fetch with a body would otherwise pay a trimmed copy of it.
      if (text.trim() === '') return done(null, {});
      return done(new S2SPError('S2SP_ERR_REQUEST_BODY_INVALID', { problem: 'notJson' }), undefined);
    }
    done(null, body);
  });

  app.setErrorHandler((error, request, reply) => {
    const wire = errorForReply(error);
    if (wire.status >= 500) request.log.error({ err: error }, 'data plane failure');
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    // A body stream can fail after the handler set Content-Encoding but before
    // a byte went out (brotli holds small input back): the error document is
    // plain JSON.
    reply.removeHeader('content-encoding');
    return reply.code(wire.status).type(JSON_CONTENT_TYPE).send(errorDocumentOf(wire));
  });

  // Metrics hooks go on the data routes only: health and metrics scrapes are not fetches.
  const metrics = options.registry === undefined ? undefined : await dataPlaneMetricsFor(options.registry);
  if (metrics !== undefined) {
    const stopObserving = [metrics.observeStore(store), core.observePreparation((event) => metrics.countPreparation(event))];
    app.addHook('onClose', async () => stopObserving.forEach((stop) => stop()));
    if (options.metricsPath !== false) serveMetrics(app, options.registry!, options.metricsPath ?? METRICS_PATH);
  }
  const routeOptions = withFetchSpans({ logSerializers: dataPlaneLogSerializers, bodyLimit, ...metrics?.fetchHooks(support) });

  const answer = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply): Promise<void> => {
    const fetchRequest = parseFetchRequest(request.body);
    const format = negotiateFormat(request.headers.accept, support);
    const token = request.params.token;
    // Only the canonical spelling: fastify percent-decodes params, and a token
    // that arrives encoded (%41...) is not how any resource_url was issued.
    if (!isWellFormedToken(token) || !endsWithSegment(request.url, token)) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
    const lease = await store.lease(token);
    const settlement = settleLease(reply, lease, (error) => request.log.warn({ err: error }, 'could not settle a lease; it ends with its timeout'));
    try {
      const fetch = resolveFetch(fetchRequest, lease.body);
      noteFetch(request, format, fetch.sortedIds?.length ?? lease.body.totalRows);
      const encoding = format.kind === 'json' ? negotiateEncoding(request.headers['accept-encoding']) : undefined;
      await core.respond(reply, { token, body: lease.body, fetch, format, encoding, transfer: settlement });
    } catch (error) {
      await settlement.fail();
      throw error;
    }
  };
  // A plain handler, not an async one: the answer goes out at the end of the event-loop turn
  // (turn-end.ts), and an async handler would have to return `reply`, whose promise then adopts it
  // as a thenable: fastify's reply.then watches the response with a stream-finished listener set,
  // on every fetch. Without a return value fastify waits for reply.send; a failure before the
  // answer was queued goes to the error handler the same way.
  app.post<{ Params: { token: string } }>(DATA_ROUTE, routeOptions, (request, reply) => {
    // fastify's reply.send takes only an Error for the error handler; anything else thrown is an internal error.
    answer(request, reply).catch((error: unknown) => reply.send(error instanceof Error ? error : errorForReply(error)));
  });

  // Everything else under /s2sp/data/ gets our error document, and goes
  // through the redacting serializers instead of fastify's 404 log line,
  // which prints the full URL.
  app.all(DATA_ROUTE_WILDCARD, routeOptions, async (request) => {
    const rest = (request.params as { '*': string })['*'];
    if (request.method !== 'POST' && isWellFormedToken(rest)) {
      throw new S2SPError('S2SP_ERR_METHOD_NOT_ALLOWED', { method: request.method });
    }
    throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
  });

  // A store that cannot be reached makes the replica unhealthy (503 with the error document), so a
  // load balancer's probe sees it; the plugin's error handler writes it.
  app.get(HEALTH_PATH, async () => {
    const stats = await store.stats();
    return { status: 'ok', entries: stats.entries, bytes: stats.bytes, ...(stats.bodies === undefined ? {} : { bodies: stats.bodies }) };
  });
};

/** True when the path of `url` (before any query) ends with `/segment`; compared in place, no substring per fetch. */
function endsWithSegment(url: string, segment: string): boolean {
  const query = url.indexOf('?');
  const end = query < 0 ? url.length : query;
  const start = end - segment.length;
  return start > 0 && url.charCodeAt(start - 1) === SLASH && url.startsWith(segment, start);
}

const SLASH = 0x2f;
