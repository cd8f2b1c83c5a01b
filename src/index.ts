/**
 * s2sp: S2SP (MCP-SD selective disclosure) for TypeScript. Named exports
 * only, each what an embedder calls or implements; see README.md for the tour.
 */

// Errors
export { ERRORS, S2SPError, isS2SPError, type ErrorArgs, type ErrorCode, type ErrorParams } from './errors.js';

// Control plane
export { S2SPServer, type S2SPServerOptions, type ListenOptions } from './server/s2sp-server.js';
export { type McpSdkLine, type McpServerLike } from './server/mcp-sdk.js';
export {
  registerResourceTool,
  type ResourceToolContext,
  type ResourceToolHandler,
  type TableResult,
  type ToolConfig,
} from './control/resource-tool.js';
export { type McpToolHost, type ToolExtra, type ToolResult } from './control/tool-host.js';
export {
  registerConsumerTool,
  type ConsumerBatchInput,
  type ConsumerBatchToolHandler,
  type ConsumerInput,
  type ConsumerToolConfig,
  type ConsumerToolHandler,
  type ConsumerToolOptions,
} from './control/consumer-tool.js';
export { DEFAULT_ABSTRACT_ROW_LIMIT, type AnyEnvelope, type ColumnsEnvelope, type Envelope } from './control/envelope.js';
export { AbstractFormat, ABSTRACT_FORMATS } from './protocol/abstract-format.js';
export { ERROR_CODE_META_KEY, type ToolErrorLog } from './control/tool-results.js';
export { mcpHttpPlugin, DEFAULT_MCP_BODY_LIMIT, type McpHttpOptions } from './server/mcp-http-plugin.js';
export { DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts } from './server/http-timeouts.js';
export { s2spClientErrorHandler, s2spFrameworkErrors } from './server/client-errors.js';

// Data plane
export { createDataPlane, type CreateDataPlaneOptions, type DataPlane } from './data/data-plane-handle.js';
export { s2spDataPlane, DEFAULT_REQUEST_BODY_LIMIT, type DataPlaneOptions } from './data/data-plane-plugin.js';
export { ARROW_STREAM_TYPE, JSON_TYPE, IpcCodec } from './protocol/media-types.js';
export { DEFAULT_INLINE_CELL_LIMIT } from './data/encoder-core.js';
export { TRANSFER_DURATION_BUCKETS } from './data/metrics.js';
export { METRICS_PATH } from './protocol/data-path.js';

// Worker threads
export { createEncoderPool, type EncoderPool, type EncoderPoolOptions, type RunOptions } from './worker/encoder-pool.js';
export {
  registerIpcCodec,
  ipcCodecAvailable,
  availableIpcCodecs,
  type IpcBufferCodec,
  type IpcCodecSource,
} from './ipc/compression/codec-registry.js';
export { CompressedBatchCache, DEFAULT_COMPRESSED_CACHE_BYTES, type CompressedBatchCacheOptions, type CompressedBatchCacheStats } from './ipc/compression/compressed-batch-cache.js';

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
  type StreamedPutResult,
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
export type { BatchStream, RecordBatchSource } from './table/batch-stream.js';
export { ROW_ID } from './protocol/row-id.js';
export { JSON_TEXT_METADATA_KEY } from './table/json-column.js';

// Consumer side
export { fetchBody, BodyFormat, type BodyCodec, type FetchBodyOptions, type FetchedBody, type FetchProgress } from './consumer/fetch-body.js';
export { fetchBodyBatches, type StreamedBody } from './consumer/fetch-batches.js';
export { resolveConsumerRows, type ResolveOptions, type ResolvedRows } from './consumer/resolve.js';
export { resolveConsumerBatches, type ResolvedBatches } from './consumer/resolve-batches.js';

// Agent side
export { S2SPDispatcher } from './agent/dispatcher.js';
export { DdiBuffer } from './agent/ddi-buffer.js';
export { isDdiHandle } from './protocol/ddi-handle.js';
export { S2SPClient, type McpToolClient, type ToolCallOptions } from './agent/s2sp-client.js';
