/**
 * `s2sp demo`: the main job. Starts `s2sp serve` and `s2sp consumer` as two
 * child processes over MCP stdio and plays the agent: reads the earthquakes
 * abstract, keeps the rows with mag >= 4, and has the consumer summarize them,
 * with the body moving over the data plane (async) or through the agent SDK's
 * ddi:// buffer (sync). Prints what the LLM saw against what it would have
 * seen without S2SP, in real tokens.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPClient } from '../agent/s2sp-client.js';
import { S2SPDispatcher } from '../agent/dispatcher.js';
import { redactTokensInUrl } from '../protocol/token.js';
import { SUMMARIZE_TOOL } from './consumer-command.js';
import { defaultDatasetPath } from './default-dataset.js';
import { loadTokenCounter, TOKENIZER_NAME } from './token-count.js';

/** Flags of `s2sp demo`. */
export interface DemoFlags {
  mode: 'async' | 'sync';
  /** Magnitude threshold the agent selects on (default 4). */
  minMagnitude: number;
}

/** Figures the demo measured, returned for tests. */
export interface DemoReport {
  mode: 'async' | 'sync';
  totalRows: number;
  selectedRows: number;
  bodyBytes: number;
  tokensWith: number;
  tokensWithout: number;
}

type Row = Record<string, unknown>;

const CLI_PATH = fileURLToPath(new URL('./main.js', import.meta.url));
const DOMAINS = 'mag,place,time';

/** Runs the demo, printing each step with `print`. */
export async function runDemo(flags: DemoFlags, print: (line: string) => void): Promise<DemoReport> {
  // Both optional packages are checked before any child process starts.
  defaultDatasetPath();
  const countTokens = await loadTokenCounter();
  const dispatcher = new S2SPDispatcher();
  print(`s2sp demo: mode ${flags.mode}, tokens counted with ${TOKENIZER_NAME}`);
  print('');
  print('[1] Start the resource server and the consumer server (child processes, MCP over stdio)');
  // The demo's LLM sees every abstract row, so raise the 1,000-row cap above the feed's 1,707 rows.
  const resource = await connectChild(['serve', '--abstract-limit', '5000'], 's2sp-demo-agent');
  const consumer = await connectChild(['consumer'], 's2sp-demo-agent');
  try {
    const agentToResource = new S2SPClient(resource, dispatcher);
    const agentToConsumer = new S2SPClient(consumer, dispatcher);
    for (const [label, client] of [['resource', resource], ['consumer', consumer]] as const) {
      const { tools } = await client.listTools();
      for (const tool of tools) {
        const params = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});
        print(`    ${label} server: ${tool.name}(${params.join(', ')})`);
      }
    }

    print('');
    print(`[2] Agent calls read_table(abstract_domains="${DOMAINS}", mode="${flags.mode}")`);
    const read = await agentToResource.callTool({ name: 'read_table', arguments: { abstract_domains: DOMAINS, mode: flags.mode } });
    const seenRead = resultText(read);
    const envelope = JSON.parse(seenRead) as { total_rows: number; abstract: Row[]; body_domains: string[]; resource_url: string };
    print(`    the LLM sees ${envelope.abstract.length} abstract rows of ${envelope.total_rows} (columns _row_id, ${DOMAINS.split(",").join(", ")})`);
    print(`    withheld: ${envelope.body_domains.length} body columns (${envelope.body_domains.slice(0, 6).join(', ')}, ...)`);
    print(`    resource_url: ${redactTokensInUrl(envelope.resource_url)}${flags.mode === 'sync' ? '  (a handle into the agent SDK buffer)' : ''}`);

    print('');
    print(`[3] The LLM keeps the rows with mag >= ${flags.minMagnitude}`);
    const selected = envelope.abstract.filter((row) => typeof row.mag === 'number' && row.mag >= flags.minMagnitude);
    print(`    ${selected.length} rows selected; first ones:`);
    for (const row of selected.slice(0, 5)) print(`      _row_id ${row._row_id}: M${row.mag} ${row.place}`);

    print('');
    print(`[4] Agent calls ${SUMMARIZE_TOOL}(abstract_data=<${selected.length} rows>, resource_url=<the URL from step 2>)`);
    const summarizeArgs = { abstract_data: JSON.stringify(selected), resource_url: envelope.resource_url };
    const summary = await agentToConsumer.callTool({ name: SUMMARIZE_TOOL, arguments: summarizeArgs });
    const seenSummary = resultText(summary);
    const parsed = JSON.parse(seenSummary) as { row_count: number; columns: Record<string, Row>; transfer: { source: string; bytes: number } };
    const how = parsed.transfer.source === 'resource_url' ? 'over the data plane (HTTP, resource server -> consumer)' : 'by the agent SDK (body_data, past the LLM)';
    print(`    the consumer merged ${parsed.row_count} rows x ${Object.keys(parsed.columns).length} columns`);
    print(`    body bytes moved ${how}: ${parsed.transfer.bytes.toLocaleString('en-US')}`);
    for (const name of ['mag', 'depth', 'sig']) {
      const c = parsed.columns[name];
      if (c) print(`    ${name}: min ${c.min}, max ${c.max}, mean ${typeof c.mean === 'number' ? c.mean.toFixed(2) : c.mean}`);
    }

    print('');
    print('[5] What the LLM read, with S2SP and without it (plain MCP: full table in, full rows out)');
    const plain = await resource.callTool({ name: 'read_table', arguments: {} });
    const plainRows = JSON.parse(resultText(plain as CallToolResult)) as Row[];
    const selectedIds = new Set(selected.map((r) => r._row_id));
    const plainSelected = plainRows.filter((_row, i) => selectedIds.has(i));
    const steps = [
      ['read_table result', countTokens(seenRead), countTokens(resultText(plain as CallToolResult))],
      [`${SUMMARIZE_TOOL} arguments the LLM writes`, countTokens(JSON.stringify(summarizeArgs)), countTokens(JSON.stringify({ rows: JSON.stringify(plainSelected) }))],
      [`${SUMMARIZE_TOOL} result`, countTokens(seenSummary), countTokens(seenSummary)],
    ] as const;
    const tokensWith = steps.reduce((sum, s) => sum + s[1], 0);
    const tokensWithout = steps.reduce((sum, s) => sum + s[2], 0);
    print('    | step | with S2SP | without S2SP |');
    print('    |---|---:|---:|');
    for (const [label, withS2sp, without] of steps) print(`    | ${label} | ${fmt(withS2sp)} | ${fmt(without)} |`);
    print(`    | total | ${fmt(tokensWith)} | ${fmt(tokensWithout)} |`);
    print(`    the LLM read ${(tokensWithout / tokensWith).toFixed(1)}x fewer tokens with S2SP`);
    return {
      mode: flags.mode,
      totalRows: envelope.total_rows,
      selectedRows: selected.length,
      bodyBytes: parsed.transfer.bytes,
      tokensWith,
      tokensWithout,
    };
  } finally {
    await Promise.allSettled([resource.close(), consumer.close()]);
  }
}

async function connectChild(args: string[], name: string): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_PATH, ...args], stderr: 'ignore' });
  const client = new Client({ name, version: '0.1.0' });
  await client.connect(transport);
  return client;
}

function resultText(result: CallToolResult): string {
  const block = result.content.find((c) => c.type === 'text');
  if (result.isError || block === undefined || block.type !== 'text') {
    throw new Error(`tool call failed: ${block && block.type === 'text' ? block.text : 'no text content'}`);
  }
  return block.text;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
