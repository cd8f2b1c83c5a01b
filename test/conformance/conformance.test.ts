/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * the 0.2.0 prerelease line) against `s2sp serve --transport http`: the
 * scenarios protocol 2026-07-28 requires, and the 2025-11-25 ones. Each run
 * is held to a baseline beside this file that names every failing check and
 * why; the suite exits non-zero on a failure the baseline does not name and
 * on a baselined check that passes, so either fails this test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode, startCliServer } from '../support/cli-process.js';

const require = createRequire(import.meta.url);
const SUITE = join(require.resolve('@modelcontextprotocol/conformance/package.json'), '..', 'dist', 'index.js');
const BASELINES = fileURLToPath(new URL('../../../test/conformance/', import.meta.url));

const RUNS = [
  { revision: '2026-07-28', args: ['--requirements', '2026-07-28'] },
  { revision: '2025-11-25', args: ['--spec-version', '2025-11-25'] },
] as const;

for (const run of RUNS) {
  test(`MCP conformance ${run.revision}: s2sp serve over HTTP fails no check beyond its baseline`, { timeout: 300_000 }, async (t) => {
    const server = await startCliServer(t, ['serve', '--transport', 'http', '--port', '0']);
    const output = await mkdtemp(join(tmpdir(), 's2sp-conformance-'));
    t.after(() => rm(output, { recursive: true, force: true }));
    const baseline = join(BASELINES, `baseline-${run.revision}.yml`);
    const outcome = await runNode(SUITE, ['server', '--url', server.url, ...run.args, '--expected-failures', baseline, '-o', output], {
      timeoutMs: 240_000,
    });
    const summary = outcome.stdout.slice(outcome.stdout.lastIndexOf('=== SUMMARY ==='));
    t.diagnostic(
      summary
        .split('\n')
        .filter((line) => /^Total|passed/.test(line))
        .slice(-1)[0] ?? 'no summary',
    );
    assert.equal(outcome.code, 0, `conformance ${run.revision} found failures beyond the baseline (or stale entries):\n${summary}\n${outcome.stderr}`);
  });
}
