/**
 * The redis-cluster helper itself: the cluster tests lean on it to start a
 * real three-master cluster (with replicas when they test a failover) and to
 * fail a master over. Checked through redis-cli, without any Redis client.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startRedisCluster } from './redis-cluster.js';
import { redisSkipReason } from './redis-server.js';

test('three masters serve every slot, keys spread over them', { skip: redisSkipReason() }, async () => {
  const cluster = await startRedisCluster();
  try {
    const masters = await cluster.masters();
    assert.equal(masters.length, 3);
    assert.match(await cluster.command(masters[0], 'CLUSTER', 'INFO'), /cluster_slots_assigned:16384/);
    // -c follows MOVED, so each key lands on the master that owns its slot.
    for (let i = 0; i < 30; i++) await cluster.command(masters[0], '-c', 'SET', `key:${i}`, 'v');
    const counts = await cluster.keysPerMaster();
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      30,
    );
    assert.ok(
      counts.every((n) => n > 0),
      `every master holds keys: ${counts.join(', ')}`,
    );
    assert.match(cluster.url, /^redis-cluster:\/\/127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+){2}$/);
  } finally {
    await cluster.stop();
  }
});

test('failOver promotes the replica of a downed master and the cluster serves every slot again', { skip: redisSkipReason() }, async () => {
  const cluster = await startRedisCluster({ replicasPerMaster: 1 });
  try {
    const [first, ...others] = await cluster.masters();
    assert.equal(others.length, 2);
    await cluster.failOver(first);
    const after = await cluster.masters();
    assert.equal(after.length, 3);
    assert.ok(!after.includes(first));
    assert.match(await cluster.command(after[0], 'CLUSTER', 'INFO'), /cluster_state:ok/);
  } finally {
    await cluster.stop();
  }
});
