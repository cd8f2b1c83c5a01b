/**
 * Peer dependencies with ranges (issue 11): test/fixtures/host-app is an
 * analytics server with its own copies of the peers (the lowest MCP SDK and
 * fastify the ranges allow, zod 4), installed from the npm registry. The
 * packed s2sp goes into it; its `tsc` type-checks s2sp's declarations
 * against those copies, and the built app registers s2sp tools on its own
 * McpServer, mounts the data plane on its own fastify app and fetches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CACHE_ROOT, REPO_ROOT, cachedInstall, cachedStep, keyOf, npm, packRepo } from '../support/packed-package.js';

const run = promisify(execFile);
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'host-app');

test('a host app on its own SDK 1.23, fastify 5.0 and zod 4 embeds s2sp, type-checks and fetches', { timeout: 600_000 }, async (t) => {
  const root = join(CACHE_ROOT, 'host-app');
  const packed = await packRepo(join(root, 'pack'));
  const project = join(root, 'project');
  const manifest = await readFile(join(FIXTURE, 'package.json'), 'utf8');
  // The app's own packages are installed once per manifest; s2sp is swapped in whenever the tarball changed.
  const installed = await cachedInstall(project, keyOf(manifest), async () => {
    await cp(join(FIXTURE, 'package.json'), join(project, 'package.json'));
    await npm(project, ['install', '--prefer-offline', '--no-audit', '--no-fund']);
    const versions: Record<string, string> = {};
    for (const name of ['@modelcontextprotocol/sdk', 'fastify', 'zod', 'apache-arrow']) {
      versions[name] = (JSON.parse(await readFile(join(project, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    }
    return versions;
  });
  // --no-save: the fixture's manifest stays as written; s2sp joins next to the app's own peers.
  await cachedStep(project, 's2sp', packed.sha256, () =>
    npm(project, ['install', '--no-save', '--prefer-offline', '--no-audit', '--no-fund', packed.path]),
  );
  t.diagnostic(`host app peers: ${JSON.stringify(installed)}`);
  assert.equal(installed['@modelcontextprotocol/sdk'], '1.23.0');
  assert.match(installed.zod, /^4\./);

  // The sources are copied on every run (cheap), so a changed app.ts is always the one checked.
  await cp(join(FIXTURE, 'tsconfig.json'), join(project, 'tsconfig.json'));
  await cp(join(FIXTURE, 'src'), join(project, 'src'), { recursive: true });
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await run(process.execPath, [tsc, '-p', project], { cwd: project });
  } catch (error) {
    assert.fail(`tsc failed in the host app:\n${(error as { stdout?: string }).stdout ?? ''}`);
  }
  const { stdout } = await run(process.execPath, [join(project, 'out', 'app.js')], { cwd: project, timeout: 60_000 });
  const report = JSON.parse(stdout.trim().split('\n').at(-1) as string) as { ok: boolean; resourceUrlPath: string };
  assert.equal(report.ok, true);
  assert.equal(report.resourceUrlPath, '/analytics/s2sp/data/<token>');
});
