/**
 * The one observer model: a part that reports (a store, a server) has
 * `observe(listener)`, returning the function that stops it; a call that
 * reports on itself takes one listener as its `observe` option. Events are
 * plain objects told apart by `type`. Why not node:diagnostics_channel:
 * README, Library, "Observers".
 */

/** Receives events; it must not throw (what it throws is dropped). */
export type Listener<Event> = (event: Event) => void;

/** Stops the listener it was returned for. */
export type Unsubscribe = () => void;

/** Bytes moved so far by a put or a fetch; `totalBytes` once known. Values grow and end at the total. */
export interface ProgressEvent {
  readonly type: 'progress';
  readonly bytes: number;
  readonly totalBytes?: number;
}

/** A tool failed with an unexpected error (the LLM got `S2SP_ERR_TOOL_FAILED`). */
export interface ToolFailedEvent {
  readonly type: 'tool-failed';
  readonly tool: string;
  readonly error: unknown;
}

/**
 * The listeners of one part. A listener that throws is the listener's bug,
 * never the part's failure: its error is dropped, and the part carries on.
 */
export class Listeners<Event> {
  readonly #listeners = new Set<Listener<Event>>();

  /** True when nobody listens. */
  get empty(): boolean {
    return this.#listeners.size === 0;
  }

  /** Adds `listener`; returns the function that removes it. */
  add(listener: Listener<Event>): Unsubscribe {
    // A wrapper per call: one listener added twice is two subscriptions, each removed by its own function.
    const entry: Listener<Event> = (event) => listener(event);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  /** Sends `event` to every listener. */
  emit(event: Event): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // See the class comment.
      }
    }
  }
}
