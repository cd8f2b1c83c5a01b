/**
 * The soak in its short mode (bench/soak.ts --short: 5 s, 10 connections):
 * a mixed load of minting, partial and full fetches, hang-ups and bad
 * requests must end with no unexpected outcome, an empty cache, and RSS back
 * near the start. The full 60 s run is part of `npm run bench`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SOAK = fileURLToPath(new URL('../../bench/soak.js', import.meta.url));

test('soak (short): no unexpected errors, cache empty, RSS back near the start', () => {
  const run = spawnSync(process.execPath, [SOAK, '--short'], { encoding: 'utf8', timeout: 120_000 });
  console.log(run.stdout);
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /unexpected errors: 0/);
  assert.match(run.stdout, /after expiry: 0 entries/);
  assert.match(run.stdout, /RSS back near the start \(after a full GC, within 100 MB\): yes/);
  const requests = Number(/requests: (\d+)/.exec(run.stdout)?.[1]);
  assert.ok(requests > 100, `the load ran (${requests} requests)`);
});
