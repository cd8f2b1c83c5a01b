/**
 * The agent-side data buffer of sync mode (SPEC 2.3): body rows parked in
 * this process under a `ddi://` handle, so the LLM sees only the handle.
 *
 * A handle is a capability like a data-plane token (32 CSPRNG bytes,
 * base64url) and is single use: `take` removes the entry. There is no TTL
 * or size cap: an entry lives until it is taken or the buffer is cleared, so
 * a long-running agent that drops handles should call `clear` between tasks.
 */
import { S2SPError } from '../errors.js';
import { isDdiHandle, mintDdiHandle, redactDdiHandle } from '../protocol/ddi-handle.js';

/** In-process, single-use store of body rows keyed by `ddi://` handles. */
export class DdiBuffer {
  private readonly entries = new Map<string, unknown[]>();

  /**
   * Parks rows under a fresh handle.
   * @param rows the body rows (kept by reference, not copied)
   * @returns `ddi://` followed by 32 random bytes in base64url
   */
  put(rows: unknown[]): string {
    const handle = mintDdiHandle();
    this.entries.set(handle, rows);
    return handle;
  }

  /**
   * Removes and returns the rows of a handle.
   * @throws S2SPError `S2SP_ERR_DDI_HANDLE_UNKNOWN` when the handle is unknown or already taken
   */
  take(handle: string): unknown[] {
    const rows = this.entries.get(handle);
    if (rows === undefined) {
      throw new S2SPError('S2SP_ERR_DDI_HANDLE_UNKNOWN', { redactedHandle: redactDdiHandle(handle) });
    }
    this.entries.delete(handle);
    return rows;
  }

  /** Puts rows back under a handle `take` removed (the call that spent it failed). */
  restore(handle: string, rows: unknown[]): void {
    if (!isDdiHandle(handle)) throw new TypeError('restore needs a ddi:// handle');
    this.entries.set(handle, rows);
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
