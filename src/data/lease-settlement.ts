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
 */
import type { FastifyReply } from 'fastify';
import type { BodyLease } from '../cache/body-store.js';

/** One transfer's lease and the connection it is for. */
export interface LeaseSettlement {
  /** Aborted when the client is gone (or the lease lost) before the response completed. */
  readonly signal: AbortSignal;
  /**
   * The response is about to be sent: commit on complete 'finish', release on anything else.
   * @param onCommitted called once the token is consumed (not after a release)
   */
  sending(onCommitted?: () => void): void;
  /** The transfer failed before its response was sent: release (resolves once released, before the error is answered). */
  fail(): Promise<void>;
}

/**
 * Starts watching `reply`'s connection for the transfer holding `lease`.
 * @param onSettleError told when the store could not commit or release (Redis down): the lease then ends with its timeout
 */
export function settleLease(reply: FastifyReply, lease: BodyLease, onSettleError: (error: unknown) => void): LeaseSettlement {
  const res = reply.raw;
  const socket = reply.request.raw.socket;
  // Made only when a transfer asks for the signal (one with chunks for the pool): a small answer
  // sent as one Buffer never does, and an AbortController per request showed in its profile.
  let hangUp: AbortController | undefined;
  let hungUp = false;
  const abort = () => {
    hungUp = true;
    hangUp?.abort();
  };
  let sending = false;
  let settled = false;
  const renewal = setInterval(() => {
    lease.renew().then(
      (held) => {
        if (held || settled) return;
        abort();
        res.destroy(new Error('the lease on this token was lost'));
      },
      () => {}, // unreachable store: keep going; nobody else can take the lease meanwhile either
    );
  }, Math.max(10, lease.timeoutMs / 3));
  renewal.unref();
  let onCommitted: (() => void) | undefined;
  const settle = async (complete: boolean): Promise<void> => {
    if (settled) return;
    settled = true;
    clearInterval(renewal);
    socket.removeListener('close', onGone);
    if (!complete) abort();
    await (complete ? lease.commit() : lease.release());
    if (complete) onCommitted?.();
  };
  // From an event there is no one to tell but the log; a store that fails to settle lets the lease time out.
  const settleFromEvent = (complete: boolean) => {
    settle(complete).catch(onSettleError);
  };
  const gone = () => res.destroyed || socket.destroyed;
  function onGone(): void {
    // Before the response is sent, a chunk may still be reading the body: release comes from fail() or sending().
    if (sending) settleFromEvent(false);
    else abort();
  }
  res.once('close', onGone);
  socket.once('close', onGone);
  // The client may have gone while the lease was being taken (an async store,
  // an embedding app's async hook): 'close' then fired before we listened.
  if (gone()) abort();
  return {
    get signal() {
      if (hangUp === undefined) {
        hangUp = new AbortController();
        if (hungUp) hangUp.abort();
      }
      return hangUp.signal;
    },
    sending(committed) {
      sending = true;
      onCommitted = committed;
      res.once('finish', () => {
        // Node also emits 'finish' when the last write was cut: by the client hanging up (the
        // socket is then errored) or by a timeout destroying the socket (not errored, but
        // destroyed before its writes went out). Neither transfer completed: keep the token.
        settleFromEvent(res.statusCode >= 200 && res.statusCode < 300 && !socket.errored && !socket.destroyed);
      });
      if (gone()) settleFromEvent(false);
    },
    fail: () => settle(false),
  };
}
