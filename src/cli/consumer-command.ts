/**
 * `s2sp consumer`: serves the consumer tool `summarize_rows` (SPEC 2.2), which
 * answers per-column statistics of the merged rows, and a PNG chart of them
 * for people (rows-chart.ts); and `query_rows`, SQL over the bodies of
 * resource servers whose results it serves from its own data plane.
 */
import type { ToolResult as CallToolResult } from '../control/tool-host.js';
import { isS2SPError } from '../errors.js';
import { S2SPServer } from '../server/s2sp-server.js';
import type { Row } from '../table/rows-from-table.js';
import { chartRows, type LeftOutColumn } from './rows-chart.js';
import { summarizeRows } from './summarize-rows.js';
import { listenForTransport, listenOptions, metricsRegistryFor, type TransportFlags } from './transport-flags.js';

/** Flags of `s2sp consumer`. */
export interface ConsumerFlags extends TransportFlags {
  /** Origins beyond loopback that resource_url may point at. */
  allowOrigins: string[];
  maxBodyBytes?: number;
  /** Time limit of one query_rows query in ms (default 30,000). */
  queryTimeoutMs?: number;
}

/** The consumer tool's name. */
export const SUMMARIZE_TOOL = 'summarize_rows';

/** Builds the server for `s2sp consumer` (exported for tests). */
export async function createConsumerServer(flags: ConsumerFlags): Promise<S2SPServer> {
  const server = new S2SPServer({
    ...listenOptions('s2sp-consumer', flags),
    tools: { consumer: { allowedOrigins: flags.allowOrigins, maxBodyBytes: flags.maxBodyBytes } },
    registry: await metricsRegistryFor(flags),
  });
  server.consumerTool(
    SUMMARIZE_TOOL,
    {
      title: 'Summarize rows',
      description:
        'Per-column statistics (count, nulls, min/max/mean, top values) of rows chosen from an S2SP resource, ' +
        'and a PNG chart of them (a histogram; a map when the rows have longitude and latitude). ' +
        'Pass the abstract rows you selected (or just their _row_id numbers) as abstract_data and the resource_url the resource tool returned.',
    },
    async ({ rows, source, bytesReceived }): Promise<CallToolResult> => {
      const summary = { ...summarizeRows(rows), transfer: { source, bytes: bytesReceived } };
      return { content: [{ type: 'text', text: JSON.stringify(summary) }, ...(await chartContent(rows))] };
    },
  );
  server.queryTool({ timeLimitMs: flags.queryTimeoutMs });
  return server;
}

/**
 * The chart as an image block; none when nothing is numeric; a note naming
 * the numeric columns it left out, and a note instead of the chart when the
 * chart packages are missing or Vega cannot draw these rows.
 */
async function chartContent(rows: readonly Row[]): Promise<CallToolResult['content']> {
  try {
    const { chart, leftOut } = await chartRows(rows);
    const notes: CallToolResult['content'] = leftOut.length === 0 ? [] : [{ type: 'text', text: leftOutNote(leftOut) }];
    if (chart === undefined) return notes;
    return [{ type: 'image', data: Buffer.from(chart.png).toString('base64'), mimeType: 'image/png' }, ...notes];
  } catch (error) {
    // The statistics stand on their own: a missing chart package or an undrawable chart costs the picture, not the answer.
    if (isS2SPError(error)) return [{ type: 'text', text: `no chart: ${(error as Error).message}` }];
    throw error;
  }
}

const LEFT_OUT_WHY: Record<LeftOutColumn['reason'], string> = {
  name: 'named like a JavaScript object property, which the chart library cannot title',
  range: 'its values are too close together to bin',
};

/** The answer's note on the numeric columns the chart leaves out (their statistics are in the summary). */
function leftOutNote(leftOut: readonly LeftOutColumn[]): string {
  return `the chart leaves out ${leftOut.map(({ column, reason }) => `${JSON.stringify(column)} (${LEFT_OUT_WHY[reason]})`).join(', ')}; their statistics are above`;
}

/** Runs `s2sp consumer` until the transport closes. */
export async function runConsumer(flags: ConsumerFlags, log: (line: string) => void): Promise<S2SPServer> {
  const server = await createConsumerServer(flags);
  await listenForTransport(server, flags, log);
  return server;
}
