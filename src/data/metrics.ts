/**
 * The data plane's Prometheus metrics (SPEC 3.5), recorded into a prom-client
 * Registry the embedder owns (or the CLI makes). Three sources:
 *
 * - the fetch routes: route-level hooks count each request when its response
 *   closes (status, negotiated format, complete or cut) and the body bytes
 *   as they leave, so the handler itself knows nothing of metrics;
 * - the store's events (BodyStore.observe): tokens minted, consumed, expired,
 *   revoked; leases in flight; calls that found a shared store unreachable;
 * - the store's stats, read once per scrape: tokens, bodies and bytes cached.
 *
 * prom-client is loaded only when metrics are asked for, so an embedder
 * without them never pays for its import. One registry holds one set of
 * these metrics however many planes record into it (prom-client refuses a
 * name twice).
 */
import type { Socket } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BodyStore, StoreEvent, StoreStats } from '../cache/body-store.js';
import { negotiateFormat, type NegotiationSupport } from './negotiate.js';
import type { PreparationEvent } from './body-preparation.js';

/** Upper bounds (seconds) of the transfer-duration buckets: a small fetch to a large table over a slow link. */
export const TRANSFER_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The `format` label of a request whose Accept names no format this plane writes (a 406). */
export const NO_FORMAT = 'none';
/** The `status` label of a request whose client left before any answer was sent. */
export const NO_STATUS = 'none';

/** The route hooks that count fetches; spread them into the data routes' options. */
export interface FetchMetricsHooks {
  onRequest: onRequestHookHandler;
  onSend: onSendHookHandler;
}

/** One request being counted. */
interface InFlight {
  readonly format: string;
  readonly start: bigint;
}

/** Everything the data plane records; made by {@link dataPlaneMetricsFor}. */
export class DataPlaneMetrics {
  readonly #fetches: Counter<'status' | 'format'>;
  readonly #bytesSent: Counter<'format'>;
  readonly #duration: Histogram<'format'>;
  readonly #aborted: Counter<'format'>;
  readonly #minted: Counter;
  readonly #consumed: Counter;
  readonly #expired: Counter;
  readonly #revoked: Counter;
  readonly #leases: Gauge;
  readonly #storeErrors: Counter;
  readonly #prepared: Counter<'form' | 'outcome'>;
  /** Observed stores, each with how many planes observe it and how to stop. */
  readonly #stores = new Map<BodyStore, { planes: number; stop: () => void }>();
  readonly #requests = new WeakMap<FastifyRequest, InFlight>();
  /** The stats of the current scrape: every cache gauge reads the same answer. */
  #scrape?: Promise<{ stats: StoreStats; up: boolean }>;

  constructor(prom: typeof import('prom-client'), registry: Registry) {
    const registers = [registry];
    // collect() runs with the metric as `this`, so the scrape's stats come in through this closure.
    const statsOfScrape = () => this.#statsOfScrape();
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = [], collect?: () => Promise<void>) =>
      new prom.Counter<L>({ name, help, labelNames, registers, collect });
    // A shared store finds expiries, and may fail, while a scrape reads its stats: these two wait
    // for that read, so the scrape that caused an event already shows it.
    const afterStats = async () => void (await statsOfScrape());
    this.#fetches = counter('s2sp_data_fetches_total', 'Requests to the data path, by HTTP status and requested format.', ['status', 'format']);
    this.#bytesSent = counter('s2sp_data_bytes_sent_total', 'Response body bytes the data path wrote (after any Content-Encoding).', ['format']);
    this.#aborted = counter(
      's2sp_data_transfers_aborted_total',
      'Transfers that began a 2xx answer but did not complete it (client gone, lease lost, encoding failed); the token stays.',
      ['format'],
    );
    this.#duration = new prom.Histogram({
      name: 's2sp_data_transfer_duration_seconds',
      help: 'Time from a fetch arriving to the last byte of its complete 2xx answer.',
      labelNames: ['format'],
      buckets: TRANSFER_DURATION_BUCKETS,
      registers,
    });
    this.#minted = counter('s2sp_tokens_minted_total', 'Tokens handed out (bodies cached behind a resource_url).');
    this.#consumed = counter('s2sp_tokens_consumed_total', 'Tokens used up by a complete transfer.');
    this.#expired = counter('s2sp_tokens_expired_total', 'Tokens that reached their TTL unused.', [], afterStats);
    this.#revoked = counter('s2sp_tokens_revoked_total', 'Tokens deleted before use.');
    this.#storeErrors = counter('s2sp_store_errors_total', 'Store calls that failed because the shared store could not be reached.', [], afterStats);
    this.#prepared = counter(
      's2sp_prepared_forms_total',
      'Body forms prepared by idle workers after a put (think time), by form and outcome: done, or stopped (another form fetched, token ended, no room).',
      ['form', 'outcome'],
    );
    this.#leases = new prom.Gauge({ name: 's2sp_leases_in_flight', help: 'Leases this process holds: transfers under way.', registers });
    const gauge = (name: string, help: string, read: (scrape: { stats: StoreStats; up: boolean }) => number) =>
      new prom.Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(read(await statsOfScrape()));
        },
      });
    gauge('s2sp_cache_tokens', 'Live tokens in the store (store-wide for a shared store).', (s) => s.stats.entries);
    gauge('s2sp_cache_bodies', 'Distinct bodies cached (several tokens may share one; store-wide for a shared store).', (s) => s.stats.bodies ?? 0);
    gauge('s2sp_cache_bytes', 'Bytes of cached bodies against the budget (store-wide for a shared store).', (s) => s.stats.bytes);
    gauge('s2sp_cache_max_bytes', 'The byte budget of the store.', (s) => s.stats.maxBytes);
    gauge(
      's2sp_cache_local_bytes',
      "Bytes of bodies this process holds in memory (a shared store's local copies).",
      (s) => s.stats.localBytes ?? s.stats.bytes,
    );
    gauge(
      's2sp_cache_shared_bytes',
      "Bytes kept beside the bodies within the store's budget: compressed buffers and bodies prepared in think time.",
      (s) => s.stats.sharedBytes ?? 0,
    );
    gauge('s2sp_store_up', '1 when the last read of the store stats succeeded, 0 when the store could not be reached.', (s) => (s.up ? 1 : 0));
  }

  /** Counts `store`'s events until the returned function is called; a store observed twice counts once. */
  observeStore(store: BodyStore): () => void {
    let entry = this.#stores.get(store);
    if (entry === undefined) {
      entry = { planes: 0, stop: store.observe?.((event) => this.#onStoreEvent(event)) ?? (() => {}) };
      this.#stores.set(store, entry);
    }
    entry.planes++;
    const held = entry;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      if (--held.planes > 0) return;
      held.stop();
      this.#stores.delete(store);
    };
  }

  /** Counts one think-time preparation's end. */
  countPreparation(event: PreparationEvent): void {
    this.#prepared.inc({ form: event.form, outcome: event.outcome });
  }

  /** Route hooks that count the requests of the routes they are given to. */
  fetchHooks(support: NegotiationSupport): FetchMetricsHooks {
    const onRequest: onRequestHookHandler = (request, reply, done) => {
      const inFlight: InFlight = { format: formatLabel(request.headers.accept, support), start: process.hrtime.bigint() };
      this.#requests.set(request, inFlight);
      const res = reply.raw;
      // Taken now: after 'close' the response may no longer point at its socket.
      const socket: Socket | null = request.raw.socket;
      res.once('close', () => this.#closed(inFlight, res.headersSent ? res.statusCode : undefined, res.writableFinished && !socket?.errored));
      done();
    };
    const onSend: onSendHookHandler = (request, _reply, payload, done) => {
      const format = this.#requests.get(request)?.format ?? NO_FORMAT;
      const count = (bytes: number) => this.#bytesSent.inc({ format }, bytes);
      if (payload instanceof Readable) return done(null, counted(payload, count));
      if (typeof payload === 'string') count(Buffer.byteLength(payload));
      else if (payload instanceof Uint8Array) count(payload.byteLength);
      done(null, payload);
    };
    return { onRequest, onSend };
  }

  #closed(inFlight: InFlight, status: number | undefined, complete: boolean): void {
    const { format } = inFlight;
    this.#fetches.inc({ status: status === undefined ? NO_STATUS : String(status), format });
    if (status === undefined || status < 200 || status >= 300) return;
    if (!complete) {
      this.#aborted.inc({ format });
      return;
    }
    this.#duration.observe({ format }, Number(process.hrtime.bigint() - inFlight.start) / 1e9);
  }

  #onStoreEvent(event: StoreEvent): void {
    switch (event.type) {
      case 'minted':
        return this.#minted.inc();
      case 'consumed':
        return this.#consumed.inc();
      case 'revoked':
        return this.#revoked.inc();
      case 'expired':
        return this.#expired.inc(event.count);
      case 'leased':
        return this.#leases.inc();
      case 'settled':
        return this.#leases.dec();
      case 'failed':
        return this.#storeErrors.inc();
    }
  }

  /**
   * The observed stores' stats summed, read once per scrape: the cache gauges
   * collect at the same time, and share this one answer.
   */
  #statsOfScrape(): Promise<{ stats: StoreStats; up: boolean }> {
    this.#scrape ??= (async () => {
      const answers = await Promise.allSettled([...this.#stores.keys()].map((store) => store.stats()));
      const stats = { entries: 0, bytes: 0, maxBytes: 0, bodies: 0, localBytes: 0, sharedBytes: 0 };
      for (const answer of answers) {
        if (answer.status !== 'fulfilled') continue;
        const s = answer.value;
        stats.entries += s.entries;
        stats.bytes += s.bytes;
        stats.maxBytes += s.maxBytes;
        stats.bodies += s.bodies ?? 0;
        stats.localBytes += s.localBytes ?? s.bytes;
        stats.sharedBytes += s.sharedBytes ?? 0;
      }
      return { stats, up: answers.every((answer) => answer.status === 'fulfilled') };
    })().finally(() => {
      this.#scrape = undefined;
    });
    return this.#scrape;
  }
}

const byRegistry = new WeakMap<Registry, Promise<DataPlaneMetrics>>();

/**
 * The data-plane metrics of `registry`, registered on first use (prom-client
 * loaded then), the same object for every later call.
 */
export function dataPlaneMetricsFor(registry: Registry): Promise<DataPlaneMetrics> {
  let metrics = byRegistry.get(registry);
  if (metrics === undefined) {
    metrics = import('prom-client').then((prom) => new DataPlaneMetrics(prom, registry));
    byRegistry.set(registry, metrics);
  }
  return metrics;
}

/** Serves `registry` as Prometheus text at `GET path` on `app`. */
export function serveMetrics(app: FastifyInstance, registry: Registry, path: string): void {
  app.get(path, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
}

/** The `format` label of a request: the format its Accept negotiates, `json`, `arrow` or `arrow-<codec>`. */
function formatLabel(accept: string | undefined, support: NegotiationSupport): string {
  try {
    const format = negotiateFormat(accept, support);
    return format.kind === 'arrow' && format.codec !== undefined ? `arrow-${format.codec}` : format.kind;
  } catch {
    return NO_FORMAT;
  }
}

/**
 * `body` with its bytes counted as they pass. Errors of either side destroy
 * both (pipeline), so a cut source still cuts the response, and a response
 * that closes early still stops the source.
 */
export function counted(body: Readable, count: (bytes: number) => void): Readable {
  const counter = new Transform({
    objectMode: true,
    highWaterMark: 1,
    transform(chunk: Uint8Array | string, _encoding, callback) {
      count(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength);
      callback(null, chunk);
    },
  });
  pipeline(body, counter).catch(() => {});
  return counter;
}
