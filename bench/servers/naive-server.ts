/**
 * The naive port, as its own process: what a user would write by hand to
 * serve S2SP bodies. The rows stay plain JS objects (the same generateRows
 * output, each with `_row_id`), and a fastify route answers
 * `JSON.stringify({ body, total_rows, columns_returned })` of the selection.
 *
 * Written the way a careful user would, not to lose: the selection keeps
 * the reference's semantics (ascending `_row_id`, duplicates collapse) with a
 * Set and one `filter`, the projection copies the asked keys in a plain loop.
 * `POST /naive/indexed` is a smarter variant that indexes `rows[id]` directly
 * (sorted unique ids), for the scattered scenario.
 */
import Fastify, { type FastifyReply } from 'fastify';
import { BENCH_COLUMNS, generateRows } from '../lib/dataset.js';
import { collectGarbage, installProbe, ready } from './probe.js';

type Row = Record<string, unknown>;

const config = JSON.parse(process.argv[2] ?? '{}') as { rows: number; timings?: boolean };
const started = performance.now();
const rows: Row[] = generateRows(config.rows).map((row, i) => ({ _row_id: i, ...row }));
collectGarbage();
const setupSeconds = (performance.now() - started) / 1000;
const ALL_COLUMNS = ['_row_id', ...BENCH_COLUMNS];

interface FetchBody {
  row_ids?: number[];
  columns?: string[];
}

function project(selected: Row[], columns: string[] | undefined): { body: Row[]; names: string[] } {
  if (!Array.isArray(columns) || columns.length === 0) return { body: selected, names: ALL_COLUMNS };
  const names = ['_row_id', ...columns.filter((c) => c !== '_row_id')];
  const body = selected.map((row) => {
    const out: Row = {};
    for (const name of names) out[name] = row[name];
    return out;
  });
  return { body, names };
}

function answer(selected: Row[], columns: string[] | undefined): string {
  const { body, names } = project(selected, columns);
  return JSON.stringify({ body, total_rows: body.length, columns_returned: names });
}

const app = Fastify({ logger: false });
installProbe(app, { timings: config.timings });

// Also under the S2SP data path, so a consumer takes its URL as a resource_url (bench/pipeline.ts).
app.post('/s2sp/data/:token', async (request, reply) => naiveData(request.body, reply));
app.post('/naive/data', async (request, reply) => naiveData(request.body, reply));

function naiveData(requestBody: unknown, reply: FastifyReply): string {
  const { row_ids, columns } = (requestBody ?? {}) as FetchBody;
  let selected = rows;
  if (Array.isArray(row_ids) && row_ids.length > 0) {
    const wanted = new Set(row_ids);
    selected = rows.filter((row) => wanted.has(row._row_id as number));
  }
  reply.type('application/json; charset=utf-8');
  return answer(selected, columns);
}

app.post('/naive/indexed', async (request, reply) => {
  const { row_ids, columns } = (request.body ?? {}) as FetchBody;
  let selected = rows;
  if (Array.isArray(row_ids) && row_ids.length > 0) {
    const ids = [...new Set(row_ids)].sort((a, b) => a - b);
    selected = ids.map((id) => rows[id]);
  }
  reply.type('application/json; charset=utf-8');
  return answer(selected, columns);
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
ready({ port: typeof address === 'object' && address !== null ? address.port : 0, rows: rows.length, setupSeconds });
