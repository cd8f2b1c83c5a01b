/**
 * The small-request fast path: a selection of at most `cellLimit` cells
 * (rows x response columns) in JSON or uncompressed Arrow is answered as one
 * Buffer written straight from the body's column buffers (selection-json.ts,
 * selection-ipc.ts), with the per-body work (projection, column chunks, JSON
 * writers, the schema message) cached in a SelectionPlan. Same bytes as the
 * chunked path; it only skips the arrow-js objects, the encoder choice and
 * the stream. Anything else (compression, a large selection, a nested Arrow
 * column) answers undefined and takes the chunked path.
 */
import type { Table } from 'apache-arrow';
import { selectionIpc } from '../ipc/encode/selection-stream.js';
import { selectionJson } from '../table/selection-json.js';
import { selectionPlanOf } from '../table/selection-plan.js';
import type { ResolvedFetch } from './fetch-request.js';
import type { ResponseFormat } from './negotiate.js';

/**
 * The whole response of a small fetch, or undefined when it is not one.
 * @param cellLimit the most cells answered this way (the inline limit: this blocks the event loop too)
 */
export function smallResponse(body: Table, resolved: ResolvedFetch, format: ResponseFormat, cellLimit: number): Buffer | undefined {
  if (format.kind === 'arrow' && format.codec !== undefined) return undefined;
  // The whole body as Arrow is the cached stream itself (body-stream.ts): nothing to write.
  if (format.kind === 'arrow' && resolved.sortedIds === undefined && resolved.columns === undefined) return undefined;
  const rows = resolved.sortedIds === undefined ? body.numRows : resolved.sortedIds.length;
  const width = resolved.columns === undefined ? body.numCols : new Set(resolved.columns).size + 1;
  if (rows * width > cellLimit) return undefined;
  const ids = resolved.sortedIds ?? allRows(rows);
  const plan = selectionPlanOf(body, resolved.columns);
  return format.kind === 'json' ? selectionJson(plan, ids) : selectionIpc(plan, ids);
}

function allRows(n: number): Int32Array {
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) ids[i] = i;
  return ids;
}
