/**
 * The bundled dataset: the USGS earthquakes feed (GeoJSON, 1,707 features)
 * that ships in the `vega-datasets` npm package. Its `exports` map hides the
 * data folder from `import`, so we resolve the package entry and walk to it.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Absolute path of a file in vega-datasets' `data/` folder. */
export function vegaDatasetPath(file: string): string {
  const entry = createRequire(import.meta.url).resolve('vega-datasets'); // <root>/build/index.js
  return join(dirname(dirname(entry)), 'data', file);
}

/** Absolute path of the default table: `data/earthquakes.json` from vega-datasets. */
export function defaultDatasetPath(): string {
  return vegaDatasetPath('earthquakes.json');
}
