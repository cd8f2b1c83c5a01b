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
  const renewal = setInterval(
    () => {
      lease.renew().then(
        (held) => {
          if (held || settled) return;
          abort();
          res.destroy(new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND')); // the lease on this token was lost
        },
        () => {}, // unreachable store: keep going; nobody else can take the lease meanwhile either
      );
    },
    Math.max(10, lease.timeoutMs / 3),
  );
  renewal.unref();
  const stopWatching = () => {
    settled = true;
    clearInterval(renewal);
    socket.removeListener('close', onGone);
  };
  const release = async (): Promise<void> => {
    if (settled) return;
    stopWatching();
    abort();
    await lease.release();
  };
  const gone = () => res.destroyed || socket.destroyed;
  function onGone(): void {
    // Before the response is sent, a chunk may still be reading the body: release comes from fail() or sending().
    // From an event there is no one to tell but the log; a store that fails to release lets the lease time out.
    if (sending) release().catch(onSettleError);
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
    sending() {
      sending = true;
      if (gone()) onGone();
    },
    async commit() {
      // Committing while most of the body still sits in our buffers would consume the token of a
      // transfer the client may yet lose: wait until the socket handed it to the kernel (or the
      // client went). The socket, not the response: an injected request's response never drains.
      while (socket.writableNeedDrain && !gone()) await drainOrClose(socket);
      if (settled || gone()) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND'); // released on the hang-up
      stopWatching();
      // No release after a failed commit: the store that failed it would fail that too, and a
      // commit that timed out may have been recorded; the lease ends with its timeout.
      let consumed: boolean;
      try {
        consumed = await lease.commit();
      } catch (error) {
        onSettleError(error);
        throw error;
      }
      // Only an explicit false: a store written against the older `Promise<void>` cannot tell, and
      // must not have every transfer cut.
      if (consumed === false) throw new S2SPError('S2SP_ERR_TOKEN_NOT_FOUND');
    },
    fail: release,
  };
}
