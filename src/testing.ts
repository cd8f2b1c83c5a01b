/**
 * s2sp/testing: switches for tests and benchmarks, kept off the embedding
 * surface (`s2sp`). Nothing here belongs in production.
 */
export { multiUseMemoryStore } from './cache/memory-store.js';
export { encoderPoolRunning, type WorkerModule } from './worker/encoder-pool.js';
export { registerIpcCodec, type IpcCodecSource } from './ipc/compression/codec-registry.js';
