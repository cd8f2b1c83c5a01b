/**
 * s2sp: S2SP (MCP-SD selective disclosure) for TypeScript. Named exports only;
 * see README.md for the tour.
 */

// Errors
export { ERRORS, S2SPError, isS2SPError, type ErrorArgs, type ErrorCode, type ErrorParams } from './errors.js';

// Control plane
export { S2SPServer, type S2SPServerOptions, type ListenOptions } from './server/s2sp-server.js';
export {
  registerResourceTool,
  type ResourceToolContext,
  type ResourceToolHandler,
  type TableResult,
  type ToolConfig,
} from './control/resource-tool.js';
export {
  registerConsumerTool,
  type ConsumerInput,
  type ConsumerToolConfig,
  type ConsumerToolHandler,
} from './control/consumer-tool.js';
export { parseAbstractDomains } from './control/abstract-domains.js';
export { buildEnvelope, DEFAULT_ABSTRACT_ROW_LIMIT, type Envelope } from './control/envelope.js';
export { ERROR_CODE_META_KEY } from './control/tool-results.js';
export { mcpHttpPlugin, type McpHttpOptions } from './server/mcp-http-plugin.js';

// Data plane
export { s2spDataPlane, DEFAULT_REQUEST_BODY_LIMIT, type DataPlaneOptions } from './data/data-plane-plugin.js';
export { ARROW_STREAM_TYPE, JSON_TYPE } from './protocol/media-types.js';
export { DEFAULT_INLINE_CELL_LIMIT } from './data/body-stream.js';
export { TRANSFER_DURATION_BUCKETS } from './data/metrics.js';
export { METRICS_PATH } from './protocol/data-path.js';

// Worker threads
export { createEncoderPool, type EncoderPool, type EncoderPoolOptions } from './worker/encoder-pool.js';
export { lz4Available } from './ipc/lz4-codec.js';

// Cache
export {
  DEFAULT_LEASE_TIMEOUT_MS,
  type BodyStore,
  type BodyLease,
  type CachedBody,
  type PutOptions,
  type PutProgress,
  type PutResult,
  type StoreEvent,
  type StoreObserver,
  type StoreStats,
} from './cache/body-store.js';
export { MemoryStore, DEFAULT_TTL_MS, DEFAULT_MAX_BYTES, EvictReason, type MemoryStoreOptions } from './cache/memory-store.js';
export { RedisStore, DEFAULT_CHUNK_BYTES, DEFAULT_LOCAL_MAX_BYTES, type RedisStoreOptions } from './cache/redis-store.js';
export { storeFromSpec, StoreKind, type StoreSettings } from './cache/store-from-spec.js';
export { SharedMemoryPool, type SharedMemoryPoolOptions } from './cache/shared-memory-pool.js';
export { redactToken } from './protocol/token.js';

// Tables
export { tableFromRows, type TableFromRowsOptions } from './table/table-from-rows.js';
export { rowsFromTable, type Row } from './table/rows-from-table.js';
export { withRowIds } from './table/row-id.js';
export { bodyTableOf } from './table/body-table.js';
export { ROW_ID } from './protocol/row-id.js';
export { JSON_TEXT_METADATA_KEY } from './table/json-column.js';

// Consumer side
export { fetchBody, BodyFormat, type FetchBodyOptions, type FetchedBody, type FetchProgress } from './consumer/fetch-body.js';
export { resolveConsumerRows, type ResolveOptions, type ResolvedRows } from './consumer/resolve.js';
export { mergeByRowId } from './consumer/merge.js';
export { parseColumnMapping, applyColumnMapping } from './consumer/column-mapping.js';
export { checkResourceUrl } from './consumer/resource-url.js';

// Agent side
export { S2SPDispatcher } from './agent/dispatcher.js';
export { DdiBuffer } from './agent/ddi-buffer.js';
export { isDdiHandle } from './protocol/ddi-handle.js';
export { S2SPClient } from './agent/s2sp-client.js';
