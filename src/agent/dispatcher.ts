/**
 * The agent-side dispatcher of sync mode (SPEC 2.3), run by the agent's SDK
 * around each tool call:
 *
 * - after a tool result holding an envelope with both `abstract` and `body`,
 *   the body goes into the DdiBuffer and `resource_url` becomes its `ddi://`
 *   handle, so the LLM sees the abstract and the handle only;
 * - before a tool call whose `resource_url` is a `ddi://` handle, the handle
 *   is swapped for `body_data` (the buffered rows as JSON), single use.
 *
 * Everything else passes through as the same object, so wrapping every
 * call costs one parse per envelope-looking text block. Parsing and writing
 * keep integers beyond 2^53 exact (exact-json.ts): the body crosses the
 * agent as JSON text twice and must not lose digits on the way.
 */
import { invalidOption } from '../option-checks.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DdiBuffer } from './ddi-buffer.js';
import { isDdiHandle } from '../protocol/ddi-handle.js';
import { parseJsonExact, stringifyJsonExact } from '../table/exact-json.js';

type Envelope = Record<string, unknown> & { abstract: unknown[]; body: unknown[] };
type ContentBlock = CallToolResult['content'][number];

/** Moves sync-mode bodies out of tool results and back into consumer calls. */
export class S2SPDispatcher {
  /** Where bodies wait between the resource tool's result and the consumer call. */
  readonly buffer: DdiBuffer;

  /** @param buffer share one buffer between dispatchers of several servers; a new one by default */
  /** Rows taken by beforeToolCall whose call has not succeeded yet, keyed by the arguments that carry them. */
  private readonly inFlight = new WeakMap<object, { handle: string; rows: unknown[] }>();

  constructor(buffer: DdiBuffer = new DdiBuffer()) {
    if (!(buffer instanceof DdiBuffer)) throw invalidOption('buffer', 'a DdiBuffer', buffer);
    this.buffer = buffer;
  }

  /**
   * Withholds the body of a sync-mode result from the LLM.
   * @param result the tool result as the server sent it
   * @returns a new result with `body` replaced by a `ddi://` resource_url, or
   *   `result` itself when it holds no envelope (or is an error)
   */
  afterToolResult(result: CallToolResult): CallToolResult {
    if (result.isError === true || !Array.isArray(result.content)) return result;
    let handle: string | undefined;
    let changed = false;
    const content = result.content.map((block): ContentBlock => {
      if (block.type !== 'text') return block;
      const envelope = envelopeFromText(block.text);
      if (envelope === undefined) return block;
      changed = true;
      // One buffer entry per envelope; structuredContent below shares the first one.
      const blockHandle = this.buffer.put(envelope.body);
      handle ??= blockHandle;
      return { ...block, text: stringifyJsonExact(withHandle(envelope, blockHandle)) };
    });
    let structuredContent = result.structuredContent;
    if (isEnvelope(structuredContent)) {
      changed = true;
      handle ??= this.buffer.put(structuredContent.body);
      structuredContent = withHandle(structuredContent, handle);
    }
    if (!changed) return result;
    const out: CallToolResult = { ...result, content };
    if (structuredContent !== undefined) out.structuredContent = structuredContent;
    return out;
  }

  /**
   * Delivers a buffered body to a consumer tool.
   * @param args the tool arguments the LLM chose
   * @returns new arguments with `resource_url` removed and `body_data` set to the
   *   buffered rows as JSON (overriding any `body_data` the LLM passed), or
   *   `args` itself when `resource_url` is not a `ddi://` handle
   * @throws S2SPError `S2SP_ERR_DDI_HANDLE_UNKNOWN` for an unknown or used handle
   */
  beforeToolCall(args: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (args === undefined || args === null || !isDdiHandle(args.resource_url)) return args;
    const handle = args.resource_url;
    const rows = this.buffer.take(handle);
    const { resource_url: _handle, ...rest } = args;
    const delivered = { ...rest, body_data: stringifyJsonExact(rows) };
    this.inFlight.set(delivered, { handle, rows });
    return delivered;
  }

  /**
   * The call that carried `delivered` (what beforeToolCall returned) failed
   * before the tool ran to completion: put its rows back under the same
   * handle, so a retry loses nothing (single use is committed on success, as
   * on the data plane, SPEC 3.4).
   */
  restore(delivered: Record<string, unknown> | undefined): void {
    if (delivered === undefined) return;
    const taken = this.inFlight.get(delivered);
    if (taken === undefined) return;
    this.inFlight.delete(delivered);
    this.buffer.restore(taken.handle, taken.rows);
  }
}

/** The envelope in a text block, or undefined; only object-looking text is parsed. */
function envelopeFromText(text: string): Envelope | undefined {
  if (typeof text !== 'string' || !text.trimStart().startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = parseJsonExact(text);
  } catch {
    return undefined;
  }
  return isEnvelope(parsed) ? parsed : undefined;
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { abstract, body } = value as Record<string, unknown>;
  return Array.isArray(abstract) && Array.isArray(body);
}

/** The envelope without `body`, `resource_url` set to the handle; compact on re-serialisation. */
function withHandle(envelope: Envelope, handle: string): Record<string, unknown> {
  const { body: _body, ...rest } = envelope;
  return { ...rest, resource_url: handle };
}
