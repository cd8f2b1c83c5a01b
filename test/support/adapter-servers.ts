/**
 * Test support for the agent framework adapters: a real resource server
 * (`read_table`) and a real consumer server (`summarize`), both S2SPServers
 * serving MCP over Streamable HTTP on 127.0.0.1, a table whose body values are
 * easy to find in anything a model was sent, and the choices a scripted model
 * makes between the two tool calls.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { ConsumerInput } from '../../src/control/consumer-tool.js';
import { isDdiHandle } from '../../src/protocol/ddi-handle.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';

/** The columns the model asks for. */
export const ABSTRACT_DOMAINS = 'id,region';
/** The columns that must never reach the model. */
export const BODY_COLUMNS = ['description', 'reading', 'detail'] as const;

/** Six rows; every body value is unique and greppable in a JSON dump of prompts. */
export const TABLE_ROWS = Array.from({ length: 6 }, (_, i) => ({
  id: `station-${i}`,
  region: i % 2 === 0 ? 'north' : 'south',
  description: `bodytext-description-${i}-qx7`,
  reading: 7310.0457 + i,
  detail: { note: `bodytext-note-${i}-zk3`, levels: [i, i + 0.25] },
}));

/** Strings that appear in a dump of the prompts only if a body leaked. */
export const BODY_NEEDLES = TABLE_ROWS.flatMap((row) => [row.description, String(row.reading), row.detail.note]);

/** The needles found in `dump` (an empty list is what a test wants). */
export function bodyLeaks(dump: string): string[] {
  return BODY_NEEDLES.filter((needle) => dump.includes(needle));
}

/** The two servers and what the consumer tool received. */
export interface AdapterServers {
  /** MCP endpoint of the resource server. */
  resourceMcpUrl: string;
  /** MCP endpoint of the consumer server. */
  consumerMcpUrl: string;
  /** Each call of the consumer tool's handler, in order. */
  received: ConsumerInput[];
}

/** Starts both servers; the test's teardown closes them. */
export async function startAdapterServers(t: TestContext): Promise<AdapterServers> {
  const received: ConsumerInput[] = [];
  const resource = new S2SPServer({ name: 'stations', version: '1.0.0' });
  resource.resourceTool('read_table', { description: 'Weather stations: id, region, description, reading, detail' }, () => TABLE_ROWS);
  const consumer = new S2SPServer({ name: 'stats', version: '1.0.0' });
  consumer.consumerTool('summarize', { description: 'Counts the chosen rows and names their columns' }, (input) => {
    received.push(input);
    return { rows: input.rows.length, columns: Object.keys(input.rows[0] ?? {}) };
  });
  const resourceUrl = await resource.listen({ mcpPath: '/mcp' });
  t.after(() => resource.close());
  const consumerUrl = await consumer.listen({ mcpPath: '/mcp' });
  t.after(() => consumer.close());
  return { resourceMcpUrl: `${resourceUrl}/mcp`, consumerMcpUrl: `${consumerUrl}/mcp`, received };
}

/** The arguments the scripted model passes to `read_table`. */
export const READ_TABLE_ARGS = { abstract_domains: ABSTRACT_DOMAINS, mode: 'sync' } as const;

/**
 * What the scripted model does with the `read_table` result it was shown:
 * checks it holds a `ddi://` handle and no body, keeps the northern stations,
 * and builds the `summarize` arguments.
 */
export function summarizeArgsFrom(resultText: string): { abstract_data: string; resource_url: string } {
  const envelope = JSON.parse(resultText) as { abstract: { _row_id: number; region: string }[]; resource_url: unknown; body?: unknown };
  assert.equal(envelope.body, undefined, 'the model was shown a body');
  assert.ok(isDdiHandle(envelope.resource_url), 'the model was shown no ddi:// handle');
  const chosen = envelope.abstract.filter((row) => row.region === 'north');
  return { abstract_data: JSON.stringify(chosen), resource_url: envelope.resource_url };
}

/** The row ids the scripted model chooses. */
export const CHOSEN_ROW_IDS = TABLE_ROWS.flatMap((row, i) => (row.region === 'north' ? [i] : []));

/** Asserts the consumer got every body column of exactly the chosen rows, from body_data. */
export function assertConsumerGotBody(received: ConsumerInput[]): void {
  assert.equal(received.length, 1, 'the consumer tool ran once');
  const [input] = received;
  assert.equal(input.source, 'body_data');
  assert.deepEqual(
    input.rows.map((row) => row._row_id),
    CHOSEN_ROW_IDS,
  );
  for (const row of input.rows) {
    const original = TABLE_ROWS[row._row_id as number];
    assert.equal(row.id, original.id);
    for (const column of BODY_COLUMNS) assert.deepEqual(row[column], original[column], `${column} of row ${String(row._row_id)}`);
  }
}
