/**
 * Test support for the package tests: `npm pack` of this repository (the
 * tarball users install), projects installed from the npm registry into a
 * cache in the temp directory, reinstalled only when what they install
 * changed, and the installed size of a node_modules tree.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root (tests run from dist/test/support). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * Where installed test projects are kept between runs: outside the
 * repository, whose node_modules Node's resolution would otherwise find from
 * inside them (a missing optional package would resolve to ours). One per
 * checkout.
 */
export const CACHE_ROOT = join(tmpdir(), 's2sp-package-tests', keyOf(REPO_ROOT).slice(0, 12));

/** Runs npm in `cwd`; rejects with its output when it fails. */
export async function npm(cwd: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run('npm', [...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: error });
  }
}

/** A packed tarball and the sha256 of its bytes (npm packs with fixed mtimes, so same files, same hash). */
export interface Packed {
  path: string;
  sha256: string;
}

/** Packs this repository (its built dist/) into `destination`, as `npm publish` would. */
export async function packRepo(destination: string): Promise<Packed> {
  await mkdir(destination, { recursive: true });
  const out = await npm(REPO_ROOT, ['pack', '--ignore-scripts', '--json', '--pack-destination', destination]);
  const [{ filename }] = JSON.parse(out) as { filename: string }[];
  const path = join(destination, filename);
  return {
    path,
    sha256: createHash('sha256')
      .update(await readFile(path))
      .digest('hex'),
  };
}

/**
 * Runs `install` in a fresh `dir` unless the stamp there says it already ran
 * for `key`; returns what `install` returned (or stored then).
 */
export async function cachedInstall<T>(dir: string, key: string, install: () => Promise<T>): Promise<T> {
  const stamped = await cachedStep(dir, 'install', key, async () => {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return install();
  });
  return stamped;
}

/**
 * Runs `step` in `dir` (which stays as it is) unless the stamp named `name`
 * there says it already ran for `key`; returns what it returned then.
 */
export async function cachedStep<T>(dir: string, name: string, key: string, step: () => Promise<T>): Promise<T> {
  const stampPath = join(dir, `.s2sp-stamp-${name}.json`);
  if (existsSync(stampPath)) {
    const stamp = JSON.parse(await readFile(stampPath, 'utf8')) as { key: string; value: T };
    if (stamp.key === key) return stamp.value;
  }
  const value = await step();
  await writeFile(stampPath, JSON.stringify({ key, value }));
  return value;
}

/** Bytes of every file under `dir` (apparent sizes; symlinks not followed). */
export async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  const pending = [dir];
  // Bounded by the tree itself: each directory is visited once.
  while (pending.length > 0) {
    const current = pending.pop() as string;
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) total += (await lstat(path)).size;
    }
  }
  return total;
}

/** sha256 of some texts, for cache keys. */
export function keyOf(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}
