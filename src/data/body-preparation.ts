/**
 * Think-time preparation. Every token is single use, so in real use every
 * fetch is the first fetch of its body; but between the resource tool's
 * answer and the consumer's fetch, an LLM reads the abstract and decides,
 * which takes seconds. In those seconds idle encoder workers (below the event
 * loop's priority: encoder-pool.ts's background tasks at nice +10) encode the
 * new body in the forms its fetch is likely to ask for, into the
 * encoded-batch cache, where the fetch then finds them:
 *
 *   json       every row and column as JSON (a full JSON fetch)
 *   lz4, zstd  every column of every stored batch compressed (any projection of a full fetch)
 *
 * Which forms: `prepare` names them, or `'auto'` takes those the last few
 * fetches of bodies of the same origin (the resource tool; PutOptions.origin)
 * were answered in. A preparation stops when the fetch starts in another
 * form, when the body's last token is consumed, revoked or expires, when the
 * cache drops the body or has no room for it (the store's budget, which the
 * cache shares: memory pressure), and when the data plane closes. Prepared
 * bytes live with this process (README › Deploying: with RedisStore, the
 * replica that minted the token).
 */
import type { BodyStore, CachedBody, StoreEvent } from '../cache/body-store.js';
import { Listeners, type Listener, type Unsubscribe } from '../observe.js';
import { invalidOption } from '../option-checks.js';
import type { IpcCodec } from '../protocol/media-types.js';
import type { ResolvedFetch } from './fetch-request.js';
import type { ResponseFormat } from './negotiate.js';

/** A form a body can be prepared in. */
export type PreparedForm = 'json' | IpcCodec;

/** The `prepare` option: nothing, these forms, or what recent fetches of the same origin asked for. */
export type PrepareOption = 'off' | 'auto' | readonly PreparedForm[];

/**
 * The forms a list may name, in the order they are prepared: cheapest first
 * (LZ4 compresses a 1M x 10 body in ~0.2 s, ZSTD ~0.4 s, JSON ~1 s), so a
 * fetch that stops the others waits least behind their tasks already running.
 */
const FORMS: readonly PreparedForm[] = ['lz4', 'zstd', 'json'];

/** How many recent fetches per origin `'auto'` follows. */
const AUTO_HISTORY = 4;

/** Origins `'auto'` remembers (the oldest is forgotten first). */
const AUTO_ORIGINS = 256;

/** One form of one body prepared to its end (`done`) or stopped on the way (`stopped`), for metrics. */
export interface PreparationEvent {
  readonly type: 'prepared';
  readonly form: PreparedForm;
  readonly outcome: 'done' | 'stopped';
}

/** What a fetch was answered in, as far as preparation goes: a prepared form, or 'none' when no prepared form serves it. */
export type FetchForm = PreparedForm | 'none';

/**
 * The prepared form that serves a fetch: JSON of every row and column, or
 * compressed Arrow of every row (any columns); 'none' for the others (a
 * selection of rows, uncompressed Arrow, which is the cached stream itself).
 */
export function formOf(format: ResponseFormat, fetch: Pick<ResolvedFetch, 'sortedIds' | 'columns'>): FetchForm {
  if (fetch.sortedIds !== undefined) return 'none';
  if (format.kind === 'json') return fetch.columns === undefined ? 'json' : 'none';
  return format.codec ?? 'none';
}

/**
 * Checks a `prepare` option.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for anything but 'off', 'auto' or a list of known forms
 */
export function prepareOption(value: unknown, name = 'prepare'): PrepareOption | undefined {
  if (value === undefined || value === 'off' || value === 'auto') return value;
  const expected = `'off', 'auto' or a list of ${FORMS.map((f) => `'${f}'`).join(', ')}`;
  if (!Array.isArray(value) || !value.every((form) => FORMS.includes(form as PreparedForm))) throw invalidOption(name, expected, value);
  return FORMS.filter((form) => value.includes(form));
}

/** What a preparation needs of the encoder core. */
export interface PreparationHost {
  /** False when there is no pool or no cache: nothing is prepared. */
  readonly can: boolean;
  /** Encodes the whole body in `form` into the cache in idle workers; stops when `signal` aborts. */
  prepare(body: CachedBody, form: PreparedForm, signal: AbortSignal): Promise<void>;
  /** Aborts once the cache drops the body or has no room for it. */
  signalFor(body: CachedBody): AbortSignal;
  /** Drops the body's cached forms (the store let go of the body). */
  drop(bodyId: string): void;
}

/** One minted body this process may prepare: its origin, and each form under way. */
interface Job {
  readonly body: CachedBody;
  readonly origin: string;
  readonly forms: Map<PreparedForm, AbortController>;
  timer: NodeJS.Timeout | undefined;
  /** A fetch of the body started: 'auto' learned its form (once per body, however many tokens share it). */
  fetched: boolean;
}

/** Prepares minted bodies in think time; see the file comment. */
export class BodyPreparation {
  readonly #store: BodyStore;
  readonly #option: 'auto' | readonly PreparedForm[];
  readonly #host: PreparationHost;
  /** Minted bodies by id, until their fetch starts or they end. */
  readonly #jobs = new Map<string, Job>();
  /** Origin -> the forms of its last fetches, oldest first. */
  readonly #recent = new Map<string, FetchForm[]>();
  readonly #unsubscribe: () => void;
  readonly #observers = new Listeners<PreparationEvent>();

  /**
   * Starts preparing `store`'s bodies as `option` says, or returns undefined
   * when nothing would be prepared ('off', no workers or cache, a store that
   * tells no mints).
   * @throws S2SPError `S2SP_ERR_OPTION_INVALID` for a bad option
   */
  static start(store: BodyStore, option: unknown, host: PreparationHost): BodyPreparation | undefined {
    const checked = prepareOption(option) ?? 'auto';
    if (checked === 'off' || checked.length === 0 || !host.can || store.observe === undefined) return undefined;
    return new BodyPreparation(store, checked, host);
  }

  private constructor(store: BodyStore, option: 'auto' | readonly PreparedForm[], host: PreparationHost) {
    this.#store = store;
    this.#option = option;
    this.#host = host;
    this.#unsubscribe = store.observe!((event) => this.#on(event));
  }

  /**
   * A fetch of `body` starts, answered in `form`: `'auto'` learns it, and the
   * preparation of every other form stops (its workers are the fetch's now).
   * Only the body's first fetch counts: its tokens are single use, and the
   * fetches of a body many tokens share tell one thing.
   */
  fetching(body: CachedBody, form: FetchForm): void {
    const job = this.#jobs.get(body.id);
    if (job === undefined || job.fetched) return;
    job.fetched = true;
    this.#learn(job.origin, form);
    for (const [prepared, controller] of job.forms) if (prepared !== form) controller.abort();
  }

  /** Tells `listener` each form prepared or stopped from now on. */
  observe(listener: Listener<PreparationEvent>): Unsubscribe {
    return this.#observers.add(listener);
  }

  /** Stops every preparation and stops listening to the store. */
  stop(): void {
    this.#unsubscribe();
    for (const id of [...this.#jobs.keys()]) this.#end(id);
  }

  #on(event: StoreEvent): void {
    if (event.type === 'minted') this.#minted(event.body, event.expiresAt, event.origin ?? '');
    else if (event.type === 'consumed' || event.type === 'revoked' || event.type === 'expired') this.#ended();
  }

  #minted(body: CachedBody | undefined, expiresAt: number, origin: string): void {
    // Another token of a body already minted: its job (and preparation) covers it.
    if (body === undefined || this.#jobs.has(body.id)) return;
    const job: Job = { body, origin, forms: new Map(), timer: undefined, fetched: false };
    this.#jobs.set(body.id, job);
    // The TTL ends the job: a store that cannot tell which bodies it holds (RedisStore) tells no more.
    job.timer = setTimeout(() => this.#end(body.id), Math.max(0, expiresAt - Date.now())).unref();
    const forms = this.#option === 'auto' ? this.#learned(origin) : this.#option;
    if (forms.length === 0) return;
    const dropped = this.#host.signalFor(body);
    for (const form of forms) {
      const controller = new AbortController();
      const signal = AbortSignal.any([controller.signal, dropped]);
      job.forms.set(form, controller);
      void this.#host.prepare(body, form, signal).finally(() => {
        if (job.forms.get(form) === controller) job.forms.delete(form);
        this.#observers.emit({ type: 'prepared', form, outcome: signal.aborted ? 'stopped' : 'done' });
      });
    }
  }

  /** A token ended: bodies the store no longer holds stop and leave the cache. */
  #ended(): void {
    if (this.#store.holdsBody === undefined) return;
    for (const id of [...this.#jobs.keys()]) {
      if (!this.#store.holdsBody(id)) {
        this.#end(id);
        this.#host.drop(id);
      }
    }
  }

  #end(bodyId: string): void {
    const job = this.#jobs.get(bodyId);
    if (job === undefined) return;
    this.#jobs.delete(bodyId);
    clearTimeout(job.timer);
    for (const controller of job.forms.values()) controller.abort();
  }

  #learn(origin: string, form: FetchForm): void {
    const forms = this.#recent.get(origin) ?? [];
    this.#recent.delete(origin); // re-inserted: most recently fetched origin last
    forms.push(form);
    if (forms.length > AUTO_HISTORY) forms.shift();
    this.#recent.set(origin, forms);
    if (this.#recent.size > AUTO_ORIGINS) this.#recent.delete(this.#recent.keys().next().value as string);
  }

  /** The prepared forms among the last fetches of `origin`'s bodies, in preparation order. */
  #learned(origin: string): PreparedForm[] {
    const recent = this.#recent.get(origin) ?? [];
    return FORMS.filter((form) => recent.includes(form));
  }
}
