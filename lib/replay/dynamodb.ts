/**
 * Seen webhook ids in a DynamoDB table shared by every Lambda container: partition key `pk`
 * (string, `<clusterId>#<webhook-id>`) and `expiresAt` (epoch seconds, the table's TTL
 * attribute). One conditional PutItem records an id and tells a replay apart. TTL deletes
 * expired items lazily (within days), so an item still present but expired must not block:
 * the condition lets a write replace it.
 *
 * The DynamoDB client is loaded on the first request, not at import (lib/dynamodb).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDb } from '../dynamodb/index.js';
import type { ReplayStore } from './store.js';

export interface DynamoDbReplayStoreOptions {
  tableName: string;
  /** The client (tests, custom endpoints); otherwise one from the default chain. */
  client?: DynamoDBClient;
}

export function createDynamoDbReplayStore(options: DynamoDbReplayStoreOptions): ReplayStore {
  return {
    async recordOnce(key, expiresAt, now) {
      const {
        sdk: { ConditionalCheckFailedException, PutItemCommand },
        client,
      } = await dynamoDb(options.client);
      try {
        await client.send(
          new PutItemCommand({
            TableName: options.tableName,
            Item: { pk: { S: key }, expiresAt: { N: String(expiresAt) } },
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
            ExpressionAttributeValues: { ':now': { N: String(now) } },
          }),
        );
        return true;
      } catch (err) {
        if (err instanceof ConditionalCheckFailedException || (err as Error | undefined)?.name === 'ConditionalCheckFailedException') return false;
        throw err;
      }
    },
  };
}
