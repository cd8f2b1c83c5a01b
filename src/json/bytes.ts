/**
 * The bytes of JSON's grammar, declared once for every writer and reader in
 * json/ (the document's own literals, `{"body":[` and its closing keys, are
 * the wire's: protocol/json-body-bytes.ts).
 */

export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const QUOTE = 0x22;
export const PLUS = 0x2b;
export const COMMA = 0x2c;
export const MINUS = 0x2d;
export const DOT = 0x2e;
export const ZERO = 0x30;
export const ONE = 0x31;
export const NINE = 0x39;
export const COLON = 0x3a;
export const UPPER_E = 0x45;
export const OPEN_BRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const CLOSE_BRACKET = 0x5d;
export const LOWER_E = 0x65;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;

/** The literals `null`, `true` and `false` as UTF-8. */
export const NULL_BYTES = Buffer.from('null');
export const TRUE_BYTES = Buffer.from('true');
export const FALSE_BYTES = Buffer.from('false');

/** JSON's insignificant whitespace. */
export function isSpace(c: number): boolean {
  return c === SPACE || c === LF || c === CR || c === TAB;
}
