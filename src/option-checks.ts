/**
 * Checks of the options a plugin, store, pool or server is built with. They
 * run at construction, so a bad value fails at once with
 * `S2SP_ERR_OPTION_INVALID` naming the option, instead of later as a hang
 * (a chunk size of 0 loops forever) or a confusing runtime error. Every
 * layer may use them: they import only the error catalogue.
 */
import { S2SPError } from './errors.js';

/** `S2SP_ERR_OPTION_INVALID` for option `option`, which must be `expected` (completing "option X must be ..."). */
export function invalidOption(option: string, expected: string, value: unknown): S2SPError {
  return new S2SPError('S2SP_ERR_OPTION_INVALID', { option, expected, value });
}

/**
 * An integer in [min, max], or `undefined` when absent.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function integerOption(value: unknown, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw invalidOption(name, `an integer ${range}`, value);
  }
  return value;
}

/**
 * A finite number above zero, or `undefined` when absent.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function positiveOption(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw invalidOption(name, 'a positive number', value);
  return value;
}

/**
 * A finite number of at least zero, or `undefined` when absent.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function nonNegativeOption(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw invalidOption(name, 'a number >= 0', value);
  return value;
}

/**
 * An array of non-empty strings, or `undefined` when absent.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function stringListOption(value: unknown, name: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw invalidOption(name, 'an array of strings', value);
  for (const entry of value) {
    if (typeof entry !== 'string' || entry.trim() === '') throw invalidOption(name, 'an array of non-empty strings', entry);
  }
  return value;
}

/**
 * An absolute http: or https: URL, or `undefined` when absent.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function httpUrlOption(value: unknown, name: string): URL | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw invalidOption(name, 'an http: or https: URL without query or fragment', value);
  }
  return url;
}

/**
 * An options object: `{}` when absent, else a plain object. A factory
 * reads its options through this first, so `null`, a number or an array is
 * named, not a TypeError from inside.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function optionsObject<T extends object>(value: T | undefined, name = 'options'): T {
  if (value === undefined) return {} as T;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidOption(name, 'an object', value);
  return value;
}

/**
 * A required function.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function functionOption<T>(value: T, name: string, expected = 'a function'): T {
  if (typeof value !== 'function') throw invalidOption(name, expected, value);
  return value;
}

/**
 * A required non-empty string.
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function nonEmptyStringOption(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidOption(name, 'a non-empty string', value);
  return value;
}

/**
 * A required BodyStore (anything with the store's lease method).
 * @throws S2SPError `S2SP_ERR_OPTION_INVALID`
 */
export function storeOption<T>(value: T, name = 'store'): T {
  if (!isBodyStore(value)) throw invalidOption(name, 'a BodyStore', value);
  return value;
}

/** True for a store (anything with the store's lease method). */
export function isBodyStore(value: unknown): value is { lease: unknown } {
  return typeof (value as { lease?: unknown } | null | undefined)?.lease === 'function';
}
