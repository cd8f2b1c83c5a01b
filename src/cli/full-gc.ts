/**
 * The CLI's full-GC switch. A long-running `s2sp serve` caches and drops
 * SharedArrayBuffers that V8 frees only in a full collection (native-notes.md,
 * "Memory"); the command, being the process's owner, exposes the collector
 * for the store to ask for. The library itself never changes V8 flags.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FullGc } from '../cache/gc-nudge.js';

/** Exposes V8's collector in this process and returns it, or undefined where that fails. */
export function exposeFullGc(): FullGc | undefined {
  try {
    setFlagsFromString('--expose-gc');
    // `gc` appears in contexts created after the flag is set, not in this one.
    return runInNewContext('gc') as FullGc;
  } catch {
    return undefined;
  }
}
