/**
 * The consumer checks every argument before any request goes out: a value
 * nested 10,000 deep, or any other malformed argument, fails naming the
 * parameter, and the single-use token is not spent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resolveConsumerRows } from '../../src/consumer/resolve.js';
import type { ConsumerArgs } from '../../src/consumer/consumer-args.js';
import { MAX_NESTING_DEPTH } from '../../src/consumer/consumer-args.js';
import { S2SPServer } from '../../src/server/s2sp-server.js';
import { connectInMemory } from '../support/in-memory-client.js';
import { sendJson, startDataPlane, startStandIn } from '../support/stand-in-server.js';

/** A JSON value nested `depth` levels deep: [[[...]]]. */
function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

const DEEP_ROW = `[{"_row_id":0,"deep":${nested(10_000)}}]`;

const CASES: Array<{ name: string; param: string; args: (url: string) => ConsumerArgs }> = [
  { name: 'abstract_data nested 10,000 deep', param: 'abstract_data', args: (url) => ({ abstract_data: DEEP_ROW, resource_url: url }) },
  {
    name: 'column_mapping nested 10,000 deep',
    param: 'column_mapping',
    args: (url) => ({ abstract_data: '[{"_row_id":0}]', resource_url: url, column_mapping: `{"a":${nested(10_000)}}` }),
  },
  { name: 'column_mapping malformed', param: 'column_mapping', args: (url) => ({ abstract_data: '[{"_row_id":0}]', resource_url: url, column_mapping: '{' }) },
  {
    name: 'abstract_data "*" with a deep column_mapping',
    param: 'column_mapping',
    args: (url) => ({ abstract_data: '*', resource_url: url, column_mapping: nested(10_000) }),
  },
];

test('malformed arguments fail with S2SP_ERR_CONSUMER_ARG_INVALID naming the parameter, before any fetch', async (t) => {
  const standIn = await startStandIn(t, (_req, res) => sendJson(res, 200, { body: [{ _row_id: 0, x: 1 }], total_rows: 1 }));
  for (const { name, param, args } of CASES) {
    const error = (await resolveConsumerRows(args(standIn.url)).then(
      () => assert.fail(`${name}: resolved`),
      (e: unknown) => e,
    )) as { code: string; message: string };
    assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID', `${name}: ${error.message}`);
    assert.ok(error.message.startsWith(param), `${name}: ${error.message.slice(0, 200)}`);
    assert.equal(standIn.requests.length, 0, `${name}: a request went out`);
  }
});

test('body_data nested 10,000 deep fails naming body_data', async () => {
  const error = (await resolveConsumerRows({ abstract_data: '[{"_row_id":0}]', body_data: DEEP_ROW }).catch((e: unknown) => e)) as {
    code: string;
    message: string;
  };
  assert.equal(error.code, 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.match(error.message, /^body_data/);
});

test(`nesting up to ${MAX_NESTING_DEPTH} levels is accepted and merged`, async (t) => {
  // The array is level 1, the row level 2: the value may take the remaining levels.
  const value = JSON.parse(nested(MAX_NESTING_DEPTH - 2));
  const { url } = await startDataPlane(t, [{ x: 1 }]);
  const resolved = await resolveConsumerRows({ abstract_data: JSON.stringify([{ _row_id: 0, deep: value }]), resource_url: url });
  assert.deepEqual(resolved.rows, [{ _row_id: 0, deep: value, x: 1 }]);
  const tooDeep = JSON.stringify([{ _row_id: 0, deep: [value] }]);
  assert.equal(((await resolveConsumerRows({ abstract_data: tooDeep }).catch((e: unknown) => e)) as { code: string }).code, 'S2SP_ERR_CONSUMER_ARG_INVALID');
});

test('through the consumer tool: a 10,000-deep abstract_data is a tool error and the token still serves', async (t) => {
  const plane = await startDataPlane(t, [{ x: 1 }]);
  const server = new S2SPServer({ name: 't' });
  server.consumerTool('use', { description: 'u' }, ({ rows }) => rows.length);
  const client = await connectInMemory(server, t);
  const result = (await client.callTool({ name: 'use', arguments: { abstract_data: DEEP_ROW, resource_url: plane.url } })) as CallToolResult;
  assert.equal(result.isError, true);
  assert.equal(result._meta?.['s2sp/error-code'], 'S2SP_ERR_CONSUMER_ARG_INVALID');
  assert.match((result.content[0] as { text: string }).text, /abstract_data/);
  assert.equal(await plane.store.has(plane.token), true, 'the token was not spent');
});
