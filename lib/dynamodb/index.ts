/**
 * The DynamoDB SDK for every store that talks to DynamoDB on a request's path (the replay
 * ids; a rate budget would be another): loaded on first use, once per process, so that it
 * waits in a chunk of the function's bundle instead of weighing on every cold start's import
 * (`npm run bench:coldstart`; test/deploy/package.test.ts fails if it is loaded at import).
 * One default client per process, so its connections are shared too.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export type DynamoDbSdk = typeof import('@aws-sdk/client-dynamodb');

let sdk: Promise<DynamoDbSdk> | undefined;
let defaultClient: DynamoDBClient | undefined;

/** `@aws-sdk/client-dynamodb`, imported on the first call. */
export function loadDynamoDb(): Promise<DynamoDbSdk> {
  return (sdk ??= import('@aws-sdk/client-dynamodb'));
}

/** The SDK and a client: `client` when given (tests, custom endpoints), else the process's default one. */
export async function dynamoDb(client?: DynamoDBClient): Promise<{ sdk: DynamoDbSdk; client: DynamoDBClient }> {
  const loaded = await loadDynamoDb();
  return { sdk: loaded, client: client ?? (defaultClient ??= new loaded.DynamoDBClient({})) };
}
