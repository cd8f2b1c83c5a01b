/**
 * The light install (issue 11): `npm pack`, install the tarball into an empty
 * project from the npm registry, import the library, run the CLI. Besides
 * its peers the install must stay under 30 MB; the CLI's big optional
 * packages are not installed, and the commands that need them say so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { CACHE_ROOT, cachedInstall, npm, packRepo, treeBytes } from '../support/packed-package.js';

const run = promisify(execFile);
const MAX_BYTES_BESIDES_PEERS = 30_000_000;
const OPTIONAL = ['vega-datasets', 'gpt-tokenizer', 'parquet-wasm'];
const PEERS = ['apache-arrow', 'fastify', 'zod'];
/** Both MCP SDK lines are optional peers: the host brings the one it is written on. */
const SDK_LINES = ['@modelcontextprotocol/server', '@modelcontextprotocol/client', '@modelcontextprotocol/sdk'];

interface Sizes {
  besidesPeers: number;
  withPeers: number;
}

/** Runs a command in `cwd`; resolves with its exit code and output whatever the code. */
async function exec(cwd: string, file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === 'number' ? code : -1, stdout: stdout ?? '', stderr: stderr ?? '' };
  }
}

test('npm pack, install into an empty project: under 30 MB besides the peers, the library imports, s2sp --help runs', { timeout: 600_000 }, async (t) => {
  const root = join(CACHE_ROOT, 'light-install');
  const packed = await packRepo(join(root, 'pack'));
  const project = join(root, 'project');
  const sizes = await cachedInstall<Sizes>(project, packed.sha256, async () => {
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'light-install-probe', private: true, type: 'module' }));
    // First without the peers, to weigh what s2sp itself brings; then the peers, as npm adds them.
    await npm(project, ['install', '--omit=peer', '--prefer-offline', '--no-audit', '--no-fund', packed.path]);
    const besidesPeers = await treeBytes(join(project, 'node_modules'));
    await npm(project, ['install', '--prefer-offline', '--no-audit', '--no-fund']);
    return { besidesPeers, withPeers: await treeBytes(join(project, 'node_modules')) };
  });
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  t.diagnostic(`installed: ${mb(sizes.besidesPeers)} besides the peers, ${mb(sizes.withPeers)} with them`);
  assert.ok(sizes.besidesPeers <= MAX_BYTES_BESIDES_PEERS, `${mb(sizes.besidesPeers)} besides the peers`);

  const modules = join(project, 'node_modules');
  for (const name of PEERS) assert.ok(existsSync(join(modules, name, 'package.json')), `peer ${name} installed by npm`);
  for (const name of OPTIONAL) assert.ok(!existsSync(join(modules, name)), `optional ${name} not installed`);
  for (const name of SDK_LINES) assert.ok(!existsSync(join(modules, name)), `SDK ${name} not installed`);

  // The install built the float-text addon from source (a C++ compiler is on every machine the suite runs on),
  // and the installed library loads it.
  const addonFile = join(modules, 's2sp', 'dist', 'native', 'float-text.node');
  const addon = await exec(project, process.execPath, [
    '-e',
    'const a = require(process.argv[1]); const t = new Uint8Array(25); const e = new Uint32Array(1); a.formatFloats(Float64Array.of(0.1), 0, 1, t, 0, e, 0); console.log(Buffer.from(t.subarray(0, e[0])).toString())',
    addonFile,
  ]);
  assert.equal(addon.code, 0, addon.stderr);
  assert.equal(addon.stdout.trim(), '0.1');

  const imported = await exec(project, process.execPath, [
    '--input-type=module',
    '-e',
    "const m = await import('s2sp'); console.log(JSON.stringify([typeof m.S2SPServer, typeof m.registerResourceTool, typeof m.createDataPlane, typeof m.fetchBody]))",
  ]);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(JSON.parse(imported.stdout), ['function', 'function', 'function', 'function']);

  const bin = join(modules, '.bin', 's2sp');
  const help = await exec(project, bin, ['--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stderr, /s2sp serve \[FILE\]/);

  // The demo needs the demo dataset: a clear error naming the package, before anything starts.
  const demo = await exec(project, bin, ['demo']);
  assert.equal(demo.code, 1);
  assert.match(demo.stderr, /S2SP_ERR_CLI_PACKAGE_MISSING/);
  assert.match(demo.stderr, /vega-datasets/);

  // A Parquet file needs parquet-wasm (written here with this repository's copy).
  const pw = await import('parquet-wasm');
  const parquet = pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(tableFromArrays({ a: Int32Array.from([1, 2]) }), 'stream')));
  await writeFile(join(project, 'two-rows.parquet'), parquet);
  const serve = await exec(project, bin, ['serve', 'two-rows.parquet']);
  assert.equal(serve.code, 1);
  assert.match(serve.stderr, /S2SP_ERR_CLI_PACKAGE_MISSING/);
  assert.match(serve.stderr, /parquet-wasm/);

  // Serving MCP needs an SDK line; without one the CLI names the package to install.
  await writeFile(join(project, 'two-rows.json'), '[{"a":1},{"a":2}]');
  const bare = await exec(project, bin, ['serve', 'two-rows.json']);
  assert.equal(bare.code, 1);
  assert.match(bare.stderr, /S2SP_ERR_CLI_PACKAGE_MISSING/);
  assert.match(bare.stderr, /@modelcontextprotocol\/server/);
});
