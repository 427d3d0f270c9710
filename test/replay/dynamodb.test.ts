/**
 * The DynamoDB replay store against moto_server's DynamoDB (a real DynamoDB API, started on a
 * free 127.0.0.1 port; the test fails if moto_server is missing). moto, like DynamoDB within
 * its TTL lag, keeps expired items: the store must accept their ids again.
 */
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/app/index.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { createDynamoDbReplayStore, replayStoreFromEnvironment, type ReplayStore } from '../../lib/replay/index.js';
import { fixtureBody, NOW_MS, registration, SECRET_C1, signedRequest } from '../app/harness.js';
import { startMoto, type Moto } from '../e2e/support/moto.js';

const TABLE = 'volhook-test-webhook-ids';
const T = 1_800_000_000;
let moto: Moto;
let client: DynamoDBClient;
let store: ReplayStore;

beforeAll(async () => {
  moto = await startMoto();
  client = new DynamoDBClient({ region: 'us-east-1', endpoint: moto.url, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  // The table as serverless.yml declares it.
  await client.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  store = createDynamoDbReplayStore({ tableName: TABLE, client });
}, 90_000);

afterAll(async () => {
  client?.destroy();
  await moto?.stop();
});

const expiryOf = async (pk: string) => (await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk } } }))).Item?.expiresAt?.N;

describe('createDynamoDbReplayStore over moto', () => {
  it('a key -> accepted once and stored with expiresAt in epoch seconds; again within its expiry -> refused', async () => {
    expect(await store.recordOnce('c1#msg_a', T + 300, T)).toBe(true);
    expect(await expiryOf('c1#msg_a')).toBe(String(T + 300));
    expect(await store.recordOnce('c1#msg_a', T + 300, T + 20)).toBe(false);
    expect(await store.recordOnce('c1#msg_a', T + 300, T + 300)).toBe(false);
    expect(await expiryOf('c1#msg_a')).toBe(String(T + 300));
  });

  it('the same webhook id of another cluster -> its own key, accepted', async () => {
    expect(await store.recordOnce('c1#msg_b', T + 300, T)).toBe(true);
    expect(await store.recordOnce('c2#msg_b', T + 300, T)).toBe(true);
  });

  it('an expired item TTL has not removed yet -> accepted again, with the new expiry; then refused', async () => {
    await client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'c1#msg_old' }, expiresAt: { N: String(T - 1) } } }));
    expect(await store.recordOnce('c1#msg_old', T + 300, T)).toBe(true);
    expect(await expiryOf('c1#msg_old')).toBe(String(T + 300));
    expect(await store.recordOnce('c1#msg_old', T + 300, T + 1)).toBe(false);
  });

  it('past its own expiry (the item still present) -> accepted again', async () => {
    expect(await store.recordOnce('c1#msg_c', T + 300, T)).toBe(true);
    expect(await store.recordOnce('c1#msg_c', T + 601, T + 301)).toBe(true);
  });

  it('the table missing -> the error surfaces (the request fails closed, nothing recorded as new)', async () => {
    const missing = createDynamoDbReplayStore({ tableName: 'no-such-table', client });
    await expect(missing.recordOnce('c1#msg_d', T + 300, T)).rejects.toThrow();
  });

  it('VOLHOOK_REPLAY_TABLE -> the DynamoDB store on that table (endpoint from AWS_ENDPOINT_URL_DYNAMODB)', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: moto.url, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
    try {
      const fromEnv = replayStoreFromEnvironment({ VOLHOOK_REPLAY_TABLE: TABLE });
      expect(await fromEnv.recordOnce('c1#msg_env', T + 300, T)).toBe(true);
      expect(await store.recordOnce('c1#msg_env', T + 300, T)).toBe(false);
    } finally {
      process.env = saved;
    }
  });
});

describe('two backend instances (two Lambda containers) sharing the table', () => {
  it('a request accepted by one, replayed to the other 20 s later -> 409 replayed, no EC2 call', async () => {
    const ec2Mock = mockClient(EC2Client);
    try {
      ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
      ec2Mock.on(CreateVolumeCommand).resolves({ VolumeId: 'vol-0123456789abcdef0', AvailabilityZone: 'us-east-1a', Size: 20, State: 'creating', VolumeType: 'gp3' });
      const ec2 = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' }, maxAttempts: 1 });
      const clock = { ms: NOW_MS };
      const container = () =>
        createApp({
          registry: createStaticRegistry([registration('c1', SECRET_C1)]),
          replay: createDynamoDbReplayStore({ tableName: TABLE, client }),
          gatewayFor: (reg, deadline) => createEc2Gateway({ client: ec2, clusterId: reg.clusterId, deadline }),
          now: () => clock.ms,
        });
      const [first, second] = [container(), container()];
      const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', fixtureBody, SECRET_C1);

      expect((await first.request(path, init)).status).toBe(200);
      ec2Mock.resetHistory();
      clock.ms += 20_000;
      const replayed = await second.request(path, init);
      expect(replayed.status).toBe(409);
      expect(((await replayed.json()) as { error: { code: string } }).error.code).toBe('replayed');
      expect(ec2Mock.calls()).toEqual([]);
    } finally {
      ec2Mock.restore();
    }
  });
});
