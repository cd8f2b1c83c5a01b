/**
 * The end of an event-loop turn, where the data plane's writes wait: first
 * the answers made during the turn, all together, then the next slices of
 * large answers (write-pacing.ts).
 *
 * Under load, one turn of the event loop reads the requests of many
 * connections. An answer written as soon as it was made went out between
 * the next requests' work, so a client waiting on several connections had
 * gone back to sleep by the time the next answer came, and each write had
 * to wake it again: a wake-up the writing thread pays inside its socket
 * write (an inter-processor interrupt; on a virtual machine, an exit to the
 * hypervisor). A faster route's client is still busy with the last answer
 * when the next one comes, and is spared it. Queued until the turn's I/O
 * callbacks have all run (a `setImmediate`: the check phase follows the
 * poll phase), the answers go out back to back, and a client woken by the
 * first finds the others waiting (bench/analysis.md, "Small requests: the
 * answers of a turn leave together").
 *
 * A large answer's next slice waits for the end of the turn too, after
 * the answers: a small answer never queues behind a mebibyte of someone
 * else's. So does arming the renewal of a lease still held then
 * (lease-settlement.ts). An answer waits at most for the rest of its turn; with one
 * request in the turn, for nothing. One queue per thread, as the event
 * loop is.
 */
import type { FastifyReply } from 'fastify';

/** The answers queued this turn, in order. */
let answers: { readonly reply: FastifyReply; readonly payload: unknown }[] = [];
/** What runs once they went out: the next slices of large answers, the lease renewals to arm. */
let after: (() => void)[] = [];
let scheduled = false;

/**
 * Sends `payload` on `reply` once the I/O callbacks of this turn have run,
 * in the order the answers were queued. The route handler returns
 * nothing and fastify waits for the send (data-plane-plugin.ts).
 */
export function sendAtTurnEnd(reply: FastifyReply, payload: unknown): void {
  answers.push({ reply, payload });
  schedule();
}

/** Runs `callback` at the end of this turn, after its answers went out. */
export function atTurnEnd(callback: () => void): void {
  after.push(callback);
  schedule();
}

/** Resolves at the end of this turn, after its answers went out: a large answer's next slice waits here. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => atTurnEnd(resolve));
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(turnEnd);
}

function turnEnd(): void {
  scheduled = false;
  const sending = answers;
  const then = after;
  answers = [];
  after = [];
  for (const { reply, payload } of sending) {
    try {
      reply.send(payload);
    } catch (error) {
      // Nothing is left to answer with: the client sees a cut transfer, and the others still go.
      reply.log.error({ err: error }, 'data plane failure');
      reply.raw.destroy();
    }
  }
  // A waiting slice's continuation runs as a microtask once this callback returns: after every answer above.
  for (const callback of then) callback();
}
