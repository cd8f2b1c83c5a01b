/**
 * The bundled dataset: the USGS earthquakes feed (GeoJSON, 1,707 features)
 * that ships in the `vega-datasets` npm package, an optional package
 * (optional-package.ts). Its `exports` map hides the data folder from
 * `import`, so we resolve the package entry and walk to it.
 */
import { dirname, join } from 'node:path';
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
