/**
 * Side-by-side goals of two bench runs, for a before/after reading of a change:
 *
 *   node dist/bench/compare.js BEFORE_DIR AFTER_DIR [before-label after-label]
 *
 * Each directory holds the `<scenario>.json` files of one run (a copy of
 * bench/results/). Prints one markdown table: every goal present in either
 * run, the two measured values, after over before, and whether each met its
 * target. Runs of different machines or dates are compared as given: it is
 * the caller's job to run them side by side (interleaved, scenario by scenario).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { goalValue, markdownTable, type Goal, type ScenarioResult } from './lib/report.js';

const [beforeDir, afterDir, beforeLabel = 'before', afterLabel = 'after'] = process.argv.slice(2);
if (beforeDir === undefined || afterDir === undefined) {
  console.error('usage: node dist/bench/compare.js BEFORE_DIR AFTER_DIR [before-label after-label]');
  process.exit(2);
}

/** Goals of one run, keyed by scenario and goal name. */
function goalsIn(dir: string): Map<string, Goal> {
  const goals = new Map<string, Goal>();
  if (!existsSync(dir)) return goals;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const result = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Partial<ScenarioResult>;
    // A name may end in this run's figures, "(12.8 vs 7.495)": not part of the goal's identity.
    for (const goal of result.goals ?? []) goals.set(`${result.scenario}\u0000${goal.name.replace(/ \([^()]*\)$/, '')}`, goal);
  }
  return goals;
}

const before = goalsIn(beforeDir);
const after = goalsIn(afterDir);
const keys = [...new Set([...before.keys(), ...after.keys()])];
const shown = (goal: Goal | undefined): string => (goal === undefined ? '-' : `${goalValue(goal.measured, goal.unit)}${goal.met ? '' : ' (miss)'}`);
const rows = keys.map((key) => {
  const [scenario, name] = key.split('\u0000');
  const b = before.get(key);
  const a = after.get(key);
  const target = (a ?? b)!;
  const ratio = a !== undefined && b !== undefined && b.measured !== 0 ? `${(a.measured / b.measured).toFixed(2)}x` : '-';
  return [scenario, name, shown(b), shown(a), ratio, `${target.op} ${goalValue(target.target, target.unit)}`];
});
console.log(markdownTable(['scenario', 'goal', beforeLabel, afterLabel, `${afterLabel} / ${beforeLabel}`, 'target'], rows, ['l', 'l', 'r', 'r', 'r', 'r']));
