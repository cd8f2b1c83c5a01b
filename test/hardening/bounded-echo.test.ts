/**
 * Error texts echo at most a bounded prefix of any input (SPEC 2.1, 3.3): a
 * hostile value in a tool argument or a fetch request never comes back whole
 * into the LLM's context or the client's error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { mintToken } from '../../src/protocol/token.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { startDataPlane } from '../support/stand-in-server.js';

/** Longest error text accepted here: room for a message and a few quoted prefixes. */
const BOUND = 3000;

function errorText(result: unknown): { code: unknown; text: string } {
  const r = result as CallToolResult;
  assert.equal(r.isError, true, JSON.stringify(r).slice(0, 300));
  return { code: r._meta?.['s2sp/error-code'], text: (r.content[0] as { text: string }).text };
}

test('a 1,000,000-character column name in abstract_domains comes back as a bounded prefix', async (t) => {
  const server = new S2SPServer({ name: 't' });
  server.resourceTool('rows', { description: 'r' }, () => [{ a: 1 }]);
  const client = await connectInMemory(server, t);
  const huge = 'x'.repeat(1_000_000);
  for (const abstract_domains of [huge, JSON.stringify([huge]), `a,${huge}`]) {
    const { code, text } = errorText(await client.callTool({ name: 'rows', arguments: { abstract_domains } }));
    assert.equal(code, 'S2SP_ERR_DOMAINS_UNKNOWN');
    assert.ok(text.length < BOUND, `${text.length} characters`);
  }
  const { code, text } = errorText(await client.callTool({ name: 'rows', arguments: { abstract_domains: ` ${', '.repeat(500_000)}` } }));
  assert.equal(code, 'S2SP_ERR_DOMAINS_INVALID');
  assert.ok(text.length < BOUND, `${text.length} characters`);
});

test('a table with 5,000 columns is listed in part when a domain is unknown', async (t) => {
  const server = new S2SPServer({ name: 't' });
  const row = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`column_with_a_long_name_${i}`, i]));
  server.resourceTool('wide', { description: 'w' }, () => [row]);
  const client = await connectInMemory(server, t);
  const { code, text } = errorText(await client.callTool({ name: 'wide', arguments: { abstract_domains: 'nope' } }));
  assert.equal(code, 'S2SP_ERR_DOMAINS_UNKNOWN');
  assert.ok(text.length < BOUND, `${text.length} characters`);
});

test('a 100,000-character hostname in resource_url, and huge values in consumer arguments, come back bounded', async (t) => {
  const server = new S2SPServer({ name: 't' });
  server.consumerTool('use', { description: 'u' }, ({ rows }) => rows.length);
  const client = await connectInMemory(server, t);
  const host = `${'h'.repeat(99_990)}.example`;
  const cases: Array<{ code: string; args: Record<string, string> }> = [
    { code: 'S2SP_ERR_CONSUMER_ORIGIN_REFUSED', args: { abstract_data: '[{"_row_id":0}]', resource_url: `http://${host}/s2sp/data/${mintToken()}` } },
    { code: 'S2SP_ERR_CONSUMER_URL_INVALID', args: { abstract_data: '[{"_row_id":0}]', resource_url: `${'s'.repeat(100_000)}:/s2sp/data/${mintToken()}` } },
    { code: 'S2SP_ERR_CONSUMER_ARG_INVALID', args: { abstract_data: JSON.stringify([{ _row_id: 'i'.repeat(1_000_000) }]) } },
    { code: 'S2SP_ERR_CONSUMER_ARG_INVALID', args: { abstract_data: '[{"_row_id":0}]', column_mapping: JSON.stringify({ ['k'.repeat(1_000_000)]: 7 }) } },
  ];
  for (const { code, args } of cases) {
    const result = errorText(await client.callTool({ name: 'use', arguments: args }));
    assert.equal(result.code, code, result.text.slice(0, 200));
    assert.ok(result.text.length < BOUND, `${code}: ${result.text.length} characters`);
  }
});

test('a 1,000,000-character column name in a data-plane fetch comes back bounded', async (t) => {
  const plane = await startDataPlane(t, [{ a: 1 }]);
  const response = await fetch(plane.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ columns: ['c'.repeat(1_000_000)], row_ids: [0] }),
  });
  assert.equal(response.status, 400);
  const text = await response.text();
  assert.equal(JSON.parse(text).error.code, 'S2SP_ERR_REQUEST_COLUMNS_INVALID');
  assert.ok(text.length < BOUND, `${text.length} characters`);
});
