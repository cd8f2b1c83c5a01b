/**
 * The agent-side data buffer of sync mode (SPEC 2.3): bodies parked in this
 * process under a `ddi://` handle, so the LLM sees only the handle. A body is
 * kept as its exact JSON text (the array of rows), the text `body_data`
 * carries: rows parsed into JS numbers would forget that `2.0` was a float.
 *
 * A handle is a capability like a data-plane token (32 CSPRNG bytes,
 * base64url) and is single use: `take` removes the entry. There is no TTL
 * or size cap: an entry lives until it is taken or the buffer is cleared, so
 * a long-running agent that drops handles should call `clear` between tasks.
 */
import { S2SPError } from '../errors.js';
import { isDdiHandle, mintDdiHandle, redactDdiHandle } from '../protocol/ddi-handle.js';

/** In-process, single-use store of bodies (JSON text) keyed by `ddi://` handles. */
export class DdiBuffer {
  private readonly entries = new Map<string, string>();

  /**
   * Parks a body under a fresh handle.
   * @param bodyText the body rows as one JSON array, exactly as `body_data` will carry them
   * @returns `ddi://` followed by 32 random bytes in base64url
   */
  put(bodyText: string): string {
    const handle = mintDdiHandle();
    this.entries.set(handle, bodyText);
    return handle;
  }

  /**
   * Removes and returns the body text of a handle.
   * @throws S2SPError `S2SP_ERR_DDI_HANDLE_UNKNOWN` when the handle is unknown or already taken
   */
  take(handle: string): string {
    const bodyText = this.entries.get(handle);
    if (bodyText === undefined) {
      throw new S2SPError('S2SP_ERR_DDI_HANDLE_UNKNOWN', { redactedHandle: redactDdiHandle(handle) });
    }
    this.entries.delete(handle);
    return bodyText;
  }

  /**
   * Puts a body back under a handle `take` removed (the call that spent it
   * failed), or parks one under a handle minted elsewhere (the Python
   * reference's 22-character ones).
   * @throws S2SPError `S2SP_ERR_DDI_HANDLE_UNKNOWN` when `handle` is not shaped like a ddi:// handle
   */
  restore(handle: string, bodyText: string): void {
    if (!isDdiHandle(handle)) throw new S2SPError('S2SP_ERR_DDI_HANDLE_UNKNOWN', { redactedHandle: redactDdiHandle(handle) });
    this.entries.set(handle, bodyText);
  }

  /** True when the handle names rows not yet taken. */
  has(handle: string): boolean {
    return this.entries.has(handle);
  }

  /** Number of handles not yet taken. */
  get size(): number {
    return this.entries.size;
  }

  /** Drops every entry. */
  clear(): void {
    this.entries.clear();
  }
}
