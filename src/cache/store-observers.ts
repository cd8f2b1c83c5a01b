/**
 * The observers of one store (BodyStore.observe): a set of callbacks each
 * event goes to. An observer that throws is the observer's bug, never the
 * store's failure: its error is dropped, and the store carries on.
 */
import type { StoreEvent, StoreObserver } from './body-store.js';

/** A store's observers. */
export class StoreObservers {
  readonly #observers = new Set<StoreObserver>();

  /** Adds `observer`; returns the function that removes it. */
  add(observer: StoreObserver): () => void {
    // A wrapper per call: one observer added twice is two subscriptions, each removed by its own function.
    const entry: StoreObserver = (event) => observer(event);
    this.#observers.add(entry);
    return () => void this.#observers.delete(entry);
  }

  /** Sends `event` to every observer. */
  emit(event: StoreEvent): void {
    for (const observer of this.#observers) {
      try {
        observer(event);
      } catch {
        // See the module comment.
      }
    }
  }
}
