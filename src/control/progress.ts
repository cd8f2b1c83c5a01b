/**
 * MCP progress for one tool call (`notifications/progress`), sent only when
 * the caller asked for it by putting a `progressToken` in the request's
 * `_meta`. The MCP rules this keeps: progress grows with every notification,
 * and nothing is sent after the result (a client drops a notification for a
 * request it already has the answer to), hence {@link ProgressReporter.flush}.
 *
 * Reports come as often as bytes arrive; this sends few of them: the first,
 * the last (progress reaching total), and in between a twentieth of the
 * total at a time, or, while the total is unknown, a tenth more than last
 * time (at least {@link UNKNOWN_TOTAL_STEP}), so a body of any size costs a
 * few dozen notifications at most.
 */
import type { Listener, ProgressEvent } from '../observe.js';
import { toolCallOf, type ToolExtra } from './tool-host.js';

/** Least growth between two notifications while the total is unknown: 1 MiB. */
export const UNKNOWN_TOTAL_STEP = 1024 * 1024;

/** Parts of the total between two notifications, when the total is known. */
const STEPS_OF_TOTAL = 20;

/** Progress of one tool call. */
export interface ProgressReporter {
  /**
   * Reports a put's or a fetch's progress event, so it is passed as their
   * `observe` listener. A value that does not grow is dropped; most others
   * are coalesced (see the module comment).
   */
  readonly report: Listener<ProgressEvent>;
  /** Resolves once every notification sent so far has gone out; call it before returning the result. */
  flush(): Promise<void>;
}

/**
 * The progress reporter of a tool call, or undefined when its caller passed
 * no progress token.
 * @param extra the handler's extra argument, as either MCP SDK line passes it
 * @param message what the progress is of, sent with each notification
 */
export function progressReporterFor(extra: ToolExtra, message: string): ProgressReporter | undefined {
  const { progressToken, notify } = toolCallOf(extra);
  if (progressToken === undefined) return undefined;
  let sent = -1;
  // Each notification waits for the one before: the client sees them in order.
  let chain: Promise<void> = Promise.resolve();
  return {
    report({ bytes: progress, totalBytes: total }) {
      if (!(progress > sent)) return;
      const final = total !== undefined && progress >= total;
      const step = total !== undefined ? total / STEPS_OF_TOTAL : Math.max(UNKNOWN_TOTAL_STEP, sent / 10);
      if (sent >= 0 && !final && progress - sent < step) return;
      sent = progress;
      const params = { progressToken, progress, ...(total === undefined ? {} : { total }), message };
      chain = chain
        .then(() => notify({ method: 'notifications/progress', params }))
        // A caller that went away cannot be told; the tool's own work goes on.
        .catch(() => {});
    },
    flush: () => chain,
  };
}
