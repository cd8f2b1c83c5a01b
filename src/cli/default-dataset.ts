/**
 * The bundled datasets. The default table: the USGS earthquakes feed
 * (GeoJSON, 1,707 features) that ships in the `vega-datasets` npm package,
 * an optional package (optional-package.ts); its `exports` map hides the
 * data folder from `import`, so we resolve the package entry and walk to it.
 * The demo's second table: hand-made seismic regions in this package's own
 * `src/cli/data/` (listed in package.json `files`, so it ships).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveOptional } from '../optional-package.js';

/**
 * Absolute path of a file in vega-datasets' `data/` folder.
 * @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` when vega-datasets is not installed
 */
export function vegaDatasetPath(file: string): string {
  const entry = resolveOptional('vega-datasets'); // <root>/build/index.js
  return join(dirname(dirname(entry)), 'data', file);
}

/** Absolute path of the default table: `data/earthquakes.json` from vega-datasets. */
export function defaultDatasetPath(): string {
  return vegaDatasetPath('earthquakes.json');
}

/**
 * Absolute path of `src/cli/data/seismic-regions.csv`: 16 plate-boundary regions as
 * longitude/latitude boxes (min inclusive, max exclusive; no two overlap), the
 * table the demo joins the earthquakes with. Found from this file's place,
 * `<package>/dist/src/cli/`, in a checkout and in an installed package alike.
 */
export function seismicRegionsPath(): string {
  return fileURLToPath(new URL('../../../src/cli/data/seismic-regions.csv', import.meta.url));
}
