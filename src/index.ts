/**
 * s2sp: S2SP (MCP-SD selective disclosure) for TypeScript. The embedding
 * surface README's Library section describes, name for name
 * (test/package/exports.test.ts holds them together); test and benchmark
 * switches live in `s2sp/testing`, agent-framework adapters in their own
 * subpaths.
 */

// Errors and observers
export { S2SPError, isS2SPError, type ErrorCode } from './errors.js';
export type { Listener } from './observe.js';

// The server
export { S2SPServer, type S2SPServerOptions, type ServerEvent, type ListenOptions } from './server/s2sp-server.js';
export type { McpServerLike } from './server/mcp-sdk.js';

// Tools on an McpServer of your own
export { registerResourceTool, type ResourceToolContext, type ResourceToolHandler, type TableResult, type ToolConfig } from './control/resource-tool.js';
export { callerOf, type CallerIdentity, type ToolExtra, type ToolResult } from './control/tool-host.js';
export {
  registerConsumerTool,
  type ConsumerBatchToolHandler,
  type ConsumerInput,
  type ConsumerToolConfig,
  type ConsumerToolHandler,
  type ConsumerToolOptions,
} from './control/consumer-tool.js';
export { registerQueryTool, type QueryToolOptions } from './control/query-tool.js';
export type { Envelope } from './control/envelope.js';

// The data plane on an app of your own, and its worker threads
export { createDataPlane, type CreateDataPlaneOptions, type DataPlane } from './data/data-plane-handle.js';
export { createEncoderPool, type EncoderPool } from './worker/encoder-pool.js';

// Stores
export type { BodyLease, BodyStore, CachedBody, PutOptions, PutResult, StoreEvent } from './cache/body-store.js';
export { MemoryStore, type MemoryStoreOptions } from './cache/memory-store.js';
export { RedisStore, type RedisStoreOptions } from './cache/redis-store.js';

// Tables
export { tableFromRows } from './table/table-from-rows.js';
export { rowsFromTable } from './table/rows-from-table.js';

// Consumer side
export { fetchBody, fetchBodyBatches, type FetchBodyOptions } from './consumer/fetch-body.js';

// Agent side
export { S2SPDispatcher } from './agent/dispatcher.js';
export { S2SPClient } from './agent/s2sp-client.js';
