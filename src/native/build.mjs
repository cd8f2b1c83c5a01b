// Builds the optional float-text addon (float-text.cc) into
// dist/native/float-text.node with the machine's C++ compiler and the Node-API
// headers from the npm registry (node-api-headers): no node-gyp, nothing
// downloaded. The tables of its digit algorithm are worked out first
// (pow10-table.mjs) into a header in a temporary directory. Run at install and by `npm run build`. It never fails the
// install: without a compiler (or with S2SP_NATIVE=off) it says so and s2sp
// formats floats in JavaScript, byte for byte the same, only slower
// (native-notes.md, "Float text").
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pow10Tables } from './pow10-table.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, '..', '..', 'dist', 'native', 'float-text.node');
const say = (line) => process.stderr.write(`s2sp: ${line}\n`);

function build() {
  if (process.env.S2SP_NATIVE === 'off') return say('S2SP_NATIVE=off: floats are formatted in JavaScript');
  if (process.platform === 'win32') return say('no float-text addon on Windows yet: floats are formatted in JavaScript');
  let include;
  try {
    include = createRequire(import.meta.url)('node-api-headers').include_dir;
  } catch {
    return say('node-api-headers is not installed: floats are formatted in JavaScript');
  }
  const compiler = process.env.CXX || 'c++';
  const partial = `${target}.${process.pid}`;
  const flags = ['-O2', '-std=c++17', '-shared', '-fPIC', '-fvisibility=hidden', '-DNAPI_VERSION=8', '-DNODE_GYP_MODULE_NAME=float_text'];
  if (process.platform === 'darwin') flags.push('-undefined', 'dynamic_lookup');
  mkdirSync(dirname(target), { recursive: true });
  const tables = mkdtempSync(join(tmpdir(), 's2sp-float-text-'));
  try {
    writeFileSync(join(tables, 'pow10-table.h'), pow10Tables());
    execFileSync(compiler, [...flags, '-I', include, '-I', tables, join(here, 'float-text.cc'), '-o', partial], { stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    const detail = String(error.stderr ?? error.message)
      .trim()
      .split('\n')[0];
    return say(`the float-text addon did not build with ${compiler} (${detail}): floats are formatted in JavaScript`);
  } finally {
    rmSync(tables, { recursive: true, force: true });
  }
}

build();
