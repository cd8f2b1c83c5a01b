/**
 * GeoJSON FeatureCollection -> rows: one row per feature, its `properties`
 * flattened to columns and a Point's coordinates spelled out, so a feed such
 * as USGS earthquakes becomes an ordinary table:
 *
 *   ...properties, id, longitude, latitude, depth
 *
 * `depth` is the third coordinate as the USGS feeds use it (kilometres below
 * the surface); other GeoJSON calls that position "elevation", and we keep
 * the value as written either way.
 */
import { WholeFloat } from '../../json/whole-float.js';
import { S2SPError } from '../../errors.js';
import type { Row } from '../../table/rows-from-table.js';

/** Columns taken from the feature itself rather than from its properties. */
export const FEATURE_COLUMNS = ['id', 'longitude', 'latitude', 'depth'] as const;

/** Prefix given to a property whose name is one of {@link FEATURE_COLUMNS}. */
export const SHADOWED_PROPERTY_PREFIX = 'property_';

/** The least a FeatureCollection must have: its `type` and a `features` array. */
export interface FeatureCollectionLike {
  type: 'FeatureCollection';
  features: unknown[];
}

/** True for a JSON object with `type: "FeatureCollection"` (its features are checked later). */
export function isFeatureCollection(value: unknown): value is FeatureCollectionLike {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { type?: unknown }).type === 'FeatureCollection';
}

/**
 * One row per feature: every `properties` key in order, then `id` (the
 * feature's id), `longitude`, `latitude` and `depth` (coordinates 0..2 of a
 * Point; null when absent or when the geometry is not a Point). A property
 * named like one of those four is kept as `property_<name>` rather than lost.
 * Property values are copied as they are (nested objects stay objects).
 *
 * @param fc a parsed GeoJSON FeatureCollection
 * @throws S2SPError `S2SP_ERR_INPUT_UNREADABLE` when `features` is not an
 *   array or a feature is not an object
 */
export function rowsFromFeatureCollection(fc: unknown): Row[] {
  if (!isFeatureCollection(fc)) {
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'geojsonNoType' });
  }
  const features = (fc as { features?: unknown }).features;
  if (!Array.isArray(features)) {
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'geojsonNoFeatures' });
  }
  const rows: Row[] = new Array(features.length);
  for (let i = 0; i < features.length; i++) rows[i] = rowFromFeature(features[i], i);
  return rows;
}

function rowFromFeature(feature: unknown, index: number): Row {
  if (typeof feature !== 'object' || feature === null || Array.isArray(feature)) {
    throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'geojsonFeatureNotObject', index });
  }
  const { id, properties, geometry } = feature as { id?: unknown; properties?: unknown; geometry?: unknown };
  const row: Row = {};
  if (properties !== null && properties !== undefined) {
    if (typeof properties !== 'object' || Array.isArray(properties)) {
      throw new S2SPError('S2SP_ERR_INPUT_UNREADABLE', { problem: 'geojsonPropertiesNotObject', index });
    }
    for (const [key, value] of Object.entries(properties)) {
      const name = (FEATURE_COLUMNS as readonly string[]).includes(key) ? SHADOWED_PROPERTY_PREFIX + key : key;
      // defineProperty, not `row[name] =`: JSON.parse keeps a "__proto__"
      // key as data, and assignment would hit the prototype setter instead.
      Object.defineProperty(row, name, { value: value ?? null, enumerable: true, writable: true, configurable: true });
    }
  }
  row.id = typeof id === 'string' || typeof id === 'number' || id instanceof WholeFloat ? id : null;
  const coordinates = pointCoordinates(geometry);
  row.longitude = coordinate(coordinates, 0);
  row.latitude = coordinate(coordinates, 1);
  row.depth = coordinate(coordinates, 2);
  return row;
}

function pointCoordinates(geometry: unknown): unknown[] | undefined {
  if (typeof geometry !== 'object' || geometry === null) return undefined;
  const { type, coordinates } = geometry as { type?: unknown; coordinates?: unknown };
  return type === 'Point' && Array.isArray(coordinates) ? coordinates : undefined;
}

/** A finite coordinate; a WholeFloat (`5.0`) stays one, so the column stays Float64. */
function coordinate(coordinates: unknown[] | undefined, i: number): number | WholeFloat | null {
  const value = coordinates?.[i];
  if (value instanceof WholeFloat) return value;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
