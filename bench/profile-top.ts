/**
 * Lists the top self-time functions of a V8 CPU profile (`node --cpu-prof`,
 * e.g. a bench server child run with `--cpu-prof`), per thread file.
 *
 *   node dist/bench/profile-top.js FILE.cpuprofile [N]
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
if (file === undefined) {
  console.error('usage: node dist/bench/profile-top.js FILE.cpuprofile [N]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
// Self time per node: each sample's delta goes to the node it landed on.
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const byFunction = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const frame = byId.get(id)!.callFrame;
  const where = frame.url ? `${basename(frame.url)}:${frame.lineNumber + 1}` : '';
  const key = `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  total += us;
}
const idle = ['(idle)', '(program)', '(garbage collector)'];
const busy = [...byFunction].filter(([k]) => !idle.some((i) => k.startsWith(i))).reduce((s, [, us]) => s + us, 0);
console.log(`${basename(file)}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s in JS/native functions`);
console.log('| self ms | % of sampled | function |');
console.log('|---:|---:|---|');
for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`| ${(us / 1000).toFixed(1)} | ${((100 * us) / total).toFixed(1)}% | ${key.replace(/\|/g, '\\|')} |`);
}
