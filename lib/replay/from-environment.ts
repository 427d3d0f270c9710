/**
 * Picks the replay store the deployment is configured for, as the registry is picked:
 * - `VOLHOOK_REPLAY_TABLE`: that DynamoDB table (deployed; see serverless.yml), shared by
 *   every container, so a replay is caught whichever container it reaches;
 * - otherwise in memory, which protects one process (the local stack, `npm run offline`).
 */
import { createDynamoDbReplayStore } from './dynamodb.js';
import { createMemoryReplayStore } from './memory.js';
import type { ReplayStore } from './store.js';

export function replayStoreFromEnvironment(env: NodeJS.ProcessEnv): ReplayStore {
  const table = env.VOLHOOK_REPLAY_TABLE?.trim();
  return table ? createDynamoDbReplayStore({ tableName: table }) : createMemoryReplayStore();
}
