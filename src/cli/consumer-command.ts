/**
 * `s2sp consumer`: serves the consumer tool `summarize_rows` (SPEC 2.2), which
 * answers per-column statistics of the merged rows.
 */
import { S2SPServer } from '../server/s2sp-server.js';
import { summarizeRows } from './summarize-rows.js';
import { listenForTransport, listenOptions, metricsRegistryFor, type TransportFlags } from './transport-flags.js';

/** Flags of `s2sp consumer`. */
export interface ConsumerFlags extends TransportFlags {
  /** Origins beyond loopback that resource_url may point at. */
  allowOrigins: string[];
  maxBodyBytes?: number;
}

/** The consumer tool's name. */
export const SUMMARIZE_TOOL = 'summarize_rows';

/** Builds the server for `s2sp consumer` (exported for tests). */
export async function createConsumerServer(flags: ConsumerFlags): Promise<S2SPServer> {
  const server = new S2SPServer({
    ...listenOptions('s2sp-consumer', flags),
    consumer: { allowedOrigins: flags.allowOrigins, maxBodyBytes: flags.maxBodyBytes },
    registry: await metricsRegistryFor(flags),
  });
  server.consumerTool(
    SUMMARIZE_TOOL,
    {
      title: 'Summarize rows',
      description:
        'Per-column statistics (count, nulls, min/max/mean, top values) of rows chosen from an S2SP resource. ' +
        'Pass the abstract rows you selected as abstract_data and the resource_url the resource tool returned.',
    },
    ({ rows, source, bytesReceived }) => ({
      ...summarizeRows(rows),
      transfer: { source, bytes: bytesReceived },
    }),
  );
  return server;
}

/** Runs `s2sp consumer` until the transport closes. */
export async function runConsumer(flags: ConsumerFlags, log: (line: string) => void): Promise<S2SPServer> {
  const server = await createConsumerServer(flags);
  await listenForTransport(server, flags, log, false);
  return server;
}
