/**
 * The `ddi://` handle of sync mode (SPEC 2.3): what the LLM sees in place of
 * a body the agent's SDK parked. Like a data-plane token it is a capability:
 * 32 CSPRNG bytes, base64url, never logged in full. The Python reference
 * mints `secrets.token_urlsafe(16)`: 16 bytes, 22 characters. A handle of
 * either length is recognised, so a body parked under a reference-minted
 * handle is delivered, and an unknown one is a clear error rather than a
 * `resource_url` the consumer cannot fetch.
 */
import { randomBytes } from 'node:crypto';

/** The scheme of a DDI handle. */
export const DDI_SCHEME = 'ddi://';

const HANDLE_PATTERN = /^ddi:\/\/(?:[A-Za-z0-9_-]{22}|[A-Za-z0-9_-]{43})$/;

/** Mints a fresh handle: `ddi://` and 32 random bytes in base64url. */
export function mintDdiHandle(): string {
  return DDI_SCHEME + randomBytes(32).toString('base64url');
}

/** True when `value` is a string shaped like a DDI handle (it may be unknown or used). */
export function isDdiHandle(value: unknown): value is string {
  return typeof value === 'string' && HANDLE_PATTERN.test(value);
}

/** The loggable form of a handle, quoted: scheme and first 6 characters. */
export function redactDdiHandle(handle: unknown): string {
  if (typeof handle !== 'string') return JSON.stringify(String(handle).slice(0, 12));
  if (!handle.startsWith(DDI_SCHEME)) return JSON.stringify(handle.slice(0, 12));
  return JSON.stringify(`${handle.slice(0, DDI_SCHEME.length + 6)}…`);
}
