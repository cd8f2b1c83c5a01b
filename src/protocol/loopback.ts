/**
 * Loopback rules: which hosts are this machine. The consumer trusts them
 * without an allow-list entry and asks them for no compression; the server
 * binds and guards Host headers by them.
 */

/** True for `localhost`, any 127.0.0.0/8 address and `[::1]` (URL.hostname form). */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  // URL has already normalised IPv4 spellings (0x7f.1, 2130706433) to dotted quads.
  const quad = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  return quad !== null && quad[1] === '127';
}
