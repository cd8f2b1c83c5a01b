/**
 * Runs the benchmark scenarios, each in its own process
 * (`node --expose-gc dist/bench/<scenario>.js`), prints a summary table of
 * every goal, and after a full run (not --quick, not --only) rewrites
 * bench/README.md and bench/results/large-fetch.svg.
 *
 *   node dist/bench/run.js [--quick] [--only a,b] [--duration S] [--reps N] [--cpu-prof]
 *   node dist/bench/run.js --report      # rebuild the README from bench/results/*.json
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TABLE_CACHE_ENV } from './lib/bench-table.js';
import { summaryMarkdown, writeLargeFetchChart, writeReadme } from './lib/readme.js';
import { RESULTS_DIR, writeResults, type ScenarioResult } from './lib/report.js';
import { parseFlags } from './lib/scenario.js';

/** Every scenario, in the order a full run takes them. */
export const SCENARIOS = [
  'ingest',
  'memory',
  'control-plane',
  'inline-threshold',
  'large-fetch',
  'compression',
  'think-time',
  'scattered',
  'small-requests',
  'workers',
  'mixed-load',
  'pipeline',
  'query-rows',
  'consumer-read',
  'redis-cluster',
] as const;

const HERE = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const flags = parseFlags(argv);

function option(name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at >= 0) return argv[at + 1];
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

function readResult(name: string, notBefore: number): ScenarioResult | undefined {
  const file = join(RESULTS_DIR, `${name}.json`);
  if (!existsSync(file) || statSync(file).mtimeMs < notBefore) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as ScenarioResult;
}

/** Runs one scenario in a child process; resolves with its exit code (killed after `timeoutMs`). */
function runChild(name: string, passArgs: string[], timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(HERE, `${name}.js`), ...passArgs], { stdio: 'inherit' });
    const timer = setTimeout(() => {
      console.error(`${name}: over ${timeoutMs / 1000} s, stopping it`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

if (argv.includes('--report')) {
  const results = SCENARIOS.map((name) => readResult(name, 0)).filter((r): r is ScenarioResult => r !== undefined);
  const quick = results.filter((r) => r.quick).map((r) => r.scenario);
  if (quick.length > 0) {
    console.error(`not rebuilding bench/README.md: these results come from --quick runs: ${quick.join(', ')}`);
    process.exit(1);
  }
  if (results.some((r) => r.scenario === 'large-fetch')) writeLargeFetchChart(results.find((r) => r.scenario === 'large-fetch')!);
  const run = existsSync(join(RESULTS_DIR, 'run.json'))
    ? (JSON.parse(readFileSync(join(RESULTS_DIR, 'run.json'), 'utf8')) as { wallSeconds: number })
    : undefined;
  const wall = run?.wallSeconds ?? results.reduce((sum, r) => sum + r.wallSeconds, 0);
  console.log(`wrote ${writeReadme(results, wall)}`);
  process.exit(0);
}

const only = option('--only');
// The soak (bench/soak.ts) is not a goal table; a full run ends with its 60 s. --quick leaves it
// out: its 5 s mode runs in the test suite on every Node line (`--only soak --quick` runs that mode).
const selectedAll =
  only === undefined
    ? [...SCENARIOS, ...(flags.quick ? [] : ['soak'])]
    : only
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
const runSoak = selectedAll.includes('soak');
const selected = selectedAll.filter((s) => s !== 'soak');
const unknown = selected.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  process.exit(2);
}
const passArgs: string[] = [];
if (flags.quick) passArgs.push('--quick');
if (flags.duration !== undefined) passArgs.push('--duration', String(flags.duration));
if (flags.reps !== undefined) passArgs.push('--reps', String(flags.reps));
if (flags.cpuProf) passArgs.push('--cpu-prof');
if (flags.cpuProfAll) passArgs.push('--cpu-prof-all');

console.log(`# s2sp benchmarks${flags.quick ? ' (quick)' : ''}: ${selected.join(', ')}`);
// The scenarios' children share the generated table through this directory (bench/lib/bench-table.ts).
const tableCache = mkdtempSync(join(tmpdir(), 's2sp-bench-tables-'));
process.env[TABLE_CACHE_ENV] = tableCache;
process.on('exit', () => rmSync(tableCache, { recursive: true, force: true }));
// An interrupted run removes it too ('exit' does not fire on a signal's default action).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const started = Date.now();
const results: ScenarioResult[] = [];
const failed: string[] = [];
for (const name of selected) {
  const scenarioStart = Date.now();
  const code = await runChild(name, passArgs, flags.quick ? 150_000 : 480_000);
  const result = readResult(name, scenarioStart);
  if (code !== 0 || result === undefined) {
    failed.push(name);
    console.error(`${name} failed (exit code ${code})`);
    continue;
  }
  results.push(result);
}
if (runSoak) {
  console.log(`\n## Soak${flags.quick ? ' (short)' : ''}\n`);
  const code = await runChild('soak', flags.quick ? ['--short'] : [], flags.quick ? 150_000 : 480_000);
  if (code !== 0) failed.push('soak');
}
const wallSeconds = (Date.now() - started) / 1000;

console.log(`\n## Summary${flags.quick ? ' (quick)' : ''}\n`);
if (results.some((r) => r.goals.length > 0)) console.log(summaryMarkdown(results));
const goals = results.flatMap((r) => r.goals);
console.log(`\n${goals.filter((g) => g.met).length} of ${goals.length} goals met; ${results.length} scenario(s) in ${wallSeconds.toFixed(1)} s wall.`);
if (failed.length > 0) console.log(`FAILED: ${failed.join(', ')}`);

if (!flags.quick && only === undefined && failed.length === 0) {
  const largeFetch = results.find((r) => r.scenario === 'large-fetch');
  if (largeFetch) console.log(`wrote ${writeLargeFetchChart(largeFetch)}`);
  writeResults('run', { wallSeconds: Math.round(wallSeconds * 10) / 10, scenarios: selected, date: new Date(started).toISOString() });
  console.log(`wrote ${writeReadme(results, wallSeconds)}`);
} else if (!flags.quick) {
  console.log('bench/README.md not rewritten (only a full run of every scenario, without failures, rewrites it).');
}
process.exit(failed.length > 0 ? 1 : 0);
