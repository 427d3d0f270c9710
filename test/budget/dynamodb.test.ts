/**
 * The DynamoDB budget's store logic over a mocked client (races, writes, errors), and over a
 * real client whose endpoint is a closed loopback port. Over a real DynamoDB API (moto): see
 * test/e2e/budget-moto.test.ts.
 */
import { createServer, type Socket } from 'node:net';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  ResourceNotFoundException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { BudgetUnavailableError, createBudgetDynamoDbClient, createDynamoDbBudget } from '../../lib/budget/index.js';
import { BUDGET_CLIENT_DEFAULTS } from '../../lib/budget/dynamodb.js';
import { keyOf, scriptedClock } from './budget-contract.js';

const TABLE = 'volhook-test-rate-budget';
const client = new DynamoDBClient({ region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
const ddb = mockClient(client);
afterEach(() => ddb.reset());

const conflict = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
const item = (pk: string, tokens: number, at: number, version: number) => ({
  Item: { pk: { S: pk }, tokens: { N: String(tokens) }, at: { N: String(at) }, factor: { N: '1' }, version: { N: String(version) } },
});

describe('DynamoDB budget store', () => {
  it('a bucket never used -> created with attribute_not_exists(pk), version 1, the tokens left', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand).resolves({});
    ddb.on(UpdateItemCommand).resolves({});
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1 });
    const key = keyOf('AttachVolume', 'eu-west-1', 'acct1');
    expect((await budget.take(key, 20)).granted).toBe(20);
    expect(ddb).toHaveReceivedCommandWith(GetItemCommand, { TableName: TABLE, Key: { pk: { S: 'acct1#eu-west-1#AttachVolume' } }, ConsistentRead: true });
    const update = ddb.commandCalls(UpdateItemCommand)[0]!.args[0].input;
    expect(update.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(update.ExpressionAttributeValues).toMatchObject({ ':tokens': { N: '30.000000000' }, ':next': { N: '1' }, ':at': { N: `${clock.at()}.000000000` } });
  });

  it('an existing bucket -> written only if its version is still the one read', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand).resolves(item('acct1#eu-west-1#AttachVolume', 10, clock.at(), 7));
    ddb.on(UpdateItemCommand).resolves({});
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1 });
    expect((await budget.take(keyOf('AttachVolume', 'eu-west-1', 'acct1'), 20)).granted).toBe(10);
    const update = ddb.commandCalls(UpdateItemCommand)[0]!.args[0].input;
    expect(update.ConditionExpression).toBe('#version = :version');
    expect(update.ExpressionAttributeValues).toMatchObject({ ':version': { N: '7' }, ':next': { N: '8' }, ':tokens': { N: '0.000000000' } });
  });

  it('nothing to grant -> no token taken; one write: the slots promised to the refused items', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand).resolves(item('acct1#eu-west-1#AttachVolume', 0.5, clock.at(), 3));
    ddb.on(UpdateItemCommand).resolves({});
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1 });
    const grant = await budget.take(keyOf('AttachVolume', 'eu-west-1', 'acct1'), 4);
    expect(grant.granted).toBe(0);
    expect([0, 1, 2, 3].map((i) => grant.waitMs(i))).toEqual([100, 300, 500, 700]);
    expect(ddb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
    expect(ddb.commandCalls(UpdateItemCommand)[0]!.args[0].input.ExpressionAttributeValues).toMatchObject({
      ':tokens': { N: '0.500000000' },
      ':promisedUntil': { N: (clock.at() + 700).toFixed(9) },
      ':version': { N: '3' },
    });
  });

  it('lost a race once -> reads again and takes from what the winner left', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand)
      .resolvesOnce(item('p', 10, clock.at(), 1))
      .resolves(item('p', 4, clock.at(), 2));
    ddb.on(UpdateItemCommand).rejectsOnce(conflict()).resolves({});
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1 });
    expect((await budget.take(keyOf('AttachVolume'), 6)).granted).toBe(4);
    expect(ddb).toHaveReceivedCommandTimes(GetItemCommand, 2);
    expect(ddb.commandCalls(UpdateItemCommand)[1]!.args[0].input.ExpressionAttributeValues).toMatchObject({ ':version': { N: '2' } });
  });

  it('a write that landed but whose answer was lost (the SDK retry then fails the condition) -> recognised by its writer id, not taken twice', async () => {
    const clock = scriptedClock();
    let stored = item('p', 10, clock.at(), 1);
    ddb.on(GetItemCommand).callsFake(() => stored);
    ddb.on(UpdateItemCommand).callsFake((input: { ExpressionAttributeValues: Record<string, { S?: string; N?: string }> }) => {
      const v = input.ExpressionAttributeValues;
      stored = { Item: { ...item('p', Number(v[':tokens']!.N), clock.at(), Number(v[':next']!.N)).Item, writer: { S: v[':writer']!.S! } } } as typeof stored;
      throw conflict();
    });
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1 });
    expect((await budget.take(keyOf('AttachVolume'), 4)).granted).toBe(4);
    expect(ddb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
    expect(stored.Item.tokens).toEqual({ N: '6' });
  });

  it('lost every race -> after maxRaceAttempts, granted 0 with the wait for one token; no endless loop', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand).resolves(item('p', 30, clock.at(), 1));
    ddb.on(UpdateItemCommand).rejects(conflict());
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1, maxRaceAttempts: 3 });
    const grant = await budget.take(keyOf('AttachVolume'), 6);
    expect(grant.granted).toBe(0);
    expect([grant.waitMs(0), grant.waitMs(1)]).toEqual([200, 400]);
    expect(ddb).toHaveReceivedCommandTimes(GetItemCommand, 3);
    expect(ddb).toHaveReceivedCommandTimes(UpdateItemCommand, 3);
  });

  it('throttled -> the lowered factor and the decrease time written in the same item', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand).resolves(item('p', 30, clock.at(), 4));
    ddb.on(UpdateItemCommand).resolves({});
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1, aimd: { decrease: 0.5 } });
    await budget.throttled(keyOf('AttachVolume'));
    expect(ddb.commandCalls(UpdateItemCommand)[0]!.args[0].input.ExpressionAttributeValues).toMatchObject({
      ':factor': { N: '0.500000000' },
      ':tokens': { N: '0.000000000' },
      ':decreasedAt': { N: `${clock.at()}.000000000` },
      ':version': { N: '4' },
    });
  });

  it('the table refuses (missing, no permission…) -> BudgetUnavailableError naming the table and the cause', async () => {
    ddb.on(GetItemCommand).rejects(new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: {} }));
    const budget = createDynamoDbBudget({ tableName: TABLE, client });
    const err = await budget.take(keyOf('AttachVolume'), 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnavailableError);
    expect((err as Error).message).toMatch(/GetItem on DynamoDB table volhook-test-rate-budget failed \(ResourceNotFoundException: Requested resource not found\)/);
    await expect(budget.throttled(keyOf('AttachVolume'))).rejects.toBeInstanceOf(BudgetUnavailableError);
  });

  it('an item that is not a bucket state -> BudgetUnavailableError naming the attribute, nothing granted', async () => {
    ddb.on(GetItemCommand).resolves({ Item: { pk: { S: 'p' }, tokens: { N: '3' }, at: { N: '1' }, version: { N: '1' } } });
    const budget = createDynamoDbBudget({ tableName: TABLE, client });
    await expect(budget.take(keyOf('AttachVolume'), 1)).rejects.toThrow(/attribute factor is missing/);
    expect(ddb).toHaveReceivedCommandTimes(UpdateItemCommand, 0);
  });

  it('an item whose rate factor is 0 (a number, but no rate) -> BudgetUnavailableError, not an endless wait', async () => {
    const clock = scriptedClock();
    ddb.on(GetItemCommand).resolves({ Item: { ...item('acct1#eu-west-1#AttachVolume', 0, clock.at(), 3).Item, factor: { N: '0' } } });
    ddb.on(UpdateItemCommand).resolves({});
    const budget = createDynamoDbBudget({ tableName: TABLE, client, now: clock.now, share: 1 });
    const err = await budget.take(keyOf('AttachVolume', 'eu-west-1', 'acct1'), 2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnavailableError);
    expect((err as Error).message).toMatch(/rate budget of bucket acct1#eu-west-1#AttachVolume answered a wait of (NaN|Infinity) ms/);
    // Refused before the step's state is written back: nothing of it reaches the table.
    expect(ddb).toHaveReceivedCommandTimes(UpdateItemCommand, 0);
  });
});

describe('DynamoDB budget, store unreachable', () => {
  it('endpoint on a closed loopback port -> BudgetUnavailableError with a clear message, after the short client attempts', async () => {
    const port = await closedPort();
    const real = createBudgetDynamoDbClient({ region: 'eu-west-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    expect(await real.config.maxAttempts()).toBe(BUDGET_CLIENT_DEFAULTS.maxAttempts);
    const budget = createDynamoDbBudget({ tableName: TABLE, client: real });
    const err = await budget.take(keyOf('CreateVolume'), 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetUnavailableError);
    expect((err as Error).message).toMatch(/^rate budget unavailable: GetItem on DynamoDB table volhook-test-rate-budget failed \(.*ECONNREFUSED.*\); no EC2 call is made without a token$/);
    real.destroy();
  });

  it('endpoint that accepts connections and never answers -> BudgetUnavailableError once the short request timeouts pass, not a hang', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const real = createBudgetDynamoDbClient({ region: 'eu-west-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    try {
      const budget = createDynamoDbBudget({ tableName: TABLE, client: real });
      const err = await budget.take(keyOf('CreateVolume'), 3).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BudgetUnavailableError);
      expect((err as Error).message).toMatch(/GetItem on DynamoDB table volhook-test-rate-budget failed \(TimeoutError: /);
    } finally {
      real.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
