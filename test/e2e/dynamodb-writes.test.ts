/**
 * The bench's count of DynamoDB writes (bench/lib/dynamodb-writes.ts), through the proxy over
 * HTTP: real DynamoDB clients against an endpoint on 127.0.0.1 that answers like DynamoDB does
 * (`{}`), so what is counted is what the SDK sends.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemBytes, startDynamoDbWriteCounter, subtractWrites, type DynamoDbWriteCounter } from '../../bench/lib/dynamodb-writes.js';

let upstream: Server;
let counter: DynamoDbWriteCounter;
let client: DynamoDBClient;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  counter = await startDynamoDbWriteCounter(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  client = new DynamoDBClient({ region: 'us-east-1', endpoint: counter.url, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});

afterAll(async () => {
  client?.destroy();
  await counter?.stop();
  await new Promise<void>((resolve) => upstream?.close(() => resolve()));
});

describe('DynamoDB writes counted at the wire', () => {
  it('PutItem, UpdateItem and DeleteItem count by operation, table and item; a GetItem (a read) does not', async () => {
    const before = counter.counts();
    await client.send(new PutItemCommand({ TableName: 'replay', Item: { pk: { S: 'a#1' } } }));
    await client.send(new UpdateItemCommand({ TableName: 'reports', Key: { pk: { S: 'a' } }, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': { N: '1' } } }));
    await client.send(new UpdateItemCommand({ TableName: 'reports', Key: { pk: { S: 'a' } }, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': { N: '2' } } }));
    await client.send(new DeleteItemCommand({ TableName: 'reports', Key: { pk: { S: 'b' } } }));
    await client.send(new GetItemCommand({ TableName: 'reports', Key: { pk: { S: 'a' } } }));
    const writes = subtractWrites(counter.counts(), before);
    expect(writes).toEqual({
      total: 4,
      byOperation: { PutItem: 1, UpdateItem: 2, DeleteItem: 1 },
      byTable: { replay: 1, reports: 3 },
      byItem: { 'replay a#1': 1, 'reports a': 2, 'reports b': 1 },
    });
  });

  it("an item's size: names and values, binary by its bytes", () => {
    expect(itemBytes({ pk: { S: 'abc' } })).toBe(2 + 3);
    expect(itemBytes({ body: { B: new Uint8Array(2048) } })).toBe(4 + 2048);
    expect(itemBytes({ ids: { SS: ['vol-1', 'vol-22'] } })).toBe(3 + 5 + 6);
  });
});
