/**
 * Picks the report store the deployment is configured for, as the replay store is picked:
 * - `VOLHOOK_REPORTS_TABLE`: that DynamoDB table (deployed; see serverless.yml);
 * - `VOLHOOK_REPORTS_DIR`: a directory of JSON files (`npm run offline`, the local stack);
 * - otherwise in memory, which serves one process.
 */
import { createDynamoDbReportStore } from './dynamodb.js';
import { createFileReportStore } from './file.js';
import { createMemoryReportStore } from './memory.js';
import type { ReportStore } from './store.js';

export function reportStoreFromEnvironment(env: NodeJS.ProcessEnv): ReportStore {
  const table = env.VOLHOOK_REPORTS_TABLE?.trim();
  if (table) return createDynamoDbReportStore({ tableName: table });
  const dir = env.VOLHOOK_REPORTS_DIR?.trim();
  return dir ? createFileReportStore(dir) : createMemoryReportStore();
}
