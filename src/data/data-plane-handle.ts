/**
 * A data plane an embedder mounts on its own fastify app, which then knows
 * where it lives: the handle builds every resource_url itself from the prefix
 * the plugin was registered under and the public base URL (or the app's
 * listening address), so nobody concatenates `/s2sp/data/` by hand.
 *
 *   const plane = createDataPlane({ store, publicUrl: 'https://data.example.com' });
 *   await app.register(plane.plugin, { prefix: '/internal' });
 *   plane.resourceUrlFor(token); // https://data.example.com/internal/s2sp/data/<token>
 *
 * The handle also satisfies the resource-tool wrapper's context (`store`,
 * `resourceUrlFor`), so it can be passed to `registerResourceTool` as is.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { BodyStore } from '../cache/body-store.js';
import { S2SPError } from '../errors.js';
import { httpUrlOption, optionsObject, positiveOption, storeOption } from '../option-checks.js';
import { resourceUrlOf } from '../protocol/data-path.js';
import { s2spDataPlane, type DataPlaneOptions } from './data-plane-plugin.js';

/** Options of {@link createDataPlane}: the plugin's options plus where clients reach it. */
export interface CreateDataPlaneOptions extends DataPlaneOptions {
  /**
   * Origin (and any path a reverse proxy puts in front of the app) that
   * consumers reach the app at, e.g. `https://data.example.com`; the mount
   * prefix is appended. Default: the app's listening address.
   */
  publicUrl?: string;
  /** Time to live of cached bodies in ms, if the store does not say (told to the LLM in tool descriptions). */
  ttlMs?: number;
}

/** A data plane to mount once on a fastify app, and the resource_urls it serves. */
export interface DataPlane {
  /** The store its resource_urls read from. */
  readonly store: BodyStore;
  /** Time to live of cached bodies in ms, when known (the option, or the store's). */
  readonly ttlMs?: number;
  /** The fastify plugin: `app.register(plane.plugin, { prefix })`. Mount it once. */
  readonly plugin: FastifyPluginAsync;
  /** The prefix it was mounted under (`''` at the root); undefined until mounted. */
  readonly prefix: string | undefined;
  /**
   * The resource_url of a token.
   * @throws S2SPError `S2SP_ERR_DATA_PLANE_DOWN` before the plugin is mounted, or when
   *   there is no `publicUrl` and the app is not listening
   */
  resourceUrlFor(token: string): string;
}

/** Creates a data plane for `options.store`; mount its `plugin` on your app. */
export function createDataPlane(options: CreateDataPlaneOptions): DataPlane {
  const checked = optionsObject(options);
  storeOption(checked.store);
  httpUrlOption(checked.publicUrl, 'publicUrl');
  positiveOption(checked.ttlMs, 'ttlMs');
  const { publicUrl, ttlMs, ...pluginOptions } = checked;
  let mountedOn: FastifyInstance | undefined;
  const plugin: FastifyPluginAsync = async (app) => {
    if (mountedOn !== undefined) throw new S2SPError('S2SP_ERR_SERVER_STATE', { problem: 'dataPlaneMounted' });
    mountedOn = app;
    await s2spDataPlane(app, pluginOptions);
  };
  return {
    store: options.store,
    ttlMs: ttlMs ?? options.store.ttlMs,
    plugin,
    get prefix() {
      return mountedOn?.prefix;
    },
    resourceUrlFor(token: string): string {
      if (mountedOn === undefined) throw new S2SPError('S2SP_ERR_DATA_PLANE_DOWN');
      const origin = publicUrl ?? listeningOrigin(mountedOn);
      if (origin === undefined) throw new S2SPError('S2SP_ERR_DATA_PLANE_DOWN');
      return resourceUrlOf(`${origin.replace(/\/+$/, '')}${mountedOn.prefix}`, token);
    },
  };
}

/**
 * `http(s)://host:port` of a listening app, or undefined. A wildcard bind
 * (0.0.0.0, ::) is named by its loopback address: reachable from this host,
 * and what a consumer's default origin policy accepts; other hosts need
 * `publicUrl`.
 */
export function listeningOrigin(app: FastifyInstance): string | undefined {
  const address = app.server.address() as AddressInfo | string | null;
  if (address === null || typeof address === 'string') return undefined;
  const scheme = app.initialConfig.https ? 'https' : 'http';
  let host = address.address;
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::') host = '::1';
  return `${scheme}://${address.family === 'IPv6' ? `[${host}]` : host}:${address.port}`;
}
