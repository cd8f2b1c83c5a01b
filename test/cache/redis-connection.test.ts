/**
 * What RedisStore's URLs mean (a node, or a cluster's seeds with the
 * credentials for every node), how they are shown without their secrets, and
 * which replicas of a master count for a failover. The connections
 * themselves are tested against real servers in redis-store.test.ts and
 * redis-cluster-store.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promotableReplicasOf, redactedUrl, redisTargetOf } from '../../src/cache/redis-connection.js';
import { describeStoreSpec, storeKindOf } from '../../src/cache/store-from-spec.js';

test('a cluster URL names its seeds, TLS and the credentials every node gets', () => {
  assert.deepEqual(redisTargetOf('redis-cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002'), {
    cluster: true,
    tls: false,
    nodes: ['10.0.0.1:7000', '10.0.0.2:7001', '[::1]:7002'],
    username: undefined,
    password: undefined,
  });
  assert.deepEqual(redisTargetOf('rediss-cluster://app:p%40ss%3Aword@cache.example:6379/'), {
    cluster: true,
    tls: true,
    nodes: ['cache.example:6379'],
    username: 'app',
    password: 'p@ss:word',
  });
  // A password alone, as for redis:// (the default user).
  const passwordOnly = redisTargetOf('redis-cluster://:secret@h:1');
  assert.equal(passwordOnly.username, undefined);
  assert.equal(passwordOnly.password, 'secret');
  assert.deepEqual(redisTargetOf('redis://h:6379/2'), { cluster: false, tls: false, nodes: ['h:6379'] });
});

test('a cluster URL without host:port seeds, with a database, or malformed is S2SP_ERR_OPTION_INVALID, and its password is not repeated', () => {
  for (const url of [
    'redis-cluster://',
    'redis-cluster://user:secret@host',
    'redis-cluster://h:1,',
    'redis-cluster://h:1/2',
    'redis-cluster://h:99999',
    'redis-cluster://u:%zz@h:1',
    'http://h:1',
  ]) {
    assert.throws(
      () => redisTargetOf(url),
      (error: { code?: string; message?: string }) => error.code === 'S2SP_ERR_OPTION_INVALID' && !String(error.message).includes('secret'),
      url,
    );
  }
});

test('the store spec: cluster URLs are Redis stores, shown without credentials; bad ones are refused without them', () => {
  assert.equal(storeKindOf('redis-cluster://h:1,h:2'), 'redis');
  assert.equal(storeKindOf('rediss-cluster://u:p@h:1'), 'redis');
  assert.equal(describeStoreSpec('rediss-cluster://app:secret@h1:7000,h2:7000'), 'rediss-cluster://h1:7000,h2:7000');
  assert.equal(describeStoreSpec('redis://app:secret@h1:7000/3'), 'redis://h1:7000/3');
  assert.equal(redactedUrl('redis://:secret@h:1'), 'redis://h:1');
  assert.throws(
    () => storeKindOf('redis-cluster://app:secret@nohost'),
    (error: { code?: string; message?: string }) => error.code === 'S2SP_ERR_OPTION_INVALID' && !String(error.message).includes('secret'),
  );
});

test('replicas a failover could promote: those of this master not flagged fail', () => {
  const nodes = [
    'aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460',
    'bbb 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922',
    'ccc 127.0.0.1:7003@17003 slave aaa 0 0 1 connected',
    'ddd 127.0.0.1:7004@17004 slave,fail? aaa 0 0 1 connected',
    'eee 127.0.0.1:7005@17005 slave,fail aaa 0 0 1 disconnected',
    'fff 127.0.0.1:7006@17006 slave bbb 0 0 2 connected',
    '',
  ].join('\n');
  assert.equal(promotableReplicasOf(nodes), 2);
  assert.equal(promotableReplicasOf('aaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n'), 0);
});
