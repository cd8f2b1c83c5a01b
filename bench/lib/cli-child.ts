/**
 * The s2sp CLI as a child process over MCP stdio, with an SDK client
 * connected to it, for scenarios that run the commands as users do
 * (pipeline, query-rows).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** The built CLI (dist/src/cli/main.js, from dist/bench/lib). */
export const CLI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

/** The MCP SDK's default request timeout is 60 s; a 1M-row call on a loaded machine may take longer. */
export const CALL_OPTIONS = { timeout: 600_000 };

/** A CLI child and its connected client. */
export interface CliChild {
  client: Client;
  /** The child's process id, while it runs. */
  pid(): number | null;
  close(): Promise<void>;
}

/** Starts `s2sp ARGS...` over stdio and connects a client to it. */
export async function cliChild(args: string[], name = 's2sp-bench-agent'): Promise<CliChild> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_PATH, ...args], stderr: 'ignore' });
  const client = new Client({ name, version: '0.1.0' });
  await client.connect(transport);
  return { client, pid: () => transport.pid, close: () => client.close() };
}

/** The text block of a tool result; a tool error, or no text, throws with what came back. */
export function toolText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  const text = content.find((c) => c.type === 'text')?.text;
  if (text === undefined) throw new Error(`no text content in ${JSON.stringify(result).slice(0, 200)}`);
  if ((result as { isError?: boolean }).isError) throw new Error(`tool error: ${text.slice(0, 300)}`);
  return text;
}
