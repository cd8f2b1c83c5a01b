/**
 * A third-party MCP client against `s2sp serve`: the MCP Inspector's CLI
 * (`mcp-inspector-cli --cli`, from node_modules, no download) lists and calls
 * read_table over stdio and over Streamable HTTP, and the resource_url it got
 * answers on the data plane.
 *
 * Version 0.15.0 is the last whose engines admit Node 20 (0.16+ want Node
 * >= 22.7.5) and its CLI already speaks Streamable HTTP. We install the
 * Inspector's CLI package rather than the `@modelcontextprotocol/inspector`
 * umbrella: the umbrella's launcher imports commander without declaring it
 * and breaks on whichever commander npm hoists (vega's is 7.x here).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { CLI_PATH as CLI, runNode, startCliServer, type ProcessOutcome } from '../support/cli-process.js';

const INSPECTOR = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'cli.js');

/** Runs the Inspector's CLI; its launcher spawns `node` from PATH, so this Node goes first there. */
function inspector(args: string[], timeoutMs = 60_000): Promise<ProcessOutcome> {
  const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
  return runNode(INSPECTOR, ['--cli', ...args], { timeoutMs, env });
}

/** The JSON the Inspector printed for a successful call. */
function answer(run: { code: number | null; stdout: string; stderr: string }): any {
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

function checkToolList(listed: any): void {
  const readTable = listed.tools.find((tool: { name: string }) => tool.name === 'read_table');
  assert.ok(readTable, JSON.stringify(listed).slice(0, 300));
  for (const param of ['abstract_domains', 'mode', 'abstract_format']) assert.ok(readTable.inputSchema.properties[param], param);
}

/** The envelope of a read_table call the Inspector made. */
function envelopeOf(called: any): { total_rows: number; abstract: unknown[][]; resource_url?: string; body?: unknown[] } {
  assert.notEqual(called.isError, true, JSON.stringify(called).slice(0, 300));
  return JSON.parse(called.content[0].text);
}

const CALL = ['--method', 'tools/call', '--tool-name', 'read_table', '--tool-arg', 'abstract_domains=mag,place', '--tool-arg', 'abstract_format=columns'];

test('the MCP Inspector CLI lists and calls read_table over stdio', async () => {
  const server = [process.execPath, CLI, 'serve', '--abstract-limit', '5'];
  checkToolList(answer(await inspector([...server, '--method', 'tools/list'])));
  // Sync mode: the server process ends with the Inspector, so the body comes inline.
  const envelope = envelopeOf(answer(await inspector([...server, ...CALL, '--tool-arg', 'mode=sync'])));
  assert.equal(envelope.total_rows, 1707);
  assert.deepEqual(envelope.abstract[0], ['_row_id', 'mag', 'place']);
  assert.equal(envelope.abstract.length, 6, 'header and 5 rows');
  assert.equal(envelope.body?.length, 1707);
});

test('the MCP Inspector CLI lists and calls read_table over Streamable HTTP; its resource_url answers', async (t) => {
  const { url: mcpUrl } = await startCliServer(t, ['serve', '--transport', 'http', '--port', '0', '--abstract-limit', '5']);
  assert.match(mcpUrl, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  checkToolList(answer(await inspector([mcpUrl, '--transport', 'http', '--method', 'tools/list'])));
  const envelope = envelopeOf(answer(await inspector([mcpUrl, '--transport', 'http', ...CALL])));
  assert.deepEqual(envelope.abstract.slice(0, 2), [
    ['_row_id', 'mag', 'place'],
    [0, 2, '4km W of Castaic, CA'],
  ]);
  assert.ok(envelope.resource_url);
  const response = await fetch(envelope.resource_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ row_ids: [0], columns: ['depth'] }),
  });
  assert.equal(response.status, 200);
  const fetched = (await response.json()) as { body: Array<{ _row_id: number; depth: number }> };
  assert.deepEqual(
    fetched.body.map((row) => row._row_id),
    [0],
  );
  assert.equal(typeof fetched.body[0].depth, 'number');
});
