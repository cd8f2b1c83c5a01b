/**
 * The agent-side dispatcher of sync mode (SPEC 2.3), run by the agent's SDK
 * around each tool call:
 *
 * - after a sync-mode tool result, the body goes into the DdiBuffer and
 *   `resource_url` becomes its `ddi://` handle, so the LLM sees the abstract
 *   and the handle only. The body comes inside a text block's envelope (the
 *   2025 shape, the reference's), or, on a 2026-07-28 call, as JSON text in
 *   the result's `_meta` (SYNC_BODY_META_KEY) beside envelopes without it;
 * - before a tool call whose `resource_url` is a `ddi://` handle, the handle
 *   is swapped for `body_data` (the buffered rows as JSON), single use; a
 *   query_rows call's `tables` handles move to `tables_data` the same way.
 *
 * Everything else passes through as the same object, so wrapping every
 * call costs one parse per envelope-looking text block. Parsing and writing
 * keep every literal's meaning (exact-json.ts): integers beyond 2^53 keep
 * their digits and whole floats (`2.0`, `-3.0`, nested ones too) stay
 * floats, since the body crosses the agent as JSON text twice and a Python
 * consumer types numbers by their text. The buffer holds the body's text.
 */
import type { ToolResult as CallToolResult } from '../control/tool-host.js';
import { invalidOption } from '../option-checks.js';
import { DdiBuffer } from './ddi-buffer.js';
import { isDdiHandle } from '../protocol/ddi-handle.js';
import { SYNC_BODY_META_KEY } from '../protocol/sync-body-meta.js';
import { parseJsonExact, stringifyJsonExact } from '../json/exact-json.js';
import { isRecord } from '../json/is-record.js';

/** A sync-mode envelope: with its body (2025 shape) or without it (the body in the result's _meta, 2026). */
type Envelope = Record<string, unknown> & { abstract: unknown[]; body?: unknown[] };
type ContentBlock = CallToolResult['content'][number];

/** Moves sync-mode bodies out of tool results and back into consumer calls. */
export class S2SPDispatcher {
  /** Where bodies wait between the resource tool's result and the consumer call. */
  readonly buffer: DdiBuffer;

  /** @param buffer share one buffer between dispatchers of several servers; a new one by default */
  /** Bodies taken by beforeToolCall whose call has not succeeded yet, keyed by the arguments that carry them. */
  private readonly inFlight = new WeakMap<object, readonly Taken[]>();

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
    // A 2026-07-28 result carries the body's JSON text in _meta, the envelopes without it.
    const metaBody = result._meta?.[SYNC_BODY_META_KEY];
    let handle = typeof metaBody === 'string' ? this.buffer.put(metaBody) : undefined;
    let changed = handle !== undefined;
    const content = result.content.map((block): ContentBlock => {
      if (block.type !== 'text') return block;
      const envelope = envelopeFromText(block.text);
      if (envelope === undefined) return block;
      // One buffer entry per envelope; an envelope without a body shares the handle of the result's body.
      let blockHandle: string;
      if (Array.isArray(envelope.body)) {
        blockHandle = this.buffer.put(stringifyJsonExact(envelope.body));
        handle ??= blockHandle;
      } else if (handle !== undefined) {
        blockHandle = handle;
      } else {
        return block;
      }
      changed = true;
      // The server kept the body's block from the model (audience: user); the abstract is for the model.
      const { annotations: _forTheUser, ...rest } = block;
      return { ...rest, text: stringifyJsonExact(withHandle(envelope, blockHandle)) };
    });
    let structuredContent = result.structuredContent;
    if (isSyncEnvelope(structuredContent)) {
      if (Array.isArray(structuredContent.body)) handle ??= this.buffer.put(stringifyJsonExact(structuredContent.body));
      if (handle !== undefined) {
        changed = true;
        structuredContent = withHandle(structuredContent, handle);
      }
    }
    if (!changed) return result;
    const out: CallToolResult = { ...result, content };
    if (structuredContent !== undefined) out.structuredContent = structuredContent;
    if (typeof metaBody === 'string') out._meta = withoutKey(result._meta as Record<string, unknown>, SYNC_BODY_META_KEY);
    return out;
  }

  /**
   * Delivers buffered bodies to a tool call: a consumer tool's `resource_url`
   * handle, and query_rows' `tables` handles.
   * @param args the tool arguments the LLM chose
   * @returns new arguments, or `args` itself when they hold no `ddi://` handle:
   *   a `resource_url` handle is removed and `body_data` set to the buffered
   *   body's JSON text (overriding any `body_data` the LLM passed); each
   *   handle among `tables`' values moves to `tables_data` under its table name
   * @throws S2SPError `S2SP_ERR_DDI_HANDLE_UNKNOWN` for an unknown or used handle (no handle of the call is spent)
   */
  beforeToolCall(args: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (args === undefined || args === null) return args;
    const tables = isRecord(args.tables) ? args.tables : undefined;
    const tableHandles = tables === undefined ? [] : Object.entries(tables).filter(([, value]) => isDdiHandle(value));
    if (!isDdiHandle(args.resource_url) && tableHandles.length === 0) return args;
    const taken: Taken[] = [];
    const take = (handle: string): string => {
      const bodyText = this.buffer.take(handle);
      taken.push({ handle, bodyText });
      return bodyText;
    };
    let delivered: Record<string, unknown>;
    try {
      delivered = { ...args };
      if (isDdiHandle(args.resource_url)) {
        delete delivered.resource_url;
        delivered.body_data = take(args.resource_url);
      }
      if (tableHandles.length > 0) {
        const tablesData = isRecord(args.tables_data) ? { ...args.tables_data } : {};
        for (const [name, handle] of tableHandles) tablesData[name] = take(handle as string);
        delivered.tables = Object.fromEntries(Object.entries(tables!).filter(([, value]) => !isDdiHandle(value)));
        delivered.tables_data = tablesData;
      }
    } catch (error) {
      this.#putBack(taken);
      throw error;
    }
    this.inFlight.set(delivered, taken);
    return delivered;
  }

  /**
   * The call that carried `delivered` (what beforeToolCall returned) failed
   * before the tool ran to completion: put its rows back under the same
   * handles, so a retry loses nothing (single use is committed on success, as
   * on the data plane, SPEC 3.4).
   */
  restore(delivered: Record<string, unknown> | undefined): void {
    if (delivered === undefined) return;
    const taken = this.inFlight.get(delivered);
    if (taken === undefined) return;
    this.inFlight.delete(delivered);
    this.#putBack(taken);
  }

  #putBack(taken: readonly Taken[]): void {
    for (const { handle, bodyText } of taken) this.buffer.restore(handle, bodyText);
  }
}

/** A body beforeToolCall took from the buffer, kept until its call succeeds. */
interface Taken {
  handle: string;
  bodyText: string;
}

/** The envelope in a text block, or undefined; only object-looking text is parsed. */
function envelopeFromText(text: string): Envelope | undefined {
  if (typeof text !== 'string' || !text.trimStart().startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = parseJsonExact(text, { wholeFloats: true });
  } catch {
    return undefined;
  }
  return isSyncEnvelope(parsed) ? parsed : undefined;
}

/** An envelope of sync mode: an abstract, and a body or no resource_url yet (async envelopes have theirs). */
function isSyncEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { abstract, body, resource_url: resourceUrl } = value as Record<string, unknown>;
  return Array.isArray(abstract) && (Array.isArray(body) || resourceUrl === undefined);
}

/** `record` without `key`; undefined when nothing else is left. */
function withoutKey(record: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const { [key]: _dropped, ...rest } = record;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** The envelope without `body`, `resource_url` set to the handle; compact on re-serialisation. */
function withHandle(envelope: Envelope, handle: string): Record<string, unknown> {
  const { body: _body, ...rest } = envelope;
  return { ...rest, resource_url: handle };
}
