/**
 * How a transfer's lease ends (SPEC 3.4: committed, released, or timed out;
 * never held until the token's TTL).
 *
 * Watched from the moment the lease is taken, through the connection as well
 * as the response: a pipelined request's response waits behind the one
 * ahead of it and has no socket yet, so when the connection closes it sees
 * neither 'finish' nor 'close'. A hang-up (any cause: the client, a server
 * timeout destroying the socket) aborts `signal` at once, so chunk tasks
 * still queued for the transfer are dropped; the lease itself is released
 * only once no chunk of the transfer is being encoded from the body.
 *
 * Until it ends the lease is renewed, so a long transfer keeps it and a dead
 * process (whose renewals stop) loses it after the lease timeout. A lease
 * found lost (timed out and taken by another transfer) cuts this transfer:
 * two complete transfers of one token must never happen.
 *
 * The commit comes before the response's last bytes (SPEC 5): the response
 * holds them back (last-bytes-gate.ts), asks {@link LeaseSettlement.commit}
 * once everything before them went to the socket, and sends them only when
 * this transfer consumed the token. A commit the store cannot record (Redis
 * gone or stuck) or that consumed nothing cuts the response instead: the
 * client never sees a complete transfer that another replica could repeat.
 */
import type { FastifyReply } from 'fastify';
import type { BodyLease } from '../cache/body-store.js';
import { S2SPError } from '../errors.js';
import { drainOrClose } from './last-bytes-gate.js';
import { atTurnEnd } from './turn-end.js';

/** One transfer's lease and the connection it is for. */
export interface LeaseSettlement {
  /** Aborted when the client is gone (or the lease lost) before the response completed. */
  readonly signal: AbortSignal;
  /** The response is about to be sent: from now on a hang-up releases the lease. */
  sending(): void;
  /**
   * The response is written but its last bytes: waits until what was written
   * went to the socket, then commits. Resolves once this transfer consumed
   * the token (send the last bytes then); rejects when the client is gone,
   * the token was not this transfer's to consume, or the store could not
   * record it (cut the response then).
   */
  commit(): Promise<void>;
  /** The transfer failed before its response was sent: release (resolves once released, before the error is answered). */
  fail(): Promise<void>;
}

/**
 * Starts watching `reply`'s connection for the transfer holding `lease`.
 * @param onSettleError told when the store could not commit or release (Redis down): the lease then ends with its timeout
 *   (and a failed commit cuts the response)
 */
export function settleLease(reply: FastifyReply, lease: BodyLease, onSettleError: (error: unknown) => void): LeaseSettlement {
  return new Settlement(reply, lease, onSettleError);
}

/**
 * One object per transfer, its methods on the prototype: every fetch makes
 * one, and a closure per method and listener, an AbortController and a
 * renewal timer each showed as allocations and collector work in the
 * small-requests profile.
 */
class Settlement implements LeaseSettlement {
  readonly #res: FastifyReply['raw'];
  readonly #socket: FastifyReply['raw']['socket'] & {};
  readonly #lease: BodyLease;
  readonly #onSettleError: (error: unknown) => void;
  /** The one listener on the response's and the socket's 'close'. */
  readonly #onGone = (): void => this.#gone();
  /** Made only when a transfer asks for the signal (one with chunks for the pool): a small answer sent as one Buffer never does. */
  #hangUp: AbortController | undefined;
  #hungUp = false;
  #sending = false;
  #settled = false;
  #renewal: NodeJS.Timeout | undefined;

  constructor(reply: FastifyReply, lease: BodyLease, onSettleError: (error: unknown) => void) {
    this.#res = reply.raw;
    this.#socket = reply.request.raw.socket;
    this.#lease = lease;
    this.#onSettleError = onSettleError;
    this.#res.on('close', this.#onGone);
    this.#socket.on('close', this.#onGone);
    renewLater(this);
    // The client may have gone while the lease was being taken (an async store,
    // an embedding app's async hook): 'close' then fired before we listened.
    if (this.#isGone()) this.#abort();
  }

  get signal(): AbortSignal {
    if (this.#hangUp === undefined) {
      this.#hangUp = new AbortController();
      if (this.#hungUp) this.#hangUp.abort();
    }
    return this.#hangUp.signal;
  }

  sending(): void {
    this.#sending = true;
    if (this.#isGone()) this.#gone();
  }

  async commit(): Promise<void> {
    // Committing while most of the body still sits in our buffers would consume the token of a
    // transfer the client may yet lose: wait until the socket handed it to the kernel (or the
    // client went). The socket, not the response: an injected request's response never drains.
    while (this.#socket.writableNeedDrain && !this.#isGone()) await drainOrClose(this.#socket);
    if (this.#settled || this.#isGone()) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND'); // released on the hang-up
    this.#stopWatching();
    // No release after a failed commit: the store that failed it would fail that too, and a
    // commit that timed out may have been recorded; the lease ends with its timeout.
    let consumed: boolean;
    try {
      consumed = await this.#lease.commit();
    } catch (error) {
      this.#onSettleError(error);
      throw error;
    }
    // Only an explicit false: a store written against the older `Promise<void>` cannot tell, and
    // must not have every transfer cut.
    if (consumed === false) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
  }

  fail(): Promise<void> {
    return this.#release();
  }

  /**
   * Starts renewing the lease, unless the transfer already settled: called at
   * the end of the event-loop turn the lease was taken in (see renewLater).
   */
  armRenewal(): void {
    if (this.#settled) return;
    this.#renewal = setInterval(() => this.#renew(), Math.max(10, this.#lease.timeoutMs / 3));
    this.#renewal.unref();
  }

  #renew(): void {
    this.#lease.renew().then(
      (held) => {
        if (held || this.#settled) return;
        this.#abort();
        this.#res.destroy(new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND')); // the lease on this token was lost
      },
      () => {}, // unreachable store: keep going; nobody else can take the lease meanwhile either
    );
  }

  #abort(): void {
    this.#hungUp = true;
    this.#hangUp?.abort();
  }

  #stopWatching(): void {
    this.#settled = true;
    if (this.#renewal !== undefined) clearInterval(this.#renewal);
    this.#socket.removeListener('close', this.#onGone);
  }

  async #release(): Promise<void> {
    if (this.#settled) return;
    this.#stopWatching();
    this.#abort();
    await this.#lease.release();
  }

  #isGone(): boolean {
    return this.#res.destroyed || this.#socket.destroyed;
  }

  #gone(): void {
    if (this.#settled) return; // the response's own 'close' after a commit: nothing left to end
    // Before the response is sent, a chunk may still be reading the body: release comes from fail() or sending().
    // From an event there is no one to tell but the log; a store that fails to release lets the lease time out.
    if (this.#sending) this.#release().catch(this.#onSettleError);
    else this.#abort();
  }
}

/**
 * Arms `settlement`'s renewal at the end of this event-loop turn
 * (turn-end.ts). A small answer is leased, written and committed within the
 * turn its request arrived in (every step a microtask, the commit before the
 * answer is queued), so it never needs a timer; a transfer still running
 * when the turn ends gets one then, long before the first renewal is due (a
 * third of the lease timeout).
 */
function renewLater(settlement: Settlement): void {
  atTurnEnd(() => settlement.armRenewal());
}
