/**
 * The CLI's metrics: on by default in `s2sp serve` (at /metrics beside the
 * data plane) and in `s2sp consumer` (which over stdio listens for /metrics
 * alone, and says where); `--no-metrics` turns them off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Stream } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI_PATH as CLI, startCliServer } from '../support/cli-process.js';
import { scrape, valueOf } from '../support/prometheus-text.js';

/** Resolves with the first match of `pattern` in what `stream` prints. */
function firstMatch(stream: Stream, pattern: RegExp, label: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.on('data', (d) => {
      text += d;
      const match = pattern.exec(text);
      if (match) resolve(match[1]);
    });
    stream.on('end', () => reject(new Error(`${label} ended without ${pattern}: ${text}`)));
  });
}

test('cli metrics: serve over HTTP answers /metrics; --no-metrics does not', { timeout: 60_000 }, async (t) => {
  for (const [flags, on] of [
    [[], true],
    [['--no-metrics'], false],
  ] as const) {
    const { child, url: base } = await startCliServer(t, ['serve', '--transport', 'http', '--port', '0', ...flags], { line: /MCP at (http:\/\/\S+)\/mcp/ });
    if (on) {
      const samples = await scrape(`${base}/metrics`);
      assert.equal(valueOf(samples, 's2sp_tokens_minted_total'), 0);
      assert.equal(valueOf(samples, 's2sp_store_up'), 1);
    } else {
      assert.equal((await fetch(`${base}/metrics`)).status, 404);
    }
    child.kill();
  }
});

test('cli metrics: a consumer over stdio listens for /metrics and logs where', { timeout: 60_000 }, async (t) => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'consumer'], stderr: 'pipe' });
  const where = firstMatch(transport.stderr!, /metrics at (http:\/\/\S+\/metrics)/, 'consumer');
  const client = new Client({ name: 'cli-metrics-test', version: '0' });
  await client.connect(transport);
  t.after(() => client.close());
  assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), ['query_rows', 'summarize_rows']);
  const text = await (await fetch(await where)).text();
  assert.match(text, /^# TYPE s2sp_consumer_fetch_failures_total counter$/m);
  // query_rows' results are bodies of the consumer's own: its data plane counts them too.
  assert.match(text, /^# TYPE s2sp_leases_in_flight gauge$/m);
});
