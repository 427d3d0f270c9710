export { createDynamoDbReplayStore, type DynamoDbReplayStoreOptions } from './dynamodb.js';
export { replayStoreFromEnvironment } from './from-environment.js';
export { createMemoryReplayStore, type MemoryReplayStore } from './memory.js';
export { replayExpiry, replayKey, type ReplayStore } from './store.js';
