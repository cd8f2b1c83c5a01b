/**
 * DuckDB, query_rows' SQL engine: an optional peer, loaded on first use.
 * `@duckdb/node-api` gives the instance, connections and appenders; the
 * column bytes move through `@duckdb/node-bindings`, the C API one level
 * down, which copies a whole vector in one call where node-api sets values
 * one by one (native-notes.md, "query_rows' engine"). The bindings are
 * resolved from node-api's own place, since they are its dependency, not ours.
 */
import { createRequire } from 'node:module';
import type * as DuckDBApi from '@duckdb/node-api';
import type * as DuckDBBindings from '@duckdb/node-bindings';
import { importOptional, resolveOptional } from '../optional-package.js';

/** The two layers of DuckDB's Node client. */
export interface DuckDB {
  api: typeof DuckDBApi;
  bindings: typeof DuckDBBindings;
}

let loading: Promise<DuckDB> | undefined;

/**
 * DuckDB's Node client, loaded once.
 * @throws S2SPError `S2SP_ERR_CLI_PACKAGE_MISSING` with the install line when it is not installed
 */
export function loadDuckDB(): Promise<DuckDB> {
  if (loading === undefined) {
    loading = (async () => {
      const api = await importOptional<typeof DuckDBApi>('@duckdb/node-api');
      const bindings = createRequire(resolveOptional('@duckdb/node-api'))('@duckdb/node-bindings') as typeof DuckDBBindings;
      return { api, bindings };
    })();
    // Installed later, it loads then: a failure is not kept.
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}
