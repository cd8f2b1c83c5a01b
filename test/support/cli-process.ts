/**
 * Test support: the built `s2sp` CLI (and other Node scripts) as child
 * processes. `runNode` runs one to its end and keeps what it printed;
 * `startCliServer` starts a server command and resolves once its log line
 * names where it listens (an event, not a pause), killing it after the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The built CLI's entry point. */
export const CLI_PATH = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** What a finished child printed, and how it ended. */
export interface ProcessOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runNode}. */
export interface RunOptions {
  /** Killed (SIGKILL) after this long; the outcome then has a null code. Default 90 s. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Runs `node script ...args` to its end. */
export function runNode(script: string, args: readonly string[], options: RunOptions = {}): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `s2sp ...args` to its end. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<ProcessOutcome> {
  return runNode(CLI_PATH, args, options);
}

/** A CLI server that is up. */
export interface CliServer {
  child: ChildProcess;
  /** The first capture group of the log line that said it listens. */
  url: string;
}

/** The line `s2sp serve|consumer --transport http` logs; its group is the MCP endpoint's URL. */
export const MCP_URL_LINE = /MCP at (http:\/\/\S+\/mcp)/;

/**
 * Starts `s2sp ...args` and resolves once its stderr matches `line` (default:
 * the MCP endpoint's URL); the child is killed after the test.
 * @throws Error when the child exits before that, or does not get there within `timeoutMs` (default 60 s)
 */
export function startCliServer(
  t: TestContext,
  args: readonly string[],
  options: { line?: RegExp; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliServer> {
  const line = options.line ?? MCP_URL_LINE;
  const child = spawn(process.execPath, [CLI_PATH, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: options.env ?? process.env });
  t.after(() => {
    child.kill();
  });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`s2sp ${args[0]} did not log ${line} within the time limit: ${stderr}`)), options.timeoutMs ?? 60_000);
    child.stderr!.on('data', (d) => {
      stderr += d;
      const match = line.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s2sp ${args[0]} exited with ${code} before logging ${line}: ${stderr}`));
    });
  });
}
