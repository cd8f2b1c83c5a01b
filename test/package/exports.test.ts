/**
 * README's Library section and the package's exports agree name for name:
 * the names of README's "### Exports" tables are exactly what the built
 * `s2sp` and `s2sp/testing` export, values and types alike, and `s2sp` stays
 * small enough to hold in one's head (49 names at most: 45, since
 * OAuth on /mcp `callerOf` with its `CallerIdentity`, and since query_rows
 * `registerQueryTool` with its `QueryToolOptions`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const ROOT = new URL('../../../', import.meta.url);
const MAX_NAMES = 49;

/** The "### Exports" subsection of README.md. */
function exportsSection(): string {
  const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
  const start = readme.indexOf('\n### Exports\n');
  assert.ok(start >= 0, 'README has a "### Exports" section');
  const end = readme.indexOf('\n#', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The backticked names of the first cell of each table row that `row` picks (header and rule rows skipped). */
function namesInRows(section: string, pick: (firstCell: string) => string | undefined): string[] {
  const names: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split(' | ');
    const cell = pick(cells[0].slice(2));
    if (cell === undefined) continue;
    for (const [, name] of cell.matchAll(/`([A-Za-z_$][\w$]*)(?:\([^`]*\))?`/g)) names.push(name);
  }
  return names;
}

/** The main table: rows whose first cell names exports (a subpath row starts with `s2sp/`). */
function readmeMainNames(): string[] {
  return namesInRows(exportsSection(), (first) => (first.startsWith('`s2sp/') ? undefined : first));
}

/** The names README lists for `subpath`, from its row of the subpaths table. */
function readmeSubpathNames(subpath: string): string[] {
  const row = exportsSection()
    .split('\n')
    .find((line) => line.startsWith(`| \`${subpath}\` | `));
  assert.ok(row !== undefined, `README lists ${subpath}`);
  const cell = row.split(' | ')[1];
  return [...cell.matchAll(/`([A-Za-z_$][\w$]*)(?:\([^`]*\))?`/g)].map(([, name]) => name);
}

/** Every name a built entry point exports: its runtime values and the type-only names of its declarations. */
async function exportedNames(entry: string): Promise<string[]> {
  const values = Object.keys(await import(new URL(`dist/src/${entry}.js`, ROOT).href));
  const declarations = readFileSync(new URL(`dist/src/${entry}.d.ts`, ROOT), 'utf8');
  const names = new Set(values);
  for (const [, list] of declarations.matchAll(/export (?:type )?\{([^}]*)\}/g)) {
    for (const item of list.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  return [...names].sort();
}

test(`README's export table and s2sp's exports agree name for name, ${MAX_NAMES} names at most`, async () => {
  const listed = readmeMainNames();
  assert.equal(new Set(listed).size, listed.length, 'README lists each name once');
  const exported = await exportedNames('index');
  assert.deepEqual([...listed].sort(), exported);
  assert.ok(exported.length <= MAX_NAMES, `${exported.length} names exported`);
});

test("README's s2sp/testing row and the subpath agree name for name; package.json exports it", async () => {
  assert.deepEqual(readmeSubpathNames('s2sp/testing').sort(), await exportedNames('testing'));
  const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { exports: Record<string, { import: string }> };
  assert.equal(pkg.exports['./testing']?.import, './dist/src/testing.js');
});
