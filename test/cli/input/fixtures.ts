/**
 * Shared helpers for the CLI input tests: where the vega-datasets files are,
 * and a temporary directory per test file (removed afterwards).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of a file in node_modules/vega-datasets/data (tests run from dist/test/cli/input). */
export function vegaData(name: string): string {
  return fileURLToPath(new URL(`../../../../node_modules/vega-datasets/data/${name}`, import.meta.url));
}

/** A temporary directory and a writer for files in it. */
export interface TempDir {
  dir: string;
  /** Writes `content` to `name` inside the directory and returns its path. */
  write(name: string, content: string | Uint8Array): Promise<string>;
  remove(): Promise<void>;
}

/** Creates a fresh directory under os.tmpdir(). */
export async function createTempDir(prefix = 's2sp-input-'): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return {
    dir,
    async write(name, content) {
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
