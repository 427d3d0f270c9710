/**
 * One suite for every report store: in memory, files, and DynamoDB (moto_server's, started on
 * a free 127.0.0.1 port, the table as serverless.yml declares it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Write } from '../../lib/contract/index.js';
import { createDynamoDbReportStore, createFileReportStore, createMemoryReportStore, type ReportStore, type StoredReport } from '../../lib/reports/index.js';
import { startMoto, type Moto } from '../e2e/support/moto.js';

let moto: Moto;
let client: DynamoDBClient;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'volhook-reports-'));
  moto = await startMoto();
  client = new DynamoDBClient({ region: 'us-east-1', endpoint: moto.url, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
}, 90_000);
afterAll(async () => {
  client?.destroy();
  await moto?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let tables = 0;
const stores: [string, () => Promise<ReportStore>][] = [
  ['memory', async () => createMemoryReportStore()],
  ['files', async () => createFileReportStore(await mkdtemp(join(dir, 'store-')))],
  [
    'DynamoDB (moto)',
    async () => {
      const TableName = `volhook-test-reports-${++tables}`;
      await client.send(
        new CreateTableCommand({ TableName, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }),
      );
      return createDynamoDbReportStore({ tableName: TableName, client });
    },
  ],
];

const report = (clusterId: string, digest: string, observedAt: number, claims: string[] = []): StoredReport => ({
  clusterId,
  digest,
  observedAt,
  report: { volumes: [{ pv: 'pvc-1', volumeId: 'vol-00000000000000001', reclaimPolicy: 'Retain', claim: { namespace: 'ns', name: 'c' } }], attachments: [], claims },
});
const event = (reason: string): Write => ({ op: 'createEvent', involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name: 'pvc-1' }, type: 'Warning', reason, message: 'm' });

describe.each(stores)('report store: %s', (_name, make) => {
  it('put -> get it back; an older report arriving late -> refused, the newer kept', async () => {
    const store = await make();
    expect(await store.get('c1')).toBeUndefined();
    expect(await store.put(report('c1', 'a'.repeat(64), 2000, ['u1']))).toBe(true);
    expect(await store.put(report('c1', 'b'.repeat(64), 1000))).toBe(false);
    expect(await store.get('c1')).toEqual(report('c1', 'a'.repeat(64), 2000, ['u1']));
  });

  it('confirm with the stored digest -> observedAt moves on; with another digest -> false, nothing changes', async () => {
    const store = await make();
    await store.put(report('c1', 'a'.repeat(64), 1000));
    expect(await store.confirm('c1', 'a'.repeat(64), 5000)).toBe(true);
    expect((await store.get('c1'))?.observedAt).toBe(5000);
    expect(await store.confirm('c1', 'a'.repeat(64), 4000)).toBe(true);
    expect((await store.get('c1'))?.observedAt).toBe(5000);
    expect(await store.confirm('c1', 'c'.repeat(64), 9000)).toBe(false);
    expect(await store.confirm('c2', 'a'.repeat(64), 9000)).toBe(false);
    expect((await store.get('c1'))?.observedAt).toBe(5000);
  });

  it('events queued -> taken once, in order; a report written meanwhile keeps them', async () => {
    const store = await make();
    await store.queueEvents('c1', [event('A')]);
    await store.put(report('c1', 'a'.repeat(64), 1000));
    await store.queueEvents('c1', [event('B')]);
    expect((await store.takeEvents('c1')).map((e) => (e.op === 'createEvent' ? e.reason : ''))).toEqual(['A', 'B']);
    expect(await store.takeEvents('c1')).toEqual([]);
    expect((await store.get('c1'))?.digest).toBe('a'.repeat(64));
  });

  it('clusters -> every cluster with a report, sorted (events alone do not count)', async () => {
    const store = await make();
    await store.put(report('b', 'a'.repeat(64), 1));
    await store.put(report('a', 'a'.repeat(64), 1));
    await store.queueEvents('z', [event('A')]);
    expect(await store.clusters()).toEqual(['a', 'b']);
  });
});
