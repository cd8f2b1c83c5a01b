import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

// A module resolve hook that refuses every agent framework, so an import that loads one fails.
const REFUSE_FRAMEWORKS = `
const FRAMEWORK = /\\/node_modules\\/(ai|@ai-sdk|@langchain|langchain|@anthropic-ai)\\//;
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (FRAMEWORK.test(resolved.url)) throw new Error('framework loaded: ' + resolved.url);
  return resolved;
}`;

/** Imports `specifiers` by package name in a fresh Node whose resolver refuses the frameworks; prints each module's exports. */
async function importRefusingFrameworks(specifiers: string[]): Promise<Record<string, string[]>> {
  const script = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(REFUSE_FRAMEWORKS)}));
const out = {};
for (const name of ${JSON.stringify(specifiers)}) out[name] = Object.keys(await import(name)).sort();
console.log(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: PACKAGE_ROOT, timeout: 60_000 });
  return JSON.parse(stdout) as Record<string, string[]>;
}

test('the subpath exports resolve by package name, and neither they nor the core load a framework', async () => {
  const modules = await importRefusingFrameworks(['s2sp', 's2sp/ai-sdk', 's2sp/langchain', 's2sp/claude-agent-sdk']);
  assert.ok(modules.s2sp.includes('S2SPDispatcher'));
  assert.deepEqual(modules['s2sp/ai-sdk'], ['withS2SP']);
  assert.deepEqual(modules['s2sp/langchain'], ['createS2SPToolHooks']);
  assert.deepEqual(modules['s2sp/claude-agent-sdk'], ['RewriteDecision', 'createS2SPHooks']);
});

test('the framework-refusing resolver does refuse a framework (so the check above can fail)', async () => {
  await assert.rejects(importRefusingFrameworks(['ai']), /framework loaded/);
});
