/**
 * Test support: the BodyStore contract, one suite that every store runs
 * (test/cache/memory-store.test.ts, test/cache/redis-store.test.ts). What a
 * caller of any store may rely on: normalised bodies, single use, leases that
 * always end, TTL, a byte budget checked before allocation, shared bodies,
 * revocation.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Dictionary, Int32, Table, Utf8, tableFromArrays, vectorFromArray } from 'apache-arrow';
import type { BodyStore } from '../../src/cache/body-store.js';
import { ipcPlanOf } from '../../src/ipc/shared-body.js';
import { isWellFormedToken, mintToken } from '../../src/protocol/token.js';
import { openBodyBatches } from '../../src/table/batch-stream.js';
import { bodyTableOf } from '../../src/table/body-table.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { codeOf } from './code-of.js';

/** Store options the contract sets. */
export interface ContractStoreOptions {
  ttlMs?: number;
  maxBytes?: number;
  leaseTimeoutMs?: number;
}

/** Makes a fresh, empty store for one test and closes it after. */
export type StoreFactory = (t: TestContext, options?: ContractStoreOptions) => Promise<BodyStore>;

/** A 100-row table; `salt` makes its bytes differ from other salts'. */
export function sampleTable(salt = 0): Table {
  return tableFromRows(Array.from({ length: 100 }, (_, i) => ({ id: i, name: `row ${i} of ${salt}`, value: i * 1.5 + salt })));
}

/** Bytes a store counts for `table`'s body. */
export function bodyBytesOf(table: Table): number {
  return ipcPlanOf(bodyTableOf(table)).byteLength;
}

/** Polls `check` until it holds (at most `timeoutMs`). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} did not hold within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/**
 * Where a store's time comes from, for the tests that need a lease timeout
 * to pass: `fake`, a store on this process's setTimeout and Date, runs them on
 * node:test's fake timers, moved exactly by tick(); `real`, a store whose
 * clock is elsewhere (Redis expires its own keys), lets the time really pass.
 */
export type ContractClock = 'fake' | 'real';

/** Registers the contract tests for one store (all skipped, with the reason, when `skip` is set). */
export function storeContract(name: string, makeStore: StoreFactory, { skip, clock = 'real' }: { skip?: string; clock?: ContractClock } = {}): void {
  const table = sampleTable();
  const tableBytes = bodyBytesOf(table);
  /**
   * Call before makeStore (the store's timers must be the fake ones). `pass`
   * makes `ms` of the store's time pass; `after` waits for `check` to hold
   * once `ms` passed: on fake timers it moves them and checks once, on real
   * time it polls `check` (Redis expires keys on its own clock, and no event
   * of that reaches the test).
   */
  const timeFor = (t: TestContext) => {
    if (clock === 'real') {
      return {
        pass: (ms: number) => sleep(ms),
        after: (_ms: number, check: () => Promise<boolean>, what: string) => eventually(check, 5000, what),
      };
    }
    t.mock.timers.enable({ apis: ['Date', 'setTimeout'] });
    return {
      pass: async (ms: number) => t.mock.timers.tick(ms),
      after: async (ms: number, check: () => Promise<boolean>, what: string) => {
        t.mock.timers.tick(ms);
        assert.ok(await check(), `${what}, after ${ms} ms`);
      },
    };
  };

  test(`${name}: tokens are 43 chars of base64url and unique`, { skip }, async (t) => {
    const store = await makeStore(t);
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { token } = await store.put(table);
      assert.ok(isWellFormedToken(token));
      tokens.add(token);
    }
    assert.equal(tokens.size, 20);
  });

  test(`${name}: put returns expiresAt about ttlMs from now, and a per-put ttlMs wins`, { skip }, async (t) => {
    const store = await makeStore(t, { ttlMs: 60_000 });
    const before = Date.now();
    const { expiresAt } = await store.put(table);
    assert.ok(expiresAt >= before + 60_000 && expiresAt <= Date.now() + 60_000);
    const custom = await store.put(table, { ttlMs: 5_000 });
    assert.ok(custom.expiresAt <= Date.now() + 5_000);
  });

  test(`${name}: lease gives the body; commit consumes the token and frees the body`, { skip }, async (t) => {
    const store = await makeStore(t);
    const { token } = await store.put(table);
    assert.equal(await store.has(token), true);
    const stats = await store.stats();
    assert.equal(stats.entries, 1);
    assert.equal(stats.bytes, tableBytes);
    const lease = await store.lease(token);
    assert.equal(lease.body.totalRows, 100);
    assert.equal(lease.body.byteLength, tableBytes);
    assert.ok(lease.body.ipc.buffer instanceof SharedArrayBuffer, 'the body is shared memory the workers map');
    assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(table));
    await lease.commit();
    assert.equal(await store.has(token), false);
    assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
    const after = await store.stats();
    assert.equal(after.entries, 0);
    assert.equal(after.bytes, 0);
  });

  test(`${name}: release keeps the token leasable; settling twice changes nothing`, { skip }, async (t) => {
    const store = await makeStore(t);
    const { token } = await store.put(table);
    const lease = await store.lease(token);
    await lease.release();
    await lease.commit(); // too late: already settled
    assert.equal(await store.has(token), true);
    await (await store.lease(token)).commit();
    assert.equal(await store.has(token), false);
  });

  test(`${name}: a second lease while one is in flight is S2SP_ERR_TOKEN_IN_FLIGHT`, { skip }, async (t) => {
    const store = await makeStore(t);
    const { token } = await store.put(table);
    const lease = await store.lease(token);
    assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_TOKEN_IN_FLIGHT');
    assert.equal(await store.has(token), true, 'a leased token is still live');
    await lease.release();
    await (await store.lease(token)).release();
  });

  test(`${name}: concurrent leases: exactly one wins`, { skip }, async (t) => {
    const store = await makeStore(t);
    const { token } = await store.put(table);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => store.lease(token)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.equal(r.reason.code, 'S2SP_ERR_TOKEN_IN_FLIGHT');
  });

  test(`${name}: an unknown token is S2SP_ERR_TOKEN_NOT_FOUND`, { skip }, async (t) => {
    const store = await makeStore(t);
    await store.put(table);
    for (const token of [mintToken(), 'short', '']) {
      assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
      assert.equal(await store.has(token), false);
      assert.equal(await store.delete(token), false);
    }
  });

  test(`${name}: TTL expiry removes the token and frees its bytes`, { skip }, async (t) => {
    const { after } = timeFor(t);
    const store = await makeStore(t, { ttlMs: 60_000 });
    const short = await store.put(table, { ttlMs: 150 });
    const long = await store.put(sampleTable(1));
    assert.equal((await store.stats()).bytes, tableBytes + bodyBytesOf(sampleTable(1)));
    await after(150, async () => !(await store.has(short.token)), 'expiry');
    assert.equal(await codeOf(store.lease(short.token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
    assert.equal(await store.has(long.token), true);
    await after(0, async () => (await store.stats()).bytes === bodyBytesOf(sampleTable(1)), 'bytes freed');
    assert.equal((await store.stats()).entries, 1);
  });

  test(`${name}: byte budget: a put that does not fit is S2SP_ERR_CACHE_FULL, earlier bodies stay intact`, { skip }, async (t) => {
    const [a, b, c] = [sampleTable(1), sampleTable(2), sampleTable(3)];
    const budget = bodyBytesOf(a) + bodyBytesOf(b) + 10;
    const store = await makeStore(t, { maxBytes: budget });
    const first = await store.put(a);
    const second = await store.put(b);
    assert.equal(await codeOf(store.put(c)), 'S2SP_ERR_CACHE_FULL');
    const stats = await store.stats();
    assert.equal(stats.entries, 2);
    assert.equal(stats.bytes, bodyBytesOf(a) + bodyBytesOf(b));
    assert.equal(stats.maxBytes, budget);
    for (const [{ token }, source] of [
      [first, a],
      [second, b],
    ] as const) {
      const lease = await store.lease(token);
      assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(source));
      await lease.release();
    }
    await (await store.lease(first.token)).commit();
    const third = await store.put(c);
    assert.equal(await store.has(third.token), true, 'consuming one made room');
  });

  test(`${name}: byte budget: a body larger than the whole budget is refused before it is allocated`, { skip }, async (t) => {
    const store = await makeStore(t, { maxBytes: tableBytes - 1 });
    const before = process.memoryUsage().arrayBuffers;
    assert.equal(await codeOf(store.put(table)), 'S2SP_ERR_CACHE_FULL');
    assert.ok(process.memoryUsage().arrayBuffers - before < tableBytes, 'no buffer of the body size was made');
    const stats = await store.stats();
    assert.equal(stats.entries, 0);
    assert.equal(stats.bytes, 0);
  });

  test(`${name}: shared bodies: 40 puts of one table hold one body; it lives until its last token`, { skip }, async (t) => {
    const store = await makeStore(t);
    const tokens: string[] = [];
    for (let i = 0; i < 40; i++) tokens.push((await store.put(table)).token);
    let stats = await store.stats();
    assert.equal(stats.entries, 40);
    assert.equal(stats.bytes, tableBytes, 'one body, not 40');
    if (stats.bodies !== undefined) assert.equal(stats.bodies, 1);
    for (const token of tokens.slice(0, 39)) await (await store.lease(token)).commit();
    stats = await store.stats();
    assert.equal(stats.entries, 1);
    assert.equal(stats.bytes, tableBytes, 'the last token keeps the body');
    const last = await store.lease(tokens[39]);
    assert.deepEqual(rowsFromTable(last.body.table), rowsFromTable(table));
    await last.commit();
    stats = await store.stats();
    assert.equal(stats.entries, 0);
    assert.equal(stats.bytes, 0);
  });

  test(`${name}: shared bodies: a table put again after its body went is stored again`, { skip }, async (t) => {
    const store = await makeStore(t);
    await (await store.lease((await store.put(table)).token)).commit();
    const again = await store.put(table);
    const lease = await store.lease(again.token);
    assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(table));
    await lease.commit();
  });

  test(`${name}: put adds _row_id when missing and keeps a positional one (moved first)`, { skip }, async (t) => {
    const store = await makeStore(t);
    const plain = tableFromArrays({ name: ['a', 'b', 'c'], n: Float64Array.from([1, 2, 3]) });
    const lease = await store.lease((await store.put(plain)).token);
    assert.deepEqual(
      lease.body.table.schema.fields.map((f) => f.name),
      ['_row_id', 'name', 'n'],
    );
    assert.deepEqual(rowsFromTable(lease.body.table), [
      { _row_id: 0, name: 'a', n: 1 },
      { _row_id: 1, name: 'b', n: 2 },
      { _row_id: 2, name: 'c', n: 3 },
    ]);
    await lease.commit();
    const positional = tableFromArrays({ name: ['a', 'b'], _row_id: Float64Array.from([0, 1]) });
    const second = await store.lease((await store.put(positional)).token);
    assert.equal(second.body.table.schema.fields[0].name, '_row_id');
    assert.equal(String(second.body.table.schema.fields[0].type), 'Int32');
    assert.deepEqual(rowsFromTable(second.body.table), [
      { _row_id: 0, name: 'a' },
      { _row_id: 1, name: 'b' },
    ]);
    await second.commit();
  });

  test(`${name}: put refuses a _row_id that is not 0..n-1 in order, with S2SP_ERR_TABLE_INVALID`, { skip }, async (t) => {
    const store = await makeStore(t);
    for (const ids of [
      [1, 0, 2],
      [0, 1, 3],
      [5, 6, 7],
    ]) {
      const bad = tableFromArrays({ _row_id: Int32Array.from(ids), v: Float64Array.from([1, 2, 3]) });
      assert.equal(await codeOf(store.put(bad)), 'S2SP_ERR_TABLE_INVALID', JSON.stringify(ids));
    }
    const text = tableFromArrays({ _row_id: ['0', '1'] });
    assert.equal(await codeOf(store.put(text)), 'S2SP_ERR_TABLE_INVALID');
    assert.equal((await store.stats()).entries, 0);
  });

  test(`${name}: put decodes dictionary columns, so every chunk serves values, not nulls`, { skip }, async (t) => {
    const store = await makeStore(t);
    const labels = vectorFromArray(['red', 'green', 'red', null, 'blue'], new Dictionary(new Utf8(), new Int32()));
    const input = new Table({ label: labels, n: vectorFromArray(Int32Array.from([1, 2, 3, 4, 5])) });
    assert.ok(input.schema.fields[0].type instanceof Dictionary, 'the input is dictionary-encoded');
    const lease = await store.lease((await store.put(input)).token);
    assert.ok(lease.body.table.schema.fields.every((f) => !(f.type instanceof Dictionary)));
    assert.deepEqual(
      rowsFromTable(lease.body.table).map((r) => r.label),
      ['red', 'green', 'red', null, 'blue'],
    );
    await lease.commit();
  });

  test(`${name}: delete(token) revokes one token and leaves the others`, { skip }, async (t) => {
    const store = await makeStore(t);
    const a = await store.put(table);
    const b = await store.put(table);
    assert.equal(await store.delete(a.token), true);
    assert.equal(await store.delete(a.token), false);
    assert.equal(await store.has(a.token), false);
    assert.equal(await codeOf(store.lease(a.token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
    assert.equal(await store.has(b.token), true);
    assert.equal((await store.stats()).bytes, tableBytes);
    assert.equal(await store.delete(b.token), true);
    assert.equal((await store.stats()).bytes, 0);
  });

  test(`${name}: delete revokes a token even while it is leased; the lease's commit is then harmless`, { skip }, async (t) => {
    const store = await makeStore(t);
    const { token } = await store.put(table);
    const lease = await store.lease(token);
    assert.equal(await store.delete(token), true);
    assert.equal(await store.has(token), false);
    assert.equal(lease.body.totalRows, 100);
    await lease.commit();
    assert.equal((await store.stats()).entries, 0);
  });

  test(`${name}: a lease neither renewed nor settled ends after the lease timeout`, { skip }, async (t) => {
    const { after } = timeFor(t);
    const store = await makeStore(t, { leaseTimeoutMs: 200 });
    const { token } = await store.put(table);
    const stale = await store.lease(token);
    assert.equal(stale.timeoutMs, 200);
    assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_TOKEN_IN_FLIGHT');
    let next: Awaited<ReturnType<BodyStore['lease']>> | undefined;
    await after(
      200,
      async () => {
        try {
          next = await store.lease(token);
          return true;
        } catch (error) {
          assert.equal((error as { code?: string }).code, 'S2SP_ERR_TOKEN_IN_FLIGHT');
          return false;
        }
      },
      'the lease timed out',
    );
    assert.equal(await stale.renew(), false, 'a timed-out lease that another transfer took is lost');
    await stale.commit(); // the stale holder must not consume what the new one holds
    assert.equal(await store.has(token), true);
    await next!.commit();
    assert.equal(await store.has(token), false);
  });

  test(`${name}: renew keeps a lease past its timeout`, { skip }, async (t) => {
    const { pass } = timeFor(t);
    const store = await makeStore(t, { leaseTimeoutMs: 200 });
    const { token } = await store.put(table);
    const lease = await store.lease(token);
    const started = Date.now();
    while (Date.now() - started < 600) {
      assert.equal(await lease.renew(), true);
      await pass(50);
      assert.equal(await codeOf(store.lease(token)), 'S2SP_ERR_TOKEN_IN_FLIGHT');
    }
    await lease.commit();
    assert.equal(await store.has(token), false);
  });

  test(`${name}: a commit after the lease timed out still consumes when nobody took the token`, { skip }, async (t) => {
    const { pass } = timeFor(t);
    const store = await makeStore(t, { leaseTimeoutMs: 100 });
    const { token } = await store.put(table);
    const lease = await store.lease(token);
    await pass(250); // past the timeout (with real time, a floor: any later wake-up is as good)
    await lease.commit();
    assert.equal(await store.has(token), false);
  });

  test(`${name}: a put and a putBatches mint one token each, and observers see both (one registration path)`, { skip }, async (t) => {
    const store = await makeStore(t);
    const events: string[] = [];
    store.observe?.((event) => events.push(event.type));
    await store.put(table);
    assert.ok(store.putBatches !== undefined, 'the store takes streamed batches');
    await store.putBatches(
      await openBodyBatches(
        (async function* () {
          yield* sampleTable(1).batches;
        })(),
      ),
    );
    assert.deepEqual(
      events.filter((type) => type === 'minted'),
      ['minted', 'minted'],
    );
    assert.equal((await store.stats()).entries, 2);
  });
}
