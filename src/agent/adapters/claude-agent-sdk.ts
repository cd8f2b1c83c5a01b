/**
 * S2SP for the Claude Agent SDK: `PreToolUse`, `PostToolUse` and
 * `PostToolUseFailure` hook callbacks for the MCP servers a `query()` talks
 * to, so Claude sees abstracts and `ddi://` handles, never sync-mode bodies,
 * and a consumer tool called with a handle receives the body as `body_data`
 * (SPEC 2.3).
 *
 *   for await (const message of query({ prompt, options: { mcpServers, hooks: createS2SPHooks() } })) ...
 *
 * - PostToolUse: the tool's output with each body parked in the buffer
 *   becomes `updatedMCPToolOutput` (same shape: text, content blocks or result).
 * - PreToolUse: a call whose `resource_url` is a `ddi://` handle gets
 *   `updatedInput` with `body_data` instead; an unknown or used handle denies
 *   the call with the reason, so Claude calls the resource tool again.
 * - PostToolUseFailure: a consumer call that failed puts its body back under
 *   the same handle (single use is committed on success, as on the data plane).
 *   A call the user refuses (with `permissionDecision: 'ask'`) fires neither
 *   post hook, so its handle stays spent.
 *
 * Only types come from the SDK: importing this module loads none of it.
 */
import type { HookCallback, HookCallbackMatcher, HookEvent, HookJSONOutput } from '@anthropic-ai/claude-agent-sdk';
import { isS2SPError } from '../../errors.js';
import { S2SPDispatcher } from '../dispatcher.js';
import { isCallToolResult, withholdBodies } from './tool-output.js';
import { isRecord } from '../../json/is-record.js';

/** The permission decision sent with a rewritten consumer call. */
export const RewriteDecision = {
  /** Approve the rewritten call (Claude Code applies `updatedInput` with a decision). */
  allow: 'allow',
  /** Show the rewritten call to the user for approval. */
  ask: 'ask',
  /** Send no decision: the session's permission rules decide. */
  none: 'none',
} as const;
/** One of {@link RewriteDecision}. */
export type RewriteDecision = (typeof RewriteDecision)[keyof typeof RewriteDecision];

/** Options of {@link createS2SPHooks}. */
export interface S2SPHooksOptions {
  /** Share one between several agents or clients; a new one by default. */
  dispatcher?: S2SPDispatcher;
  /** Hook matcher over tool names (a regular expression); default every MCP tool, `mcp__.*`. */
  matcher?: string;
  /** Default `allow`: the consumer call was the model's and its tool is one the session allows. */
  permissionDecision?: RewriteDecision;
}

/** Hook callbacks for `Options.hooks` of `query()`; merge with your own per event. */
export type S2SPHooks = Partial<Record<HookEvent, HookCallbackMatcher[]>>;

/**
 * Creates the S2SP hooks.
 * @returns PreToolUse, PostToolUse and PostToolUseFailure matchers
 */
export function createS2SPHooks(options: S2SPHooksOptions = {}): S2SPHooks {
  const dispatcher = options.dispatcher ?? new S2SPDispatcher();
  const matcher = options.matcher ?? 'mcp__.*';
  const decision = options.permissionDecision ?? RewriteDecision.allow;
  // Delivered arguments by tool_use_id, until the call's outcome is known.
  const inFlight = new Map<string, Record<string, unknown>>();

  const preToolUse: HookCallback = async (input, toolUseId) => {
    if (input.hook_event_name !== 'PreToolUse' || !isRecord(input.tool_input)) return {};
    let delivered: Record<string, unknown> | undefined;
    try {
      delivered = dispatcher.beforeToolCall(input.tool_input);
    } catch (error) {
      if (!isS2SPError(error)) throw error;
      return preToolUseOutput({ permissionDecision: 'deny', permissionDecisionReason: `${error.code}: ${error.message}` });
    }
    if (delivered === undefined || delivered === input.tool_input) return {};
    inFlight.set(input.tool_use_id ?? toolUseId ?? '', delivered);
    return preToolUseOutput({
      updatedInput: delivered,
      ...(decision === RewriteDecision.none ? {} : { permissionDecision: decision }),
    });
  };

  const postToolUse: HookCallback = async (input, toolUseId) => {
    if (input.hook_event_name !== 'PostToolUse') return {};
    const delivered = settle(input.tool_use_id ?? toolUseId);
    // A result flagged isError did not use the body.
    if (delivered !== undefined && isCallToolResult(input.tool_response) && input.tool_response.isError === true) {
      dispatcher.restore(delivered);
    }
    const withheld = withholdBodies(dispatcher, input.tool_response);
    if (withheld === undefined) return {};
    return { hookSpecificOutput: { hookEventName: 'PostToolUse', updatedMCPToolOutput: withheld } };
  };

  const postToolUseFailure: HookCallback = async (input, toolUseId) => {
    if (input.hook_event_name !== 'PostToolUseFailure') return {};
    const delivered = settle(input.tool_use_id ?? toolUseId);
    if (delivered !== undefined) dispatcher.restore(delivered);
    return {};
  };

  function settle(toolUseId: string | undefined): Record<string, unknown> | undefined {
    const delivered = inFlight.get(toolUseId ?? '');
    inFlight.delete(toolUseId ?? '');
    return delivered;
  }

  return {
    PreToolUse: [{ matcher, hooks: [preToolUse] }],
    PostToolUse: [{ matcher, hooks: [postToolUse] }],
    PostToolUseFailure: [{ matcher, hooks: [postToolUseFailure] }],
  };
}

type PreToolUseOutput = Extract<NonNullable<Extract<HookJSONOutput, { hookSpecificOutput?: unknown }>['hookSpecificOutput']>, { hookEventName: 'PreToolUse' }>;

function preToolUseOutput(fields: Omit<PreToolUseOutput, 'hookEventName'>): HookJSONOutput {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', ...fields } };
}
