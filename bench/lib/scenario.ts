/**
 * The frame every scenario runs in: parses the flags, times the run, prints
 * the tables and the goals as markdown, and writes
 * bench/results/<scenario>.json. A scenario file calls `runScenario` at top
 * level, so `node dist/bench/<scenario>.js [--quick]` runs it alone; run.ts
 * runs each one the same way, in its own process.
 */
import { argv as processArgv } from 'node:process';
import { goalsTable, machineInfo, markdownTable, writeResults, type Goal, type ResultTable, type ScenarioResult } from './report.js';

/** Flags every scenario understands. */
export interface ScenarioFlags {
  /** Fewer repetitions and sizes; the whole suite in under 3 minutes. */
  quick: boolean;
  /** Seconds per autocannon run (small-requests). */
  duration?: number;
  /** Repetitions, overriding the scenario's default. */
  reps?: number;
  /** Profile the main thread of the s2sp server during its first measured run of each case (inspector). */
  cpuProf: boolean;
  /** Start server children under `node --cpu-prof` (every thread, whole lifetime). */
  cpuProfAll: boolean;
  /** Every raw argument. */
  argv: readonly string[];
}

/** What a scenario's body returns. */
export interface ScenarioOutput {
  tables: ResultTable[];
  goals: Goal[];
  notes: string[];
  data: unknown;
}

/** Parses the common flags. */
export function parseFlags(argv: readonly string[]): ScenarioFlags {
  const value = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    if (at >= 0) return argv[at + 1];
    const inline = argv.find((a) => a.startsWith(`${name}=`));
    return inline?.slice(name.length + 1);
  };
  const number = (name: string): number | undefined => {
    const text = value(name);
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, got ${text}`);
    return n;
  };
  return {
    quick: argv.includes('--quick'),
    duration: number('--duration'),
    reps: number('--reps'),
    cpuProf: argv.includes('--cpu-prof'),
    cpuProfAll: argv.includes('--cpu-prof-all'),
    argv,
  };
}

/**
 * Runs one scenario and reports it. Exits non-zero when the scenario throws
 * (a goal that is not met is a result, not a failure).
 */
export async function runScenario(scenario: string, title: string, body: (flags: ScenarioFlags) => Promise<ScenarioOutput>): Promise<void> {
  const flags = parseFlags(processArgv.slice(2));
  const machine = machineInfo();
  const started = performance.now();
  console.log(`\n## ${title}${flags.quick ? ' (quick)' : ''}\n`);
  try {
    const output = await body(flags);
    const result: ScenarioResult = {
      scenario,
      title,
      quick: flags.quick,
      machine,
      wallSeconds: Math.round((performance.now() - started) / 100) / 10,
      ...output,
    };
    console.log('');
    for (const table of result.tables) {
      if (table.title) console.log(`${table.title}\n`);
      console.log(markdownTable(table.header, table.rows, table.align));
      console.log('');
    }
    if (result.goals.length > 0) console.log(`${goalsTable(result.goals)}\n`);
    for (const note of result.notes) console.log(`- ${note}`);
    const file = writeResults(scenario, result);
    console.log(`\n${scenario}: ${result.wallSeconds.toFixed(1)} s; results in ${file}`);
    // Servers are children with IPC channels, pools may idle: leave explicitly.
    process.exit(0);
  } catch (error) {
    console.error(`${scenario} failed:`, error);
    process.exit(1);
  }
}

/** Logs a progress line to stderr (stdout holds the report). */
export function progress(line: string): void {
  process.stderr.write(`  [${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

/** A loop guard: true while fewer than `count` iterations ran and `budgetMs` has not passed. */
export function bounded(count: number, budgetMs: number): (i: number) => boolean {
  const deadline = performance.now() + budgetMs;
  return (i) => i < count && (i === 0 || performance.now() < deadline);
}
