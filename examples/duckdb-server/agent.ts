/**
 * A short agent against the DuckDB server, with the Vercel AI SDK and
 * `s2sp/ai-sdk`: the model queries flights delayed 10 hours or more, reads
 * only `origin` and `delay` of each (the compact `columns` abstract), picks
 * the ones out of PHX, and has `summarize` work on every column of those rows.
 *
 *   node dist/examples/duckdb-server/agent.js <mcp-url> [--mode async|sync]
 *
 * async: the body stays on the server and `summarize` fetches the chosen rows
 * over the data plane. sync: the body comes back with the abstract, and
 * `withS2SP` parks it in the agent, shows the model a `ddi://` handle, and
 * hands it to `summarize` as `body_data`. Either way the model never reads it.
 *
 * The model is scripted (the AI SDK's MockLanguageModelV3), so this runs with
 * no API key; put a real one (`openai('gpt-4o')`, ...) in its place and the
 * same tools work. Prints one JSON line: what was chosen and what came back.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { withS2SP } from 's2sp/ai-sdk';

type MockOptions = NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>;
type DoGenerate = Extract<NonNullable<MockOptions['doGenerate']>, (...args: never[]) => unknown>;
type Prompt = Parameters<DoGenerate>[0]['prompt'];
type Generated = Awaited<ReturnType<DoGenerate>>;

/** What one run reports. */
export interface AgentReport {
  mode: 'async' | 'sync';
  /** Flights the model chose from the abstract. */
  chosen: number;
  /** What `summarize` answered. */
  summary: { rows: number; columns: Record<string, { min: number; mean: number; max: number }>; source: string; bytes: number };
  /** A `ddi://` handle was in what the model was sent (sync mode). */
  modelSawHandle: boolean;
  /** An envelope's `body` was in what the model was sent: never, with withS2SP. */
  modelSawBody: boolean;
}

const SQL = 'SELECT * FROM data WHERE delay >= 600 ORDER BY date';
const ORIGIN = 'PHX';

/** Runs the agent once against `mcpUrl`; resolves with what it reports. */
export async function runAgent(mcpUrl: string, mode: 'async' | 'sync'): Promise<AgentReport> {
  const client = await createMCPClient({ transport: { type: 'http', url: mcpUrl } });
  try {
    // The one line s2sp adds to an AI SDK agent.
    const tools = withS2SP(await client.tools());
    let chosen = 0;
    const model = scripted([
      () => call('query', { sql: SQL, abstract_domains: 'origin,delay', abstract_format: 'columns', mode }),
      (prompt) => {
        // The model's reading of the abstract: a header, then [_row_id, origin, delay] per flight.
        const envelope = JSON.parse(lastToolText(prompt, 'query')) as { abstract: unknown[][]; resource_url: string };
        const [header, ...lines] = envelope.abstract;
        const picked = lines.filter((line) => line[header.indexOf('origin')] === ORIGIN);
        chosen = picked.length;
        // async: the ids are enough, the cached body has every column. sync: the body has the body
        // columns only, so the chosen abstract lines go along (header first).
        const abstractData = mode === 'async' ? picked.map((line) => line[0]) : [header, ...picked];
        return call('summarize', { abstract_data: JSON.stringify(abstractData), resource_url: envelope.resource_url });
      },
      (prompt) => text(lastToolText(prompt, 'summarize')),
    ]);
    const prompt = `Summarize the flights out of ${ORIGIN} delayed 10 hours or more.`;
    const result = await generateText({ model, tools, stopWhen: stepCountIs(4), prompt });
    const sent = JSON.stringify(model.doGenerateCalls.map((c) => c.prompt));
    return {
      mode,
      chosen,
      summary: JSON.parse(result.text),
      modelSawHandle: sent.includes('ddi://'),
      // The envelope's body key, inside a tool result's JSON text, would be escaped like this.
      modelSawBody: sent.includes('\\"body\\":'),
    };
  } finally {
    await client.close();
  }
}

/** A model that plays `steps` in order, each reading the prompt it was sent. */
function scripted(steps: Array<(prompt: Prompt) => Generated>): MockLanguageModelV3 {
  let next = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const step = steps[next++];
      if (step === undefined) throw new Error('the scripted model ran out of steps');
      return step(prompt);
    },
  });
}

const USAGE: Generated['usage'] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

function call(toolName: string, input: Record<string, unknown>): Generated {
  const toolCallId = `${toolName}-1`;
  return {
    content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: USAGE,
    warnings: [],
  };
}

function text(value: string): Generated {
  return { content: [{ type: 'text', text: value }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] };
}

/** The text of the newest result of `toolName`, as the model reads it. */
function lastToolText(prompt: Prompt, toolName: string): string {
  for (const message of [...prompt].reverse()) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || part.toolName !== toolName) continue;
      if (part.output.type === 'content') return part.output.value.map((item) => (item.type === 'text' ? item.text : '')).join('');
      throw new Error(`${toolName} failed: ${JSON.stringify(part.output)}`);
    }
  }
  throw new Error(`no ${toolName} result in the prompt`);
}

// Run as a program (not when imported).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { mode: { type: 'string', default: 'async' } } });
  if (positionals[0] === undefined) throw new Error('usage: agent.js <mcp-url> [--mode async|sync]');
  const report = await runAgent(positionals[0], values.mode === 'sync' ? 'sync' : 'async');
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
