/**
 * Reports in a DynamoDB table shared by every Lambda container: partition key `pk` (the
 * cluster id), `digest`, `observedAt` (epoch ms), `body` (the report as gzip'd JSON: a PV
 * entry is ~150 bytes of JSON and compresses well, and an item may hold 400 KB), `events`
 * (queued Warning Events, JSON strings). One item per cluster; every write is one
 * conditional UpdateItem, so a late request never replaces a newer report.
 *
 * The DynamoDB client is loaded on first use, not at import (lib/dynamodb).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDb } from '../dynamodb/index.js';
import { VolumeReportSchema, WriteSchema } from '../contract/index.js';
import type { ReportStore, StoredReport } from './store.js';

/** What one item may hold of report, leaving room for the rest of the item under DynamoDB's 400 KB. */
export const MAX_REPORT_BYTES = 350 * 1024;

/** A report too large for the store even compressed; the message says how large. */
export class ReportTooLargeError extends Error {
  override readonly name = 'ReportTooLargeError';
}

export interface DynamoDbReportStoreOptions {
  tableName: string;
  client?: DynamoDBClient;
}

export function createDynamoDbReportStore(options: DynamoDbReportStoreOptions): ReportStore {
  const TableName = options.tableName;
  const sdk = () => dynamoDb(options.client);
  const key = (clusterId: string) => ({ pk: { S: clusterId } });

  async function read(clusterId: string): Promise<Record<string, AttributeValue> | undefined> {
    const {
      sdk: { GetItemCommand },
      client,
    } = await sdk();
    const out = await client.send(new GetItemCommand({ TableName, Key: key(clusterId), ConsistentRead: true }));
    return out.Item;
  }
  function toStored(clusterId: string, item: Record<string, AttributeValue> | undefined): StoredReport | undefined {
    if (!item?.body?.B || !item.digest?.S || !item.observedAt?.N) return undefined;
    const report = VolumeReportSchema.parse(JSON.parse(gunzipSync(item.body.B).toString('utf8')));
    return { clusterId, digest: item.digest.S, observedAt: Number(item.observedAt.N), report };
  }

  return {
    async get(clusterId) {
      return toStored(clusterId, await read(clusterId));
    },
    async put(stored) {
      const body = gzipSync(JSON.stringify(stored.report));
      if (body.length > MAX_REPORT_BYTES) {
        throw new ReportTooLargeError(`the volume report of cluster "${stored.clusterId}" is ${body.length} bytes compressed; the store holds at most ${MAX_REPORT_BYTES}`);
      }
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      try {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(stored.clusterId),
            UpdateExpression: 'SET digest = :d, observedAt = :t, body = :b',
            ConditionExpression: 'attribute_not_exists(observedAt) OR observedAt <= :t',
            ExpressionAttributeValues: { ':d': { S: stored.digest }, ':t': { N: String(stored.observedAt) }, ':b': { B: body } },
          }),
        );
        return true;
      } catch (err) {
        if (isConditionFailed(err)) return false;
        throw err;
      }
    },
    async confirm(clusterId, digest, observedAt) {
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      try {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: 'SET observedAt = :t',
            ConditionExpression: 'digest = :d AND observedAt <= :t',
            ExpressionAttributeValues: { ':d': { S: digest }, ':t': { N: String(observedAt) } },
          }),
        );
        return true;
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
        // Either another digest, or a later confirmation got there first.
        return (await read(clusterId))?.digest?.S === digest;
      }
    },
    async queueEvents(clusterId, events) {
      if (events.length === 0) return;
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      await client.send(
        new UpdateItemCommand({
          TableName,
          Key: key(clusterId),
          UpdateExpression: 'SET events = list_append(if_not_exists(events, :none), :new)',
          ExpressionAttributeValues: { ':none': { L: [] }, ':new': { L: events.map((e) => ({ S: JSON.stringify(e) })) } },
        }),
      );
    },
    async takeEvents(clusterId) {
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      try {
        const out = await client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: 'REMOVE events',
            ConditionExpression: 'attribute_exists(events)',
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        return (out.Attributes?.events?.L ?? []).map((v) => WriteSchema.parse(JSON.parse(v.S ?? 'null')));
      } catch (err) {
        if (isConditionFailed(err)) return [];
        throw err;
      }
    },
    async clusters() {
      const {
        sdk: { ScanCommand },
        client,
      } = await sdk();
      const ids: string[] = [];
      let ExclusiveStartKey: Record<string, AttributeValue> | undefined;
      do {
        const out = await client.send(
          new ScanCommand({ TableName, ProjectionExpression: 'pk', FilterExpression: 'attribute_exists(body)', ExclusiveStartKey }),
        );
        for (const item of out.Items ?? []) if (item.pk?.S) ids.push(item.pk.S);
        ExclusiveStartKey = out.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return ids.sort();
    },
  };
}

function isConditionFailed(err: unknown): boolean {
  return (err as Error | undefined)?.name === 'ConditionalCheckFailedException';
}
