/**
 * Tokens are bearer capabilities: 32 bytes from the CSPRNG, base64url without
 * padding (43 characters). They never reach a log in full.
 */
import { randomBytes } from 'node:crypto';

/** Characters in a token: 32 bytes in base64url without padding. */
export const TOKEN_LENGTH = 43;

const TOKEN_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${TOKEN_LENGTH}}$`);

/** Mints a fresh token: 32 random bytes, base64url, no padding. */
export function mintToken(): string {
  return randomBytes(32).toString('base64url');
}

/** True when `value` has a token's shape (it may still be unknown). */
export function isWellFormedToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

/** The loggable form of a token: its first 6 characters. */
export function redactToken(token: string): string {
  return `${token.slice(0, 6)}…`;
}

/**
 * Redacts a URL or path for logging: the segment after `/s2sp/data/` (any
 * case, repeated slashes too), and any other run of 32 or more base64url
 * characters, since a mistyped or mis-joined resource_url can put a token
 * anywhere in the path.
 */
export function redactTokensInUrl(url: string): string {
  return url
    .replace(/(\/s2sp\/data\/+)([^/?#]{7,})/gi, (_m, prefix: string, token: string) => prefix + redactToken(token))
    .replace(/[A-Za-z0-9_-]{32,}/g, (run) => redactToken(run));
}
