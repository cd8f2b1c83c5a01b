/**
 * The resource tool's `outputSchema` (SPEC 2.1): one object type for both
 * answers, the envelope (with `abstract_domains`) and `{"rows": [...]}`
 * (plain mode), since MCP wants an object at the top. Loose, so a client
 * that validates keeps accepting envelopes that gain a key.
 */
import * as z from 'zod/v4';
import { ABSTRACT_FORMATS } from '../protocol/abstract-format.js';

// A row is any object: its keys are column names, which are data. z.record
// refuses an object whose own `constructor` key is not a function (zod
// 3.25's isPlainObject), so a column named `constructor` failed the call.
const row = z.looseObject({});

/** The resource tool's output schema, as `registerTool` takes it. */
export const RESOURCE_TOOL_OUTPUT_SCHEMA = z
  .looseObject({
    rows: z.array(row).optional().describe('Plain mode (no abstract_domains): the rows exactly as the tool returned them.'),
    total_rows: z.number().int().optional().describe('Rows in the whole table.'),
    columns: z.array(z.string()).optional().describe('Every column, in first-seen order.'),
    abstract_domains: z.array(z.string()).optional(),
    body_domains: z.array(z.string()).optional(),
    abstract_format: z.enum(ABSTRACT_FORMATS).optional().describe('Present when the abstract is not in the default rows layout.'),
    abstract: z
      .union([z.array(row), z.array(z.array(z.unknown()))])
      .optional()
      .describe('The abstract columns of each row, _row_id first: objects, or (columns layout) a header array then value arrays.'),
    abstract_truncated: z.boolean().optional().describe('True when abstract holds only the first rows.'),
    resource_url: z.string().optional().describe('Async mode: where a consumer fetches the body, single use.'),
    expires_at: z.string().optional().describe('Async mode: when resource_url stops working (ISO 8601).'),
    body: z.array(row).optional().describe('Sync mode: the body rows, _row_id first.'),
  })
  .describe('The S2SP envelope with abstract_domains, or {"rows": [...]} without.');
