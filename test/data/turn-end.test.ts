/**
 * The end of an event-loop turn (src/data/turn-end.ts): the answers made
 * in a turn are queued, not sent at once nor in a microtask, then sent back
 * to back in the check phase, in order, before the large answers' next
 * slices waiting for that turn; one reply whose send throws does not keep
 * the others back; and through the data plane, a small answer is written in
 * the check phase after the I/O callback that made it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply } from 'fastify';
import { nextTurn, sendAtTurnEnd } from '../../src/data/turn-end.js';
import { ok, startPlane } from '../support/data-plane-harness.js';

interface FakeReply {
  readonly reply: FastifyReply;
  readonly sent: unknown[];
  readonly logged: unknown[];
  readonly destroyed: () => boolean;
}

/** A reply that records what it was sent; `onSend` runs inside each send. */
function fakeReply(onSend: (payload: unknown) => void = () => {}): FakeReply {
  const sent: unknown[] = [];
  const logged: unknown[] = [];
  let destroyed = false;
  const reply = {
    send(payload: unknown) {
      onSend(payload);
      sent.push(payload);
      return reply;
    },
    log: { error: (details: unknown) => logged.push(details) },
    raw: { destroy: () => void (destroyed = true) },
  };
  return { reply: reply as unknown as FastifyReply, sent, logged, destroyed: () => destroyed };
}

const nextCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

test('answers queued in one turn are sent neither at once nor in a microtask, but back to back in the check phase, in order', async () => {
  const order: string[] = [];
  let microtaskRan = false;
  const replies = ['a', 'b', 'c'].map((name, i) =>
    fakeReply(() => {
      order.push(name);
      // Set by a microtask queued in the first send: still unset in the last one, so all ran in one go.
      if (i === 0) queueMicrotask(() => (microtaskRan = true));
      if (i === 2) assert.equal(microtaskRan, false, 'the three sends ran in one synchronous pass');
    }),
  );
  replies.forEach((fake, i) => sendAtTurnEnd(fake.reply, `payload-${i}`));
  assert.deepEqual(order, [], 'nothing sent while queuing');
  await Promise.resolve();
  assert.deepEqual(order, [], 'nothing sent in a microtask');
  await nextCheckPhase();
  assert.deepEqual(order, ['a', 'b', 'c']);
  assert.deepEqual(
    replies.map((fake) => fake.sent),
    [['payload-0'], ['payload-1'], ['payload-2']],
  );
});

test('an answer queued while the turn-end sends run goes out at the next turn end, not lost', async () => {
  const late = fakeReply();
  const first = fakeReply(() => sendAtTurnEnd(late.reply, 'late'));
  sendAtTurnEnd(first.reply, 'first');
  await nextCheckPhase();
  assert.deepEqual(first.sent, ['first']);
  assert.deepEqual(late.sent, [], 'not in the pass that queued it');
  await nextCheckPhase();
  assert.deepEqual(late.sent, ['late']);
});

test('the answers of a turn go out before the large answers waiting for that turn, even ones that began waiting first', async () => {
  const order: string[] = [];
  const slice = nextTurn().then(() => order.push('next slice'));
  const answer = fakeReply(() => order.push('small answer'));
  sendAtTurnEnd(answer.reply, 'small');
  await slice;
  assert.deepEqual(order, ['small answer', 'next slice']);
});

test('a reply whose send throws is logged and destroyed, and the answers after it still go', async () => {
  const broken = fakeReply(() => {
    throw new Error('headers already sent');
  });
  const after = fakeReply();
  sendAtTurnEnd(broken.reply, 'x');
  sendAtTurnEnd(after.reply, 'y');
  await nextCheckPhase();
  assert.equal(broken.destroyed(), true);
  assert.equal(broken.logged.length, 1);
  assert.deepEqual(after.sent, ['y']);
  assert.equal(after.destroyed(), false);
});

test('through the data plane, a small answer is written in the check phase after the I/O callback that made it', async (t) => {
  // A turn counter: one setImmediate per check phase, queued before any request of the turn is read.
  let turn = 0;
  let spinning: NodeJS.Immediate = setImmediate(function spin() {
    turn++;
    spinning = setImmediate(spin);
  });
  t.after(() => clearImmediate(spinning));
  const seen: { handled: number; ended: number }[] = [];
  const plane = await startPlane(t, {
    workers: 0,
    beforeRegister: (app) =>
      app.addHook('preHandler', (_request, reply, done) => {
        const record = { handled: turn, ended: -1 };
        seen.push(record);
        const res = reply.raw;
        const end = res.end;
        res.end = function (this: typeof res, ...args: unknown[]) {
          record.ended = turn;
          return (end as (...a: unknown[]) => typeof res).apply(this, args);
        } as typeof res.end;
        done();
      }),
  });
  const token = await plane.mint([{ x: 1 }, { x: 2 }]);
  const res = ok(await plane.post(token, { row_ids: [1] }));
  assert.deepEqual(res.json().body, [{ _row_id: 1, x: 2 }]);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.ended, seen[0]!.handled + 1, `handled in turn ${seen[0]!.handled}, ended in turn ${seen[0]!.ended}`);
});
