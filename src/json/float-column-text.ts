/**
 * The texts of a whole Float64 column at once, from the float-text addon
 * (src/native/float-text.cc, built at install when a C++ compiler is there):
 * the same bytes as the JavaScript formatter (float-text.ts) writes one value
 * at a time, at a fraction of the cost, which is most of a full JSON fetch's
 * (native-notes.md, "Float text"). Without the addon, or with
 * `S2SP_NATIVE=off` in the environment, nothing is prepared and floats are
 * formatted in JavaScript.
 */
import { createRequire } from 'node:module';
import { S2SPError } from '../errors.js';

/** The addon's one function: see float-text.cc. */
interface FloatTextAddon {
  floatColumnText(values: Float64Array, text: Uint8Array, ends: Uint32Array): number;
}

/** The longest text of one double: "-0.00000" and 17 digits. */
const MAX_TEXT_BYTES = 25;

/** The texts of a column: value i's bytes are text[ends[i - 1] .. ends[i]) (from 0 for i = 0); none for a non-finite value. */
export interface FloatColumnText {
  readonly text: Uint8Array;
  readonly ends: Uint32Array;
}

let addon: FloatTextAddon | null | undefined;

function loadedAddon(): FloatTextAddon | null {
  if (addon === undefined) {
    addon = null;
    if (process.env.S2SP_NATIVE !== 'off') {
      try {
        // dist/src/json/ -> dist/native/, where src/native/build.mjs puts it.
        addon = createRequire(import.meta.url)('../../native/float-text.node') as FloatTextAddon;
      } catch {
        // Not built here (no compiler at install): JavaScript formats floats.
      }
    }
  }
  return addon;
}

/** True when the addon is loaded, so {@link floatColumnText} prepares texts. */
export function floatTextAddonLoaded(): boolean {
  return loadedAddon() !== null;
}

/**
 * The JSON texts of every value of `values`, or undefined without the addon.
 * @throws S2SPError `S2SP_ERR_INTERNAL_INVARIANT` should the addon refuse its arguments
 */
export function floatColumnText(values: Float64Array): FloatColumnText | undefined {
  const native = loadedAddon();
  if (native === null) return undefined;
  const text = Buffer.allocUnsafe(values.length * MAX_TEXT_BYTES);
  const ends = new Uint32Array(values.length);
  if (native.floatColumnText(values, text, ends) < 0) throw new S2SPError('S2SP_ERR_INTERNAL_INVARIANT', { problem: 'floatText' });
  return { text, ends };
}
