/**
 * A large answer reaches the socket a mebibyte per event-loop turn
 * (src/data/write-pacing.ts), on both ways the data plane sends one: ready
 * parts (the whole cached Arrow stream) and a stream of encoded chunks
 * (JSON); a small one still leaves in one turn. Every write to the response
 * is recorded with the turn it was made in, counted by a setImmediate chain.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { tableFromArrays } from 'apache-arrow';
import { WRITE_SLICE_BYTES, slicesOf, WritePacer } from '../../src/data/write-pacing.js';
import { END_OF_STREAM } from '../../src/protocol/arrow-framing.js';
import { ARROW, ok, startPlane, type Plane } from '../support/data-plane-harness.js';

interface Write {
  readonly bytes: number;
  readonly turn: number;
}

/** A plane whose data responses log each write with its event-loop turn; the turn counter runs until the test ends. */
async function recordingPlane(t: TestContext): Promise<{ plane: Plane; writes: Write[][] }> {
  let turn = 0;
  let spinning: NodeJS.Immediate = setImmediate(function spin() {
    turn++;
    spinning = setImmediate(spin);
  });
  t.after(() => clearImmediate(spinning));
  const writes: Write[][] = [];
  const plane = await startPlane(t, {
    workers: 0,
    beforeRegister: (app) =>
      app.addHook('onRequest', (_request, reply, done) => {
        const log: Write[] = [];
        writes.push(log);
        const res = reply.raw;
        const write = res.write;
        res.write = function (this: typeof res, chunk: string | Uint8Array, ...rest: unknown[]) {
          log.push({ bytes: Buffer.byteLength(chunk), turn });
          return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
        } as typeof res.write;
        done();
      }),
  });
  return { plane, writes };
}

/** Bytes written per turn, in order of the turns. */
function bytesPerTurn(log: readonly Write[]): number[] {
  const perTurn = new Map<number, number>();
  for (const { bytes, turn } of log) perTurn.set(turn, (perTurn.get(turn) ?? 0) + bytes);
  return [...perTurn.values()];
}

function assertPaced(log: readonly Write[], received: number, slack = 0): void {
  const total = log.reduce((sum, w) => sum + w.bytes, 0);
  assert.equal(total, received, 'every byte received was written through res.write');
  const turns = bytesPerTurn(log);
  assert.ok(
    turns.every((bytes) => bytes <= WRITE_SLICE_BYTES + slack),
    `at most ${WRITE_SLICE_BYTES} bytes per turn; got ${Math.max(...turns)}`,
  );
  assert.ok(turns.length >= Math.ceil(total / (WRITE_SLICE_BYTES + slack)), `${turns.length} turns for ${total} bytes`);
}

test('slicesOf: views of at most the limit, covering the part in order; a small part is itself', () => {
  const part = Uint8Array.from({ length: 10 }, (_, i) => i);
  assert.deepEqual(
    [...slicesOf(part, 4)].map((s) => [...s]),
    [
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ],
  );
  const [only] = [...slicesOf(part, 10)];
  assert.equal(only, part);
  assert.equal([...slicesOf(new Uint8Array(0), 4)].length, 1);
});

test('WritePacer: a turn is due before the write that would take it past the limit, never before the first', () => {
  const pacer = new WritePacer();
  assert.equal(pacer.before(WRITE_SLICE_BYTES), false, 'a first write of the whole limit goes at once');
  assert.equal(pacer.before(1), true);
  assert.equal(pacer.before(WRITE_SLICE_BYTES - 1), false);
  assert.equal(pacer.before(1), true);
});

test('the whole cached Arrow stream (ready parts) leaves a mebibyte per turn, complete', async (t) => {
  const { plane, writes } = await recordingPlane(t);
  const rows = 1_000_000; // 12 MB of column buffers
  const { token } = await plane.store.put(
    tableFromArrays({ id: Int32Array.from({ length: rows }, (_, i) => i), x: Float64Array.from({ length: rows }, (_, i) => i / 7) }),
  );
  const res = ok(await plane.post(token, {}, { accept: ARROW }));
  assert.ok(res.bytes.subarray(-END_OF_STREAM.byteLength).equals(END_OF_STREAM));
  assertPaced(writes.at(-1)!, res.bytes.byteLength);
});

test('a JSON answer streamed chunk by chunk leaves a mebibyte per turn, complete', async (t) => {
  const { plane, writes } = await recordingPlane(t);
  const rows = 300_000; // 65,536-row chunks of about 2.5 MB of JSON each
  const { token } = await plane.store.put(tableFromArrays({ x: Float64Array.from({ length: rows }, (_, i) => i / 7) }));
  const res = ok(await plane.post(token, {}, { accept: 'application/json', 'accept-encoding': 'identity' }));
  assert.equal(res.json().body.length, rows);
  // The document's opening, row separators and closing go out between the paced slices.
  assertPaced(writes.at(-1)!, res.bytes.byteLength, 1024);
});

test('an answer under a mebibyte still leaves in one turn', async (t) => {
  const { plane, writes } = await recordingPlane(t);
  const rows = 20_000; // about 250 kB of Arrow: ready parts, gated, not committed first
  const { token } = await plane.store.put(
    tableFromArrays({ x: Float64Array.from({ length: rows }, (_, i) => i / 7), y: Int32Array.from({ length: rows }, (_, i) => i) }),
  );
  const res = ok(await plane.post(token, {}, { accept: ARROW }));
  const log = writes.at(-1)!;
  assert.ok(res.bytes.byteLength > 64 * 1024);
  assert.equal(new Set(log.map((w) => w.turn)).size, 1, `written over turns ${[...new Set(log.map((w) => w.turn))].join(', ')}`);
});
