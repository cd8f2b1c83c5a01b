/**
 * Control plane: a resource tool call over MCP (SDK Client <-> S2SPServer
 * over InMemoryTransport) on the earthquakes table (1,707 rows x 30
 * columns): time per call with and without `abstract_domains`, and the
 * bytes and tokens (o200k_base) the LLM receives either way.
 *
 * Two tools, so both handler styles are measured: `read_table` returns the
 * Arrow Table read from the file (what `s2sp serve` does), `read_rows`
 * returns the same rows as plain objects (what a tool wrapping an API does;
 * each async call then converts rows to Arrow).
 *
 *   node dist/bench/control-plane.js [--quick] [--reps N]
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadTokenCounter, TOKENIZER_NAME } from '../src/cli/token-count.js';
import { defaultDatasetPath } from '../src/cli/default-dataset.js';
import { readTableFile } from '../src/cli/input/read-table-file.js';
import { S2SPServer } from '../src/server/s2sp-server.js';
import { rowsFromTable } from '../src/table/rows-from-table.js';
import { int, ms, ratio, spread, triple, type Spread } from './lib/report.js';
import { bounded, progress, runScenario } from './lib/scenario.js';

const DOMAINS = 'mag,place,time';

interface Variant {
  id: string;
  tool: 'read_table' | 'read_rows';
  domains?: string;
  label: string;
}

interface Summary {
  id: string;
  label: string;
  ms: Spread;
  textBytes: number;
  tokens: number;
  structured: boolean;
}

await runScenario('control-plane', 'Control plane: a resource tool call over MCP (in-memory), earthquakes', async (flags) => {
  const calls = flags.reps ?? (flags.quick ? 20 : 100);
  const { table } = await readTableFile(defaultDatasetPath());
  const countTokens = await loadTokenCounter();
  // Rows as a tool would return them: plain objects, without _row_id.
  const rows = rowsFromTable(table).map(({ _row_id, ...rest }) => rest);
  const server = new S2SPServer({ name: 'bench-quakes', version: '0.0.0' });
  server.resourceTool('read_table', { description: 'earthquakes (Arrow Table)' }, () => table);
  server.resourceTool('read_rows', { description: 'earthquakes (plain rows)' }, () => rows);
  await server.listen(); // the data plane, so resource_url is real
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench-agent', version: '0.0.0' });
  await client.connect(clientSide);

  const variants: Variant[] = [
    { id: 'table-plain', tool: 'read_table', label: 'read_table (Arrow Table), no abstract_domains (plain MCP)' },
    { id: 'table-s2sp', tool: 'read_table', domains: DOMAINS, label: `read_table (Arrow Table), **abstract_domains=${DOMAINS}**` },
    { id: 'rows-plain', tool: 'read_rows', label: 'read_rows (plain rows), no abstract_domains (plain MCP)' },
    { id: 'rows-s2sp', tool: 'read_rows', domains: DOMAINS, label: `read_rows (plain rows), **abstract_domains=${DOMAINS}**` },
  ];
  const call = async (v: Variant) => {
    const result = await client.callTool({ name: v.tool, arguments: v.domains === undefined ? {} : { abstract_domains: v.domains } });
    if (result.isError) throw new Error(`${v.id}: tool error ${JSON.stringify(result.content)}`);
    return result;
  };
  const summaries: Summary[] = [];
  try {
    progress('warm-up');
    for (let i = 0; i < 5; i++) for (const v of variants) await call(v);
    const times = new Map<string, number[]>(variants.map((v) => [v.id, []]));
    progress(`${calls} calls per variant, interleaved`);
    const more = bounded(calls, flags.quick ? 20_000 : 90_000);
    for (let i = 0; more(i); i++) {
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(i + k) % variants.length];
        const started = performance.now();
        await call(v);
        times.get(v.id)!.push(performance.now() - started);
      }
    }
    progress('counting tokens');
    for (const v of variants) {
      const result = await call(v);
      const text = (result.content as Array<{ type: string; text?: string }>)
        .filter((c) => c.type === 'text')
        .map((c) => c.text ?? '')
        .join('');
      summaries.push({
        id: v.id,
        label: v.label,
        ms: spread(times.get(v.id)!),
        textBytes: Buffer.byteLength(text),
        tokens: countTokens(text),
        structured: result.structuredContent !== undefined,
      });
    }
  } finally {
    await client.close();
    await server.close();
  }
  const by = (id: string) => summaries.find((s) => s.id === id)!;
  const rowsOut = summaries.map((s) => {
    const plain = s.id.startsWith('table') ? by('table-plain') : by('rows-plain');
    return [s.label, triple(s.ms, ms), int(s.textBytes), int(s.tokens), ratio(plain.tokens, s.tokens)];
  });
  const notes = [
    `${table.numRows.toLocaleString('en-US')} rows x ${table.numCols - 1} columns (vega-datasets earthquakes.json). ${summaries[0].ms.n} calls per variant after 5 warm-up calls each, interleaved; time is client.callTool to its result, over InMemoryTransport (no network, no LLM).`,
    `Bytes: UTF-8 length of the result's text content, what the LLM reads; tokens: ${TOKENIZER_NAME}. With abstract_domains the abstract holds at most 1,000 rows (the default abstractRowLimit) plus total_rows, the column lists and resource_url.`,
    summaries.some((s) => s.structured) ? 'Some results also carried structuredContent (not counted).' : 'No result carried structuredContent.',
  ];
  if (by('table-plain').tokens !== by('rows-plain').tokens) {
    notes.push(
      `The plain-MCP answers of the two tools differ (${int(by('table-plain').tokens)} vs ${int(by('rows-plain').tokens)} tokens): the Arrow-Table tool's plain answer is not the rows the other returns.`,
    );
  }
  return {
    tables: [
      {
        header: ['call', 'ms per call (min / median / max)', 'bytes to the LLM', 'tokens to the LLM', 'fewer tokens than plain'],
        rows: rowsOut,
        align: ['l', 'r', 'r', 'r', 'r'],
      },
    ],
    goals: [],
    notes,
    data: { rows: table.numRows, columns: table.numCols - 1, domains: DOMAINS, calls, summaries },
  };
});
