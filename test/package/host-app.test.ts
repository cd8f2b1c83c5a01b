/**
 * Peer dependencies with ranges, on both MCP SDK lines: test/fixtures/host-app
 * is an analytics server with its own copies of the peers, in three hosts
 * (SDK v2 with zod 4; SDK v1, the lowest the range allows, with zod 3 and
 * with zod 4), installed from the npm registry. The packed s2sp goes into
 * each; `tsc` (skipLibCheck off) checks s2sp's declarations against those
 * copies, and the built app registers s2sp tools on its own McpServer,
 * mounts the data plane on its own fastify app, and has its own Client call
 * a resource tool and a consumer tool fetching the body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CACHE_ROOT, REPO_ROOT, cachedInstall, cachedStep, keyOf, npm, packRepo } from '../support/packed-package.js';

const run = promisify(execFile);
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'host-app');

/** Each host: its SDK line and zod, what must be installed, and what must not be (the other SDK line). */
const HOSTS = [
  { line: 'v2-zod4', sdkModule: 'v2', sdk: '@modelcontextprotocol/server', version: '2.4.0', zod: /^4\./, absent: '@modelcontextprotocol/sdk' },
  { line: 'v1-zod3', sdkModule: 'v1', sdk: '@modelcontextprotocol/sdk', version: '1.23.0', zod: /^3\./, absent: '@modelcontextprotocol/server' },
  { line: 'v1-zod4', sdkModule: 'v1', sdk: '@modelcontextprotocol/sdk', version: '1.23.0', zod: /^4\./, absent: '@modelcontextprotocol/server' },
] as const;

for (const host of HOSTS) {
  test(`a host app on SDK ${host.line} embeds s2sp from the packed tarball, type-checks and fetches`, { timeout: 600_000 }, async (t) => {
    const root = join(CACHE_ROOT, `host-app-${host.line}`);
    const packed = await packRepo(join(root, 'pack'));
    const project = join(root, 'project');
    const lineDir = join(FIXTURE, 'lines', host.line);
    const manifest = await readFile(join(lineDir, 'package.json'), 'utf8');
    // The app's own packages are installed once per manifest; s2sp is swapped in whenever the tarball changed.
    const installed = await cachedInstall(project, keyOf(manifest), async () => {
      await cp(join(lineDir, 'package.json'), join(project, 'package.json'));
      await npm(project, ['install', '--prefer-offline', '--no-audit', '--no-fund']);
      return { sdk: await versionIn(project, host.sdk), zod: await versionIn(project, 'zod') };
    });
    // --no-save: the fixture's manifest stays as written; s2sp joins next to the app's own peers.
    await cachedStep(project, 's2sp', packed.sha256, () => npm(project, ['install', '--no-save', '--prefer-offline', '--no-audit', '--no-fund', packed.path]));
    t.diagnostic(`host app peers: ${JSON.stringify(installed)}`);
    assert.equal(installed.sdk, host.version);
    assert.match(installed.zod ?? '', host.zod);
    // Both SDK lines are optional peers of s2sp: installing it never brings the other line.
    assert.equal(existsSync(join(project, 'node_modules', host.absent)), false, `${host.absent} was installed beside ${host.sdk}`);

    // The sources are copied on every run (cheap), so a changed app.ts is always the one checked.
    await cp(join(FIXTURE, 'tsconfig.json'), join(project, 'tsconfig.json'));
    await cp(join(FIXTURE, 'src'), join(project, 'src'), { recursive: true });
    await cp(join(FIXTURE, 'sdk', `${host.sdkModule}.ts`), join(project, 'src', 'sdk.ts'));
    const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
    try {
      await run(process.execPath, [tsc, '-p', project], { cwd: project });
    } catch (error) {
      assert.fail(`tsc failed in the ${host.line} host app:\n${(error as { stdout?: string }).stdout ?? ''}`);
    }
    const { stdout } = await run(process.execPath, [join(project, 'out', 'app.js')], { cwd: project, timeout: 60_000 });
    const report = JSON.parse(stdout.trim().split('\n').at(-1) as string) as { ok: boolean; line: string; resourceUrlPath: string };
    assert.equal(report.ok, true);
    assert.equal(report.line, host.sdkModule);
    assert.equal(report.resourceUrlPath, '/analytics/s2sp/data/<token>');
  });
}

/** The version of `name` installed in `project`, or undefined. */
async function versionIn(project: string, name: string): Promise<string | undefined> {
  const path = join(project, 'node_modules', name, 'package.json');
  if (!existsSync(path)) return undefined;
  return (JSON.parse(await readFile(path, 'utf8')) as { version: string }).version;
}
