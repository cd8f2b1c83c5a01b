/**
 * `s2sp demo`: the main job. Starts `s2sp serve` and `s2sp consumer` as two
 * child processes over MCP stdio and plays the agent: reads the earthquakes
 * abstract, keeps the rows with mag >= 4, and has the consumer summarize them,
 * with the body moving over the data plane (async) or through the agent SDK's
 * ddi:// buffer (sync). Prints what the LLM saw against what it would have
 * seen without S2SP, in real tokens, for both abstract formats: `rows` (the
 * reference's, the LLM passes back abstract rows) and `columns` (our compact
 * one, the LLM passes back just the _row_ids). Then a pipeline: a second
 * `s2sp serve` holds seismic regions, and the consumer's query_rows joins
 * them with the earthquakes server to server; the LLM reads the answer only.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import type { ToolResult as CallToolResult } from '../control/tool-host.js';
import { S2SPClient } from '../agent/s2sp-client.js';
import { S2SPDispatcher } from '../agent/dispatcher.js';
import { S2SPError } from '../errors.js';
import { AbstractFormat } from '../protocol/abstract-format.js';
import { ROW_ID } from '../protocol/row-id.js';
import { redactTokensInUrl } from '../protocol/token.js';
import { QUERY_TOOL } from '../control/query-tool.js';
import { SUMMARIZE_TOOL } from './consumer-command.js';
import { defaultDatasetPath, seismicRegionsPath } from './default-dataset.js';
import { loadTokenCounter, TOKENIZER_NAME } from './token-count.js';
import { importOptional, resolveOptional } from '../optional-package.js';

/** Flags of `s2sp demo`. */
export interface DemoFlags {
  mode: 'async' | 'sync';
  /** Magnitude threshold the agent selects on (default 4). */
  minMagnitude: number;
  /** The abstract format the agent asks for (default `columns`); the token table shows both. */
  abstractFormat: AbstractFormat;
  /** Where the consumer's chart (PNG) is saved. */
  chartPath: string;
}

/** Tokens the LLM read over the whole task, plain MCP against S2SP in each abstract format. */
export interface DemoTokens {
  plain: number;
  rows: number;
  columns: number;
}

/** Figures the demo measured, returned for tests. */
export interface DemoReport {
  mode: 'async' | 'sync';
  abstractFormat: AbstractFormat;
  totalRows: number;
  selectedRows: number;
  bodyBytes: number;
  /** Where the chart was saved; undefined when the consumer sent none. */
  chartPath?: string;
  /** Tokens with S2SP in the format the agent used. */
  tokensWith: number;
  /** Tokens with plain MCP. */
  tokensWithout: number;
  tokens: DemoTokens;
  /** The join's answer (region, quakes, max_mag), as the LLM read it. */
  regions: Row[];
  /** Tokens the LLM read over the whole pipeline (both tasks), plain MCP against S2SP in each format. */
  pipelineTokens: DemoTokens;
}

/** The envelope fields the demo reads. */
interface DemoEnvelope {
  total_rows: number;
  abstract: Row[] | unknown[][];
  body_domains: string[];
  resource_url: string;
}

type Row = Record<string, unknown>;

const CLI_PATH = fileURLToPath(new URL('./main.js', import.meta.url));
const DOMAINS = 'mag,place,time';
/** The second server's tool. */
const REGIONS_TOOL = 'read_regions';
/**
 * What the LLM asks to see of the join's two sources: it needs their
 * resource_urls only, so the smallest column of each, one the SQL does not
 * use (a sync body lacks its abstract columns, SPEC 2.1).
 */
const JOIN_SOURCE_DOMAINS = { quakes: 'tsunami', regions: 'boundary' } as const;
/** The columns of the join's answer the LLM reads; mean_depth_km stays in the body. */
const JOIN_DOMAINS = 'region,quakes,max_mag';
/** Each earthquake in the region whose box holds it (the boxes do not overlap; max is exclusive). */
const JOIN_SQL =
  'SELECT r.region, count(*) AS quakes, max(q.mag) AS max_mag, round(avg(q.depth), 1) AS mean_depth_km ' +
  'FROM quakes q JOIN regions r ON q.longitude >= r.min_lon AND q.longitude < r.max_lon AND q.latitude >= r.min_lat AND q.latitude < r.max_lat ' +
  'GROUP BY r.region ORDER BY quakes DESC, r.region';

/** Runs the demo, printing each step with `print`. */
export async function runDemo(flags: DemoFlags, print: (line: string) => void): Promise<DemoReport> {
  // Both optional packages are checked before any child process starts.
  defaultDatasetPath();
  resolveOptional('@duckdb/node-api'); // the consumer's query_rows
  const countTokens = await loadTokenCounter();
  const dispatcher = new S2SPDispatcher();
  print(`s2sp demo: mode ${flags.mode}, tokens counted with ${TOKENIZER_NAME}`);
  print('');
  print('[1] Start two resource servers and the consumer server (child processes, MCP over stdio)');
  // The demo's LLM sees every abstract row, so raise the 1,000-row cap above the feed's 1,707 rows.
  const resource = await connectChild(['serve', '--abstract-limit', '5000'], 's2sp-demo-agent');
  const regionsServer = await connectChild(['serve', seismicRegionsPath(), '--tool', REGIONS_TOOL], 's2sp-demo-agent');
  const consumer = await connectChild(['consumer'], 's2sp-demo-agent');
  try {
    const agentToResource = new S2SPClient(resource, dispatcher);
    const agentToConsumer = new S2SPClient(consumer, dispatcher);
    for (const [label, client] of [
      ['resource', resource],
      ['regions', regionsServer],
      ['consumer', consumer],
    ] as const) {
      const { tools } = await client.listTools();
      for (const tool of tools) {
        const params = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});
        print(`    ${label} server: ${tool.name}(${params.join(', ')})`);
      }
    }

    print('');
    const format = flags.abstractFormat;
    const readArgs = { abstract_domains: DOMAINS, mode: flags.mode, abstract_format: format };
    print(`[2] Agent calls read_table(abstract_domains="${DOMAINS}", mode="${flags.mode}", abstract_format="${format}")`);
    const read = await agentToResource.callTool({ name: 'read_table', arguments: readArgs });
    const seenRead = resultText(read);
    const envelope = JSON.parse(seenRead) as DemoEnvelope;
    const abstractRows = rowsOfAbstract(envelope.abstract);
    print(`    the LLM sees ${abstractRows.length} abstract rows of ${envelope.total_rows} (columns _row_id, ${DOMAINS.split(',').join(', ')})`);
    print(`    withheld: ${envelope.body_domains.length} body columns (${envelope.body_domains.slice(0, 6).join(', ')}, ...)`);
    print(`    resource_url: ${redactTokensInUrl(envelope.resource_url)}${flags.mode === 'sync' ? '  (a handle into the agent SDK buffer)' : ''}`);

    print('');
    print(`[3] The LLM keeps the rows with mag >= ${flags.minMagnitude}`);
    const selected = abstractRows.filter((row) => typeof row.mag === 'number' && row.mag >= flags.minMagnitude);
    print(`    ${selected.length} rows selected; first ones:`);
    for (const row of selected.slice(0, 5)) print(`      _row_id ${row._row_id}: M${row.mag} ${row.place}`);

    print('');
    const what = describeAbstractData(format, flags.mode, selected.length);
    print(`[4] Agent calls ${SUMMARIZE_TOOL}(abstract_data=${what}, resource_url=<the URL from step 2>)`);
    const summarizeArgs = summarizeArgsFor(format, flags.mode, selected, envelope.resource_url);
    const summary = await agentToConsumer.callTool({ name: SUMMARIZE_TOOL, arguments: summarizeArgs });
    const seenSummary = resultText(summary);
    const parsed = JSON.parse(seenSummary) as { row_count: number; columns: Record<string, Row>; transfer: { source: string; bytes: number } };
    const how =
      parsed.transfer.source === 'resource_url' ? 'over the data plane (HTTP, resource server -> consumer)' : 'by the agent SDK (body_data, past the LLM)';
    print(`    the consumer merged ${parsed.row_count} rows x ${Object.keys(parsed.columns).length} columns`);
    print(`    body bytes moved ${how}: ${parsed.transfer.bytes.toLocaleString('en-US')}`);
    for (const name of ['mag', 'depth', 'sig']) {
      const c = parsed.columns[name];
      if (c) print(`    ${name}: min ${c.min}, max ${c.max}, mean ${typeof c.mean === 'number' ? c.mean.toFixed(2) : c.mean}`);
    }
    const chartPath = await saveChart(summary, flags.chartPath, print);

    print('');
    print('[5] What the LLM read: plain MCP (full table in, full rows out) against S2SP in each abstract format');
    // The other format is read once more only to count it; its body is never fetched.
    const other = format === AbstractFormat.columns ? AbstractFormat.rows : AbstractFormat.columns;
    const otherRead = await agentToResource.callTool({ name: 'read_table', arguments: { ...readArgs, abstract_format: other } });
    const otherText = resultText(otherRead);
    const otherUrl = (JSON.parse(otherText) as DemoEnvelope).resource_url;
    if (flags.mode === 'sync') dispatcher.buffer.take(otherUrl);
    const seenBy = {
      [format]: { read: seenRead, args: summarizeArgs },
      [other]: { read: otherText, args: summarizeArgsFor(other, flags.mode, selected, otherUrl) },
    } as Record<AbstractFormat, { read: string; args: Record<string, string> }>;
    const plain = await resource.callTool({ name: 'read_table', arguments: {} });
    const plainText = resultText(plain as CallToolResult);
    const plainRows = JSON.parse(plainText) as Row[];
    const selectedIds = new Set(selected.map((r) => r._row_id));
    const plainSelected = plainRows.filter((_row, i) => selectedIds.has(i));
    const resultTokens = countTokens(seenSummary);
    const column = (f: AbstractFormat) => [countTokens(seenBy[f].read), countTokens(JSON.stringify(seenBy[f].args)), resultTokens] as const;
    const plainColumn = [countTokens(plainText), countTokens(JSON.stringify({ rows: JSON.stringify(plainSelected) })), resultTokens] as const;
    const tokens = printTokenTable(
      print,
      ['read_table result', `${SUMMARIZE_TOOL} arguments the LLM writes`, `${SUMMARIZE_TOOL} result (text)`],
      { plain: plainColumn, rows: column(AbstractFormat.rows), columns: column(AbstractFormat.columns) },
      'total',
    );
    print(`    rows: abstract rows as objects, the chosen rows passed back as abstract_data (the reference's shape)`);
    print(
      `    columns: column names once and one array per row; passed back as abstract_data: ${
        flags.mode === 'async'
          ? 'the chosen _row_ids (the cached body has every column)'
          : 'the header and the chosen arrays (a sync body lacks the abstract columns)'
      }`,
    );
    print('    (the chart image is for people and not counted; it is the same with or without S2SP)');
    print(fewerLine(tokens, format, ''));

    print('');
    print("[6] A pipeline: earthquakes per seismic region, the join run by the consumer (query_rows) on both servers' bodies");
    const join = { resource: agentToResource, regions: new S2SPClient(regionsServer, dispatcher), consumer: agentToConsumer, mode: flags.mode };
    const joined = await joinStep(join, format, print);
    // The other format's calls are made only to count them; the answer is the same.
    const otherJoined = await joinStep(join, other, () => {});
    if (flags.mode === 'sync') for (const url of [joined.resultUrl, otherJoined.resultUrl]) dispatcher.buffer.take(url);

    print('');
    print('[7] What the LLM read over the whole pipeline ([2] to [6]): plain MCP (both tables in, the answer written out) against S2SP');
    const plainRegions = resultText((await regionsServer.callTool({ name: REGIONS_TOOL, arguments: {} })) as CallToolResult);
    const answerRows = joined.rows.map(({ [ROW_ID]: _id, ...row }) => row);
    const joinColumn = (texts: JoinTexts) =>
      [countTokens(texts.regions), countTokens(texts.quakes), countTokens(texts.args), countTokens(texts.result)] as const;
    // Plain MCP: the earthquakes are in the context since [2]; the LLM reads the regions and writes the answer itself.
    const pipeline = {
      plain: [tokens.plain, countTokens(plainRegions), 0, 0, countTokens(JSON.stringify(answerRows))],
      [format]: [tokens[format], ...joinColumn(joined.texts)],
      [other]: [tokens[other], ...joinColumn(otherJoined.texts)],
    } as Record<AbstractFormat | 'plain', number[]>;
    const pipelineTokens = printTokenTable(
      print,
      [
        'steps [2] to [4] (the total above)',
        `${REGIONS_TOOL} result`,
        'read_table result again (a fresh resource_url)',
        `${QUERY_TOOL} arguments the LLM writes`,
        `${QUERY_TOOL} result (text); plain MCP: the answer the LLM writes`,
      ],
      pipeline,
      'pipeline total',
    );
    print('    (plain MCP reads the regions table whole; the earthquakes it read in [2] are still in its context, so they are not counted twice)');
    print(fewerLine(pipelineTokens, format, ' for the whole pipeline'));
    return {
      mode: flags.mode,
      abstractFormat: format,
      totalRows: envelope.total_rows,
      selectedRows: selected.length,
      bodyBytes: parsed.transfer.bytes,
      chartPath,
      tokensWith: tokens[format],
      tokensWithout: tokens.plain,
      tokens,
      regions: answerRows,
      pipelineTokens,
    };
  } finally {
    await Promise.allSettled([resource.close(), regionsServer.close(), consumer.close()]);
  }
}

/** The agent's clients of the three servers, for the join. */
interface JoinClients {
  resource: S2SPClient;
  regions: S2SPClient;
  consumer: S2SPClient;
  mode: DemoFlags['mode'];
}

/** What the LLM read and wrote in the join step, as text. */
interface JoinTexts {
  regions: string;
  quakes: string;
  args: string;
  result: string;
}

/**
 * The join step in one abstract format: a resource_url from each server,
 * query_rows over both, and the answer's abstract rows; prints as it goes.
 */
async function joinStep(
  clients: JoinClients,
  format: AbstractFormat,
  print: (line: string) => void,
): Promise<{ texts: JoinTexts; rows: Row[]; resultUrl: string }> {
  const { mode } = clients;
  const sourceArgs = (domains: string) => ({ abstract_domains: domains, mode, abstract_format: format });
  print(`    Agent calls ${REGIONS_TOOL}(abstract_domains="${JOIN_SOURCE_DOMAINS.regions}") on the second resource server`);
  const regionsText = resultText(await clients.regions.callTool({ name: REGIONS_TOOL, arguments: sourceArgs(JOIN_SOURCE_DOMAINS.regions) }));
  const regions = JSON.parse(regionsText) as DemoEnvelope;
  print(`      ${regions.total_rows} regions; withheld: ${regions.body_domains.join(', ')}`);
  print(`    Agent calls read_table(abstract_domains="${JOIN_SOURCE_DOMAINS.quakes}") again: the resource_url of [2] was spent in [4]`);
  const quakesText = resultText(await clients.resource.callTool({ name: 'read_table', arguments: sourceArgs(JOIN_SOURCE_DOMAINS.quakes) }));
  const quakes = JSON.parse(quakesText) as DemoEnvelope;
  const args = { sql: JOIN_SQL, tables: { quakes: quakes.resource_url, regions: regions.resource_url }, abstract_domains: JOIN_DOMAINS };
  print(`    Agent calls ${QUERY_TOOL}(tables={quakes: <read_table's URL>, regions: <${REGIONS_TOOL}'s URL>}, abstract_domains="${JOIN_DOMAINS}", sql=`);
  print(`      "${JOIN_SQL}")`);
  const result = await clients.consumer.callTool({ name: QUERY_TOOL, arguments: { ...args, mode, abstract_format: format } });
  const resultTextSeen = resultText(result);
  const answer = JSON.parse(resultTextSeen) as DemoEnvelope;
  const rows = rowsOfAbstract(answer.abstract);
  print(`      the consumer fetched both bodies (${quakes.total_rows} + ${regions.total_rows} rows) and answered ${answer.total_rows} rows; the LLM reads:`);
  print('      | region | quakes | max_mag |');
  print('      |---|---:|---:|');
  for (const row of rows) print(`      | ${row.region} | ${row.quakes} | ${row.max_mag} |`);
  print(
    `      withheld: ${answer.body_domains.join(', ')}, behind ${redactTokensInUrl(answer.resource_url)} (the consumer's own data plane, for further tools)`,
  );
  return { texts: { regions: regionsText, quakes: quakesText, args: JSON.stringify(args), result: resultTextSeen }, rows, resultUrl: answer.resource_url };
}

/** Saves the consumer's PNG chart, if it sent one, and prints where; prints its note otherwise. */
async function saveChart(result: CallToolResult, path: string, print: (line: string) => void): Promise<string | undefined> {
  const image = result.content.find((c) => c.type === 'image');
  if (image === undefined || image.type !== 'image') {
    const note = result.content.find((c) => c.type === 'text' && c.text.startsWith('no chart:'));
    print(`    ${note !== undefined && note.type === 'text' ? note.text : 'no chart: the consumer sent no image'}`);
    return undefined;
  }
  await writeFile(path, Buffer.from(image.data, 'base64'));
  print(`    chart (${image.mimeType}, a histogram and a map of the merged rows) saved to ${path}`);
  return path;
}

/** The abstract as row objects, whichever format it came in (the demo's LLM filters on names). */
function rowsOfAbstract(abstract: Row[] | unknown[][]): Row[] {
  if (abstract.length === 0 || !Array.isArray(abstract[0])) return abstract as Row[];
  const [header, ...lines] = abstract as [string[], ...unknown[][]];
  return lines.map((values) => Object.fromEntries(header.map((name, i) => [name, values[i]])));
}

/**
 * What the LLM writes to the consumer: the chosen abstract rows in the format
 * it read them, or, in async mode with `columns`, only their ids: the cached
 * body holds every column, abstract ones too. A sync body holds the body
 * columns only (SPEC 2.1), so there the abstract values must travel along.
 */
function summarizeArgsFor(format: AbstractFormat, mode: DemoFlags['mode'], selected: readonly Row[], resourceUrl: string): Record<string, string> {
  let abstractData: unknown = selected;
  if (format === AbstractFormat.columns) {
    const header = Object.keys(selected[0] ?? { [ROW_ID]: 0 });
    abstractData = mode === 'async' ? selected.map((row) => row[ROW_ID]) : [header, ...selected.map((row) => header.map((name) => row[name]))];
  }
  return { abstract_data: JSON.stringify(abstractData), resource_url: resourceUrl };
}

/** How step [4] names what the LLM passes. */
function describeAbstractData(format: AbstractFormat, mode: DemoFlags['mode'], count: number): string {
  if (format === AbstractFormat.rows) return `<${count} abstract rows>`;
  return mode === 'async' ? `<${count} _row_ids>` : `<header + ${count} abstract rows as arrays>`;
}

/** An MCP SDK v2 client (protocol 2026-07-28) of a child `s2sp` over stdio. */
async function connectChild(args: string[], name: string): Promise<Client> {
  const sdk = await importOptional<typeof import('@modelcontextprotocol/client')>('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_PATH, ...args], stderr: 'ignore' });
  // Pinned to protocol 2026-07-28: stateless requests, the version and capabilities in each request's _meta.
  const client = new sdk.Client({ name, version: '0.1.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(transport);
  return client;
}

function resultText(result: CallToolResult): string {
  const block = result.content.find((c) => c.type === 'text');
  if (result.isError || block === undefined || block.type !== 'text') {
    throw new S2SPError('S2SP_ERR_DEMO_FAILED', { reason: block?.type === 'text' ? block.text : 'no text content' });
  }
  return block.text;
}

/**
 * Prints a token table, one line per step and plain MCP against S2SP in
 * each abstract format, then `totalLabel`'s line with each total's share of
 * plain MCP; returns the totals.
 */
function printTokenTable(
  print: (line: string) => void,
  labels: readonly string[],
  counts: Record<AbstractFormat | 'plain', readonly number[]>,
  totalLabel: string,
): DemoTokens {
  const sum = (c: readonly number[]) => c.reduce((a, b) => a + b, 0);
  const totals: DemoTokens = { plain: sum(counts.plain), rows: sum(counts.rows), columns: sum(counts.columns) };
  print(`    | step | plain MCP | S2SP, abstract_format=rows | S2SP, abstract_format=columns |`);
  print('    |---|---:|---:|---:|');
  for (let i = 0; i < labels.length; i++) print(`    | ${labels[i]} | ${fmt(counts.plain[i])} | ${fmt(counts.rows[i])} | ${fmt(counts.columns[i])} |`);
  print(
    `    | ${totalLabel} | ${fmt(totals.plain)} | ${fmt(totals.rows)} (${shareOf(totals, totals.rows)}) | ${fmt(totals.columns)} (${shareOf(totals, totals.columns)}) |`,
  );
  return totals;
}

/** This run's format against plain MCP, `scope` naming what was counted (' for the whole pipeline'). */
function fewerLine(totals: DemoTokens, format: AbstractFormat, scope: string): string {
  return `    with abstract_format=${format} (this run) the LLM read ${shareOf(totals, totals[format])} of the plain-MCP tokens${scope}, ${(totals.plain / totals[format]).toFixed(1)}x fewer`;
}

/** `n` as a percentage of the plain-MCP total. */
function shareOf(totals: DemoTokens, n: number): string {
  return `${((100 * n) / totals.plain).toFixed(1)}%`;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
