/**
 * RedisStore on a real Redis Cluster of the test's own (three masters, a
 * replica each, redis-cli --cluster create): the store contract, then what
 * only a cluster has. Replicas of the resource server are data planes with a
 * store each on the same cluster. One cluster serves the whole file, so the
 * tests run in order: the first one sees an empty cluster, the last two take
 * nodes down (the whole cluster, then one master for good).
 */
import { test, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisStore, tokenHashOf, type RedisStoreOptions } from '../../src/cache/redis-store.js';
import { storeFromSpec } from '../../src/cache/store-from-spec.js';
import { slotOf } from '../../src/cache/redis-slot.js';
import { rowsFromTable } from '../../src/table/rows-from-table.js';
import { tableFromRows } from '../../src/table/table-from-rows.js';
import { startCliServer } from '../support/cli-process.js';
import { codeOf } from '../support/code-of.js';
import { ARROW, startPlane, type Plane, type RawResponse } from '../support/data-plane-harness.js';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.js';
import { redisStoresOn } from '../support/redis-store-factory.js';
import { redisSkipReason, type RedisServer } from '../support/redis-server.js';
import { eventually, sampleTable, storeContract } from '../support/store-contract.js';

const skip = redisSkipReason();
let cluster: RedisCluster;
let pairs = 0;

before(async () => {
  if (skip === undefined) cluster = await startRedisCluster({ replicasPerMaster: 1 });
});
after(async () => {
  await cluster?.stop();
});

/** A store on the test cluster, under a key prefix of its own unless `keyPrefix` is given. */
const storeOn = redisStoresOn(() => cluster.url, 'k');

/** Two resource-server replicas: a data plane each, with its own store on the cluster, sharing one key prefix. */
async function twoReplicas(t: TestContext, options: Partial<RedisStoreOptions> = {}): Promise<[Plane, Plane]> {
  const keyPrefix = `pair${++pairs}`;
  const make = () => new RedisStore({ url: cluster.url, keyPrefix, leaseTimeoutMs: 2000, commandTimeoutMs: 2000, ...options });
  const [a, b] = [make(), make()];
  await Promise.all([a.ready(), b.ready()]);
  return [await startPlane(t, { store: a, workers: 0 }), await startPlane(t, { store: b, workers: 0 })];
}

/** The number of keys on every node, masters and replicas. */
async function keysPerNode(nodes: readonly RedisServer[]): Promise<number[]> {
  return Promise.all(nodes.map(async (node) => Number(await cluster.command(node, 'DBSIZE'))));
}

/** Rows a test can tell apart by `salt`. */
function rowsOf(salt: number, n = 50): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({ id: i, label: `row ${i} of ${salt}`, x: i * salt }));
}

test('bodies and the byte budget spread over the masters, and after the TTL every node is empty again', { skip }, async (t) => {
  const store = await storeOn(t, { keyPrefix: 'spread' });
  assert.deepEqual(await keysPerNode(cluster.nodes), [0, 0, 0, 0, 0, 0], 'a fresh cluster');
  // A TTL long enough for the puts and the counts below on a loaded machine, short enough to wait out.
  for (let i = 0; i < 24; i++) await store.put(sampleTable(100 + i), { ttlMs: 3000 });
  const perMaster = await cluster.keysPerMaster();
  assert.ok(
    perMaster.every((n) => n >= 8),
    `every master holds bodies (keys per master: ${perMaster.join(', ')})`,
  );
  // The accounts every put updates: on every master, not under one tag on one node.
  const accounts = await Promise.all((await cluster.masters()).map(async (m) => (await cluster.command(m, 'KEYS', '{spread:a*')).split('\n').filter(Boolean)));
  assert.ok(
    accounts.every((keys) => keys.length > 0),
    `budget accounts per master: ${accounts.map((keys) => keys.length).join(', ')}`,
  );
  assert.equal((await store.stats()).bodies, 24);
  await eventually(async () => (await keysPerNode(cluster.nodes)).every((n) => n === 0), 10_000, 'every node, masters and replicas, empty');
  assert.equal((await store.stats()).entries, 0);
});

test('a redis-cluster:// spec makes a RedisStore on the cluster (the CLI flag and S2SP_STORE go through it)', { skip }, async (t) => {
  const store = storeFromSpec(cluster.url.replace('redis-cluster://', 'redis-cluster://default:@'), { ttlMs: 60_000 });
  t.after(() => store.close());
  assert.ok(store instanceof RedisStore);
  await store.ready();
  const { token } = await store.put(sampleTable(1));
  const lease = await store.lease(token);
  assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(sampleTable(1)));
  assert.equal(await lease.commit(), true);
});

test('slotOf agrees with the cluster (CLUSTER KEYSLOT), hash tags included', { skip }, async () => {
  const keys = ['somekey', 'foo{hash_tag}', '{s2sp:b:abc}:m', '{}x', 'a{}{b}', '{user1000}.following', 'é{ü}', 's2sp:i:xyz'];
  const node = cluster.nodes[0];
  for (const key of keys) assert.equal(slotOf(key), Number(await cluster.command(node, 'CLUSTER', 'KEYSLOT', key)), key);
});

test('s2sp serve --store redis-cluster://... and S2SP_STORE=redis-cluster://... connect to the cluster, logged without credentials', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 's2sp-cluster-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'rows.json');
  writeFileSync(file, JSON.stringify(rowsOf(1, 5)));
  // No ACL on the test cluster: the default user with an empty password is what it accepts.
  const url = cluster.url.replace('redis-cluster://', 'redis-cluster://default:@');
  const connected = /store (\S+) connected/;
  const viaFlag = await startCliServer(t, ['serve', file, '--transport', 'http', '--port', '0', '--store', url], {
    line: connected,
    env: { ...process.env, S2SP_STORE: '' },
  });
  const viaEnv = await startCliServer(t, ['serve', file, '--transport', 'http', '--port', '0'], { line: connected, env: { ...process.env, S2SP_STORE: url } });
  assert.equal(viaFlag.url, cluster.url);
  assert.equal(viaEnv.url, cluster.url);
});

test('minted on one replica, fetched on another: byte-identical, once', { skip }, async (t) => {
  const [a, b] = await twoReplicas(t);
  const tokens = await Promise.all(Array.from({ length: 6 }, (_, i) => a.mint(rowsOf(i + 1))));
  for (const [i, token] of tokens.entries()) {
    const fetched = await b.post(token, {}, { accept: 'application/json' });
    assert.equal(fetched.status, 200);
    assert.equal(fetched.complete, true);
    assert.deepEqual(
      fetched.json().body.map((row: { label: string }) => row.label),
      rowsOf(i + 1).map((row) => row.label),
    );
    assert.equal((await a.post(token, {}, { accept: ARROW })).status, 404, 'consumed on B, gone on A');
  }
});

test('concurrent fetches across replicas: exactly one complete 200 per token, and no 5xx', { skip }, async (t) => {
  const [a, b] = await twoReplicas(t);
  const table = tableFromRows(Array.from({ length: 20_000 }, (_, i) => ({ id: i, label: `label ${i}` })));
  for (let round = 0; round < 3; round++) {
    const { token } = await a.store.put(table);
    const fetches = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).post(token, {}, { accept: ARROW })));
    const statuses = fetches.map((r) => r.status);
    assert.equal(fetches.filter((r) => r.status === 200 && r.complete).length, 1, `round ${round}: ${statuses.join(' ')}`);
    assert.ok(
      statuses.every((s) => s < 500),
      `round ${round}: ${statuses.join(' ')}`,
    );
  }
});

storeContract('RedisStore on a cluster', (t, options = {}) => storeOn(t, options), { skip });

test('MOVED and ASK while a body slot is resharded: leases and commits go on without an error', { skip }, async (t) => {
  const store = await storeOn(t, { keyPrefix: 'reshard', chunkBytes: 1024 });
  const table = sampleTable(7);
  const first = await store.put(table);
  const second = await store.put(table);
  const third = await store.put(table);
  // The body's slot, from its keys on whichever master holds them.
  const masters = await cluster.masters();
  const keys = new Map<RedisServer, string[]>();
  for (const master of masters) keys.set(master, (await cluster.command(master, 'KEYS', '{reshard:b:*')).split('\n').filter(Boolean));
  const source = masters.find((m) => keys.get(m)!.length > 0)!;
  const target = masters.find((m) => m !== source)!;
  const bodyKeys = keys.get(source)!;
  const slot = slotOf(bodyKeys[0]);
  assert.ok(
    bodyKeys.every((k) => slotOf(k) === slot),
    'every key of the body in one slot',
  );
  const idOf = async (node: RedisServer) => cluster.command(node, 'CLUSTER', 'MYID');
  const [sourceId, targetId] = [await idOf(source), await idOf(target)];
  await cluster.command(target, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', sourceId);
  await cluster.command(source, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', targetId);
  await cluster.command(source, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', ...bodyKeys);
  // Mid-migration: the source answers ASK for the keys it gave away (one-key commands follow it).
  assert.equal(await store.has(third.token), true);
  // A script whose keys are split between the nodes (the lease key exists on neither) is answered
  // TRYAGAIN until the migration ends: the lease waits for that, then succeeds.
  const asked = store.lease(first.token);
  for (const node of [target, source]) await cluster.command(node, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', targetId);
  const lease = await asked;
  assert.deepEqual(rowsFromTable(lease.body.table), rowsFromTable(table));
  assert.equal(await lease.commit(), true);
  // Done: the source answers MOVED, and the store follows the slot to its new master.
  const moved = await store.lease(second.token);
  assert.equal(await moved.commit(), true);
  assert.equal(await codeOf(store.lease(first.token)), 'S2SP_ERR_TOKEN_NOT_FOUND');
  assert.equal(await store.has(third.token), true);
});

test('the whole cluster down: S2SP_ERR_STORE_UNAVAILABLE (503) at once, and everything works again when it is back', { skip }, async (t) => {
  const [a, b] = await twoReplicas(t);
  const token = await a.mint(rowsOf(3));
  await Promise.all(cluster.nodes.map((node) => node.down()));
  const started = Date.now();
  assert.equal(await codeOf(a.store.put(sampleTable(2))), 'S2SP_ERR_STORE_UNAVAILABLE');
  assert.equal(await codeOf(b.store.stats()), 'S2SP_ERR_STORE_UNAVAILABLE');
  const during = await b.post(token, {}, { accept: ARROW });
  assert.equal(during.status, 503);
  assert.equal(during.json().error.code, 'S2SP_ERR_STORE_UNAVAILABLE');
  assert.ok(Date.now() - started < 2000, 'fails fast, not after a queue or a timeout');
  // Back on the same ports and cluster configuration (persistence off: empty).
  await Promise.all(cluster.nodes.map((node) => node.restart()));
  await cluster.settled();
  let again: RawResponse | undefined;
  await eventually(
    async () => {
      again = await b.post(token, {}, { accept: ARROW });
      return again.status !== 503;
    },
    15_000,
    'fetches answered again',
  );
  assert.equal(again!.status, 404, 'the restarted cluster is empty: the token went with it');
  const fresh = await a.mint(rowsOf(4));
  const fetched = await b.post(fresh, {}, { accept: 'application/json' });
  assert.equal(fetched.status, 200);
  assert.equal(fetched.complete, true);
});

test(
  'a master failover: tokens whose write was lost answer 404, consumed ones stay consumed, 5xx only until the failover ends, never two complete transfers',
  { skip },
  async (t) => {
    const [a, b] = await twoReplicas(t);
    const masters = await cluster.masters();
    const victim = masters[0];
    const replicaOf = async (master: RedisServer) => {
      for (const node of cluster.nodes) {
        const role = (await cluster.command(node, 'ROLE')).split('\n');
        if (role[0] === 'slave' && Number(role[2]) === master.port) return node;
      }
      throw new Error(`no replica of ${master.port}`);
    };
    const replica = await replicaOf(victim);
    /** Whether any key of `token` (its index entry, or the token under its body) lives on the victim. */
    const onVictim = async (token: string) => (await cluster.command(victim, 'KEYS', `*${tokenHashOf(token)}*`)) !== '';

    // Before: tokens on every master, half of them fetched (consumed) already.
    const kept: string[] = [];
    const consumed: string[] = [];
    for (let i = 0; i < 12; i++) {
      const token = await a.mint(rowsOf(200 + i));
      if (i % 2 === 0) kept.push(token);
      else {
        const res = await b.post(token, {}, { accept: ARROW });
        assert.equal(res.status, 200);
        assert.equal(res.complete, true);
        consumed.push(token);
      }
    }
    // One more token whose body (so its consume) lives on the victim.
    let cutToken: string | undefined;
    for (let i = 0; cutToken === undefined && i < 60; i++) {
      const token = await a.mint(rowsOf(400 + i));
      if ((await cluster.command(victim, 'KEYS', `*:t:${tokenHashOf(token)}`)) !== '') cutToken = token;
      else kept.push(token);
    }
    assert.ok(cutToken !== undefined, 'a body on the victim');
    kept.push(cutToken);
    // ROLE on a master: role, its offset, then host, port and offset of each replica.
    await eventually(
      async () => {
        const role = (await cluster.command(victim, 'ROLE')).split('\n');
        return role.length >= 5 && role[1] === role[4];
      },
      5000,
      'the replica holds everything minted so far',
    );
    // The victim's replica stops (SIGSTOP) and the victim drops its link (what it already sent stays
    // in the socket for the replica to read): what is minted now reaches the victim alone, and is lost with it.
    replica.pause();
    t.after(() => replica.resume());
    await cluster.command(victim, 'CLIENT', 'KILL', 'TYPE', 'replica');
    // A transfer now: its consume cannot reach the replica, which may be promoted without it, so it
    // is cut (never a complete 200), and the token comes back with the failover for one transfer.
    const cut = await b.post(cutToken, {}, { accept: ARROW });
    assert.ok(!(cut.status === 200 && cut.complete), `a consume no replica holds does not end as a complete 200 (${cut.status})`);
    const lost: string[] = [];
    for (let i = 0; lost.length < 3 && i < 60; i++) {
      const token = await a.mint(rowsOf(300 + i));
      ((await onVictim(token)) ? lost : kept).push(token);
    }
    assert.equal(lost.length, 3, 'tokens minted on the victim');

    await victim.down();
    replica.resume();
    const failing = Date.now();
    await cluster.failOver(victim);
    const failedOver = Date.now();
    // 503 for the victim's slots until the replicas' stores learn the new map, then never again. Each
    // replica's cluster client learns it on its own, so both are asked (a lost token: 404, nothing spent).
    let lastFiveHundred = failedOver;
    const outcomes = new Map<string, RawResponse[]>();
    await eventually(
      async () => {
        const statuses = (await Promise.all([a.post(lost[0], {}, { accept: ARROW }), b.post(lost[0], {}, { accept: ARROW })])).map((res) => res.status);
        if (statuses.some((status) => status >= 500)) lastFiveHundred = Date.now();
        return statuses.every((status) => status < 500);
      },
      10_000,
      'the victim slots answered again',
    );
    t.diagnostic(`failover ${failedOver - failing} ms; 5xx for ${lastFiveHundred - failedOver} ms after it`);
    assert.ok(lastFiveHundred - failedOver < 3000, `5xx for ${lastFiveHundred - failedOver} ms after the failover (${failedOver - failing} ms) ended`);

    // Every token fetched on both replicas at once, twice over.
    for (const token of [...kept, ...lost, ...consumed]) {
      const responses = [
        ...(await Promise.all([a.post(token, {}, { accept: ARROW }), b.post(token, {}, { accept: ARROW })])),
        ...(await Promise.all([b.post(token, {}, { accept: ARROW }), a.post(token, {}, { accept: ARROW })])),
      ];
      outcomes.set(token, responses);
      assert.ok(
        responses.every((r) => r.status < 500),
        `no 5xx after the failover: ${responses.map((r) => r.status).join(' ')}`,
      );
      assert.ok(responses.filter((r) => r.status === 200 && r.complete).length <= 1, 'never two complete transfers');
    }
    const completeOnce = (token: string) => outcomes.get(token)!.filter((r) => r.status === 200 && r.complete).length === 1;
    for (const token of lost)
      assert.deepEqual(
        outcomes.get(token)!.map((r) => r.status),
        [404, 404, 404, 404],
        'a write lost in the failover: 404',
      );
    for (const token of consumed) assert.ok(!completeOnce(token), 'consumed before the failover: still consumed (the consume reached the replica)');
    for (const token of kept) assert.ok(completeOnce(token), 'a token that survived: one complete transfer');
  },
);
