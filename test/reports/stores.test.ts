/**
 * One suite for every report store: in memory, files, and DynamoDB (moto_server's, started on
 * a free 127.0.0.1 port, the table as serverless.yml declares it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DeleteItemCommand, DynamoDBClient, GetItemCommand, ScanCommand, UpdateItemCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalReport, reportDigest, splitReport, type VolumeReport, type Write } from '../../lib/contract/index.js';
import { createDynamoDbReportStore, createFileReportStore, createMemoryReportStore, REFUSAL_RECORD_INTERVAL_MS, VERIFIED_RECORD_INTERVAL_MS, type ReportStore, type StoredReport } from '../../lib/reports/index.js';
import { PART_TTL_SECONDS } from '../../lib/reports/dynamodb.js';
import { bigReport } from '../contract/big-report.js';
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
/** A reports table as serverless.yml declares it: keyed by `pk`, TTL on `expiresAt`. */
async function reportsTable(): Promise<string> {
  const TableName = `volhook-test-reports-${++tables}`;
  await client.send(
    new CreateTableCommand({ TableName, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }),
  );
  await client.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } }));
  return TableName;
}

const stores: [string, () => Promise<ReportStore>][] = [
  ['memory', async () => createMemoryReportStore()],
  ['files', async () => createFileReportStore(await mkdtemp(join(dir, 'store-')))],
  ['DynamoDB (moto)', async () => createDynamoDbReportStore({ tableName: await reportsTable(), client })],
];

const report = (clusterId: string, digest: string, observedAt: number, claims: string[] = [], receivedAt = observedAt + 7): StoredReport => ({
  clusterId,
  digest,
  observedAt,
  receivedAt,
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

  it('confirm with the stored digest -> observedAt and receivedAt move on together; an earlier observedAt -> nothing moves; without receivedAt (a part sent again) -> only observedAt; another digest -> false, nothing changes', async () => {
    const store = await make();
    await store.put(report('c1', 'a'.repeat(64), 1000));
    const times = async () => {
      const stored = await store.get('c1');
      return [stored?.observedAt, stored?.receivedAt];
    };
    expect(await times()).toEqual([1000, 1007]);
    expect(await store.confirm('c1', 'a'.repeat(64), 5000, 5100)).toBe(true);
    expect(await times()).toEqual([5000, 5100]);
    expect(await store.confirm('c1', 'a'.repeat(64), 4000, 9900)).toBe(true);
    expect(await times()).toEqual([5000, 5100]);
    expect(await store.confirm('c1', 'a'.repeat(64), 6000)).toBe(true);
    expect(await times()).toEqual([6000, 5100]);
    expect(await store.confirm('c1', 'c'.repeat(64), 9000, 9000)).toBe(false);
    expect(await store.confirm('c2', 'a'.repeat(64), 9000, 9000)).toBe(false);
    expect(await times()).toEqual([6000, 5100]);
  });

  it('marks -> per cluster; a resource marked again keeps its first mark; unmarked -> gone (an unknown one is no error); an ID not a volume\'s or snapshot\'s -> refused', async () => {
    const store = await make();
    expect(await store.marks('c1')).toEqual(new Map());
    await store.mark('c1', new Map([['vol-0000000000000000a', 1000], ['snap-0000000000000000b', 1100]]));
    await store.mark('c1', new Map([['vol-0000000000000000a', 2000], ['vol-0000000000000000c', 2100]]));
    await store.mark('c2', new Map([['vol-0000000000000000a', 3000]]));
    expect(await store.marks('c1')).toEqual(new Map([['vol-0000000000000000a', 1000], ['snap-0000000000000000b', 1100], ['vol-0000000000000000c', 2100]]));
    await store.unmark('c1', ['vol-0000000000000000a', 'vol-0000000000000000f']);
    expect(await store.marks('c1')).toEqual(new Map([['snap-0000000000000000b', 1100], ['vol-0000000000000000c', 2100]]));
    expect(await store.marks('c2')).toEqual(new Map([['vol-0000000000000000a', 3000]]));
    await expect(store.mark('c1', new Map([['../../etc/passwd', 1]]))).rejects.toThrow('not an EBS volume or snapshot ID');
    // More than one request's worth (DynamoDB: 50 a request).
    const many = new Map(Array.from({ length: 120 }, (_, i) => [`vol-${i.toString(16).padStart(17, '0')}`, 5000 + i] as const));
    await store.mark('c3', many);
    expect(await store.marks('c3')).toEqual(many);
    await store.unmark('c3', [...many.keys()]);
    expect(await store.marks('c3')).toEqual(new Map());
    // Marks are not a report: no cluster to audit.
    expect(await store.clusters()).toEqual([]);
  });

  it('retained -> per cluster, added and released element by element; an ID not a volume\'s or snapshot\'s -> refused', async () => {
    const store = await make();
    expect(await store.retained('c1')).toEqual(new Set());
    await store.retain('c1', ['vol-0000000000000000a', 'snap-0000000000000000b']);
    await store.retain('c1', ['vol-0000000000000000a', 'vol-0000000000000000c']);
    await store.retain('c2', ['vol-0000000000000000d']);
    await store.release('c1', ['vol-0000000000000000c', 'vol-0000000000000000e']);
    await store.release('c1', []);
    await store.retain('c1', []);
    expect(await store.retained('c1')).toEqual(new Set(['vol-0000000000000000a', 'snap-0000000000000000b']));
    expect(await store.retained('c2')).toEqual(new Set(['vol-0000000000000000d']));
    await expect(store.retain('c1', ['vol-../x'])).rejects.toThrow('not an EBS volume or snapshot ID');
    expect(await store.clusters()).toEqual([]);
  });

  it('retain and release at once, many times over (the backend retaining while an audit releases) -> none lost', async () => {
    const store = await make();
    const ids = Array.from({ length: 40 }, (_, i) => `vol-${i.toString(16).padStart(17, '0')}`);
    await store.retain('c1', ids.slice(20));
    await Promise.all([...ids.slice(0, 20).map((id) => store.retain('c1', [id])), ...ids.slice(20, 30).map((id) => store.release('c1', [id]))]);
    expect([...(await store.retained('c1'))].sort()).toEqual([...ids.slice(0, 20), ...ids.slice(30)].sort());
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

  it('refused -> the latest refusal per cluster, replaced only by one over the recording interval later (never by an earlier one); a report written since keeps it', async () => {
    const store = await make();
    const T = Date.UTC(2026, 11, 1, 12);
    await store.put(report('c1', 'a'.repeat(64), T - 5000));
    await store.put(report('c2', 'a'.repeat(64), T - 5000));
    expect(await store.lastRefusal('c1')).toBeUndefined();
    await store.refused('c1', { at: T, status: 401, code: 'bad_signature' });
    expect(await store.lastRefusal('c1')).toEqual({ at: T, status: 401, code: 'bad_signature' });
    expect(await store.lastRefusal('c2')).toBeUndefined();
    // Within the interval: not written (a flood costs one write a minute).
    await store.refused('c1', { at: T + REFUSAL_RECORD_INTERVAL_MS - 1, status: 403, code: 'registration_invalid' });
    expect(await store.lastRefusal('c1')).toEqual({ at: T, status: 401, code: 'bad_signature' });
    // An earlier one arriving late: not written.
    await store.refused('c1', { at: T - 10 * REFUSAL_RECORD_INTERVAL_MS, status: 426, code: 'contract_unsupported' });
    expect((await store.lastRefusal('c1'))?.at).toBe(T);
    // The interval after the held one: written.
    await store.refused('c1', { at: T + REFUSAL_RECORD_INTERVAL_MS, status: 413, code: 'body_too_large' });
    expect(await store.lastRefusal('c1')).toEqual({ at: T + REFUSAL_RECORD_INTERVAL_MS, status: 413, code: 'body_too_large' });
    // The report replaced and confirmed since: the refusal stays (the audit compares the two).
    await store.put(report('c1', 'b'.repeat(64), T + 2 * REFUSAL_RECORD_INTERVAL_MS));
    await store.confirm('c1', 'b'.repeat(64), T + 3 * REFUSAL_RECORD_INTERVAL_MS, T + 3 * REFUSAL_RECORD_INTERVAL_MS);
    expect((await store.lastRefusal('c1'))?.at).toBe(T + REFUSAL_RECORD_INTERVAL_MS);
  });

  it('refused for a cluster without a report (an id anyone may name) -> nothing kept; the control: once it has a report -> kept', async () => {
    const store = await make();
    await store.refused('made-up', { at: 5000, status: 401, code: 'bad_signature' });
    expect(await store.lastRefusal('made-up')).toBeUndefined();
    expect(await store.clusters()).toEqual([]);
    await store.put(report('made-up', 'a'.repeat(64), 1000));
    await store.refused('made-up', { at: 5000, status: 401, code: 'bad_signature' });
    expect(await store.lastRefusal('made-up')).toEqual({ at: 5000, status: 401, code: 'bad_signature' });
  });

  it('verifiedWith -> per cluster and fingerprint, replaced only by one over the recording interval later (never by an earlier one); a report written since keeps it; a key not a fingerprint -> refused', async () => {
    const store = await make();
    const T = Date.UTC(2026, 11, 1, 12);
    const A = 'sha256:aaaaaaaaaaaa';
    const B = 'sha256:bbbbbbbbbbbb';
    expect(await store.verifiedBy('c1')).toEqual({});
    await store.verifiedWith('c1', A, T);
    await store.verifiedWith('c1', B, T + 5);
    await store.verifiedWith('c2', A, T + 7);
    expect(await store.verifiedBy('c1')).toEqual({ [A]: T, [B]: T + 5 });
    expect(await store.verifiedBy('c2')).toEqual({ [A]: T + 7 });
    // Within the interval: not written.
    await store.verifiedWith('c1', A, T + VERIFIED_RECORD_INTERVAL_MS - 1);
    // An earlier one arriving late: not written.
    await store.verifiedWith('c1', A, T - 10 * VERIFIED_RECORD_INTERVAL_MS);
    expect(await store.verifiedBy('c1')).toEqual({ [A]: T, [B]: T + 5 });
    // The interval after the held one: written, the other fingerprint kept.
    await store.verifiedWith('c1', A, T + VERIFIED_RECORD_INTERVAL_MS);
    expect(await store.verifiedBy('c1')).toEqual({ [A]: T + VERIFIED_RECORD_INTERVAL_MS, [B]: T + 5 });
    // A report written and confirmed since: the times stay; the cluster is listed only for its report.
    await store.put(report('c1', 'a'.repeat(64), T));
    await store.confirm('c1', 'a'.repeat(64), T + 1, T + 1);
    expect(await store.verifiedBy('c1')).toEqual({ [A]: T + VERIFIED_RECORD_INTERVAL_MS, [B]: T + 5 });
    expect(await store.clusters()).toEqual(['c1']);
    await expect(store.verifiedWith('c1', 'verifiedBy', T)).rejects.toThrow(/not a secret fingerprint/);
  });

  /** A report of `n` PVs in parts, as the forwarder splits it, with what the store needs to keep each. */
  const inParts = (clusterId: string, n: number, observedAt: number, maxBytes?: number) => {
    const whole = canonicalReport(bigReport(n));
    const digest = reportDigest(whole);
    const parts = splitReport(whole, maxBytes).map((report, index, all) => ({ clusterId, digest, index, count: all.length, observedAt, receivedAt: observedAt + 10 + index, report }));
    return { whole, digest, parts };
  };

  it('a part sent again -> keeps the time it was first received at', async () => {
    const store = await make();
    const { digest, parts } = inParts('c1', 300, 1000, 16 * 1024);
    await store.putPart(parts[0]!);
    await store.putPart({ ...parts[0]!, receivedAt: 99_000 });
    expect((await store.parts('c1', digest, parts.length))[0]?.receivedAt).toBe(parts[0]!.receivedAt);
  });

  it('parts -> kept apart by digest, counted as they come; the cluster\'s report only once complete, until then the last complete one', async () => {
    const store = await make();
    await store.put(report('c1', 'a'.repeat(64), 1000, ['u1']));
    const next = inParts('c1', 300, 2000, 16 * 1024);
    const other = inParts('c1', 301, 2500, 16 * 1024);
    expect(next.parts.length).toBeGreaterThan(3);
    // Parts of two reports interleaved, one index twice.
    const counts: number[] = [];
    for (const [i, part] of next.parts.slice(0, -1).entries()) {
      counts.push(await store.putPart(part));
      await store.putPart(other.parts[i] as (typeof other.parts)[number]);
    }
    expect(counts).toEqual(next.parts.slice(0, -1).map((_, i) => i + 1));
    expect(await store.putPart(next.parts[0] as (typeof next.parts)[number])).toBe(next.parts.length - 1);
    const held = await store.parts('c1', next.digest, next.parts.length);
    expect(held.map((p) => p?.index)).toEqual([...next.parts.slice(0, -1).map((p) => p.index), undefined]);
    expect(held[0]).toEqual(next.parts[0]);
    // Incomplete: the audit still reads the last complete report.
    expect((await store.get('c1'))?.digest).toBe('a'.repeat(64));
    expect(await store.putPart(next.parts.at(-1) as (typeof next.parts)[number])).toBe(next.parts.length);
    expect(await store.complete('c1', next.digest, next.parts.length, 2000, 2010)).toBe(true);
    // Two requests carrying the same last part: the second completes nothing more, and says so without failing.
    expect(await store.complete('c1', next.digest, next.parts.length, 2000, 2010)).toBe(true);
    expect(await store.get('c1')).toEqual({ clusterId: 'c1', digest: next.digest, observedAt: 2000, receivedAt: 2010, report: next.whole });
    expect(await store.confirm('c1', next.digest, 3000, 3001)).toBe(true);
    expect(await store.get('c1')).toMatchObject({ observedAt: 3000, receivedAt: 3001 });
    expect(await store.clusters()).toEqual(['c1']);
  });

  it('a report in parts observed before the kept one -> not kept; a whole one after it -> replaces it, its parts let go', async () => {
    const store = await make();
    const later = inParts('c1', 200, 5000, 8 * 1024);
    for (const part of later.parts) await store.putPart(part);
    expect(await store.complete('c1', later.digest, later.parts.length, 5000, 5010)).toBe(true);
    const earlier = inParts('c1', 201, 4000, 8 * 1024);
    for (const part of earlier.parts) await store.putPart(part);
    expect(await store.complete('c1', earlier.digest, earlier.parts.length, 4000, 4010)).toBe(false);
    expect((await store.get('c1'))?.digest).toBe(later.digest);
    expect(await store.put(report('c1', 'b'.repeat(64), 6000))).toBe(true);
    expect(await store.get('c1')).toEqual(report('c1', 'b'.repeat(64), 6000));
    expect((await store.parts('c1', later.digest, later.parts.length)).every((p) => p === undefined)).toBe(true);
  });

  it('20,000 PVs with their claims and attachments in parts -> kept and read back exactly', async () => {
    const store = await make();
    const big = inParts('c1', 20_000, 7000);
    expect(big.parts.length).toBeGreaterThan(10);
    for (const part of big.parts) await store.putPart(part);
    expect(await store.complete('c1', big.digest, big.parts.length, 7000, 7010)).toBe(true);
    const stored = await store.get('c1');
    expect(stored?.digest).toBe(big.digest);
    expect(reportDigest(stored?.report as VolumeReport)).toBe(big.digest);
    expect(stored?.report).toEqual(big.whole);
  }, 120_000);
});

describe('reports kept before the backend recorded when it received them', () => {
  it('a report file without receivedAt -> read with receivedAt 0 (it speaks for no time)', async () => {
    const reportsDir = await mkdtemp(join(dir, 'old-'));
    const { writeFile } = await import('node:fs/promises');
    const old = report('c1', 'a'.repeat(64), 1000);
    const { receivedAt: _dropped, ...written } = old;
    await writeFile(join(reportsDir, 'c1.report.json'), JSON.stringify(written));
    expect(await createFileReportStore(reportsDir).get('c1')).toEqual({ ...old, receivedAt: 0 });
  });

  it('a DynamoDB item without receivedAt -> read with receivedAt 0; the next confirmation dates it', async () => {
    const TableName = await reportsTable();
    const store = createDynamoDbReportStore({ tableName: TableName, client });
    await store.put(report('c1', 'a'.repeat(64), 1000));
    await client.send(new UpdateItemCommand({ TableName, Key: { pk: { S: 'c1' } }, UpdateExpression: 'REMOVE receivedAt' }));
    expect((await store.get('c1'))?.receivedAt).toBe(0);
    await store.confirm('c1', 'a'.repeat(64), 2000, 2005);
    expect(await store.get('c1')).toMatchObject({ observedAt: 2000, receivedAt: 2005 });
  });
});

describe('refusals across processes', () => {
  it('files: the backend records a refusal, the CLI\'s audit (another store over the directory) reads it', async () => {
    const reportsDir = await mkdtemp(join(dir, 'refusals-'));
    const backend = createFileReportStore(reportsDir);
    await backend.put(report('c1', 'a'.repeat(64), 1000));
    await backend.refused('c1', { at: 90_000, status: 401, code: 'bad_signature' });
    expect(await createFileReportStore(reportsDir).lastRefusal('c1')).toEqual({ at: 90_000, status: 401, code: 'bad_signature' });
  });

  it('DynamoDB: a flood of refusals -> one UpdateItem per interval from one store; another store (container) within the interval -> refused by the condition, the held one kept; no item for an id without a report', async () => {
    const TableName = await reportsTable();
    let updates = 0;
    const counting = { send: (command: Parameters<DynamoDBClient['send']>[0]) => {
      if (command instanceof UpdateItemCommand) updates += 1;
      return client.send(command);
    } } as unknown as DynamoDBClient;
    const store = createDynamoDbReportStore({ tableName: TableName, client: counting });
    await store.put(report('c1', 'a'.repeat(64), 1000));
    updates = 0;
    const T = 1_000_000;
    for (let n = 0; n < 100; n++) await store.refused('c1', { at: T + n * 500, status: 401, code: 'bad_signature' });
    expect(updates).toBe(1);
    expect(await store.lastRefusal('c1')).toEqual({ at: T, status: 401, code: 'bad_signature' });
    await store.refused('c1', { at: T + REFUSAL_RECORD_INTERVAL_MS, status: 401, code: 'bad_signature' });
    expect(updates).toBe(2);
    const other = createDynamoDbReportStore({ tableName: TableName, client: counting });
    await other.refused('c1', { at: T + REFUSAL_RECORD_INTERVAL_MS + 1000, status: 403, code: 'registration_invalid' });
    expect(await store.lastRefusal('c1')).toEqual({ at: T + REFUSAL_RECORD_INTERVAL_MS, status: 401, code: 'bad_signature' });
    expect(updates).toBe(3);
    // Its refused write told it the time held: it does not try again within the interval of that one, and does after it.
    await other.refused('c1', { at: T + 2 * REFUSAL_RECORD_INTERVAL_MS - 1, status: 403, code: 'registration_invalid' });
    expect(updates).toBe(3);
    await other.refused('c1', { at: T + 2 * REFUSAL_RECORD_INTERVAL_MS, status: 403, code: 'registration_invalid' });
    expect(updates).toBe(4);
    expect(await store.lastRefusal('c1')).toEqual({ at: T + 2 * REFUSAL_RECORD_INTERVAL_MS, status: 403, code: 'registration_invalid' });
    // A refusal for an id without a report remembers nothing: once it has a report, the next one is written.
    await other.refused('c2', { at: T, status: 401, code: 'bad_signature' });
    await store.put(report('c2', 'a'.repeat(64), 1000));
    await other.refused('c2', { at: T + 1000, status: 401, code: 'bad_signature' });
    expect(await store.lastRefusal('c2')).toEqual({ at: T + 1000, status: 401, code: 'bad_signature' });
    // The report item keeps its report: the refusal is three attributes beside it.
    expect((await store.get('c1'))?.digest).toBe('a'.repeat(64));
    await store.refused('nobody', { at: T, status: 401, code: 'bad_signature' });
    const pks = ((await client.send(new ScanCommand({ TableName, ConsistentRead: true }))).Items ?? []).map((i) => i.pk?.S);
    expect(pks.sort()).toEqual(['c1', `c1#whole#${'a'.repeat(64)}`, 'c2', `c2#whole#${'a'.repeat(64)}`]);
  });
});

describe('report store: DynamoDB (moto), what each request writes', () => {
  /** The store over a client that counts the write commands it sends, by the item each names. */
  const counted = async () => {
    const TableName = await reportsTable();
    const writes: { command: string; pk: string[] }[] = [];
    const counting = {
      send: (command: Parameters<DynamoDBClient['send']>[0]) => {
        const input = command.input as { Key?: { pk?: { S?: string } }; TransactItems?: Record<string, { Key?: { pk?: { S?: string } }; Item?: { pk?: { S?: string } } }>[] };
        const name = command.constructor.name;
        if (name === 'UpdateItemCommand' || name === 'PutItemCommand' || name === 'DeleteItemCommand') writes.push({ command: name, pk: [input.Key?.pk?.S ?? ''] });
        if (name === 'TransactWriteItemsCommand') writes.push({ command: name, pk: (input.TransactItems ?? []).map((t) => Object.values(t)[0]?.Key?.pk?.S ?? Object.values(t)[0]?.Item?.pk?.S ?? '') });
        return client.send(command);
      },
    } as unknown as DynamoDBClient;
    return { TableName, writes, store: createDynamoDbReportStore({ tableName: TableName, client: counting }) };
  };
  /** Every item of the table with the bytes DynamoDB bills a write of it by (names and values). */
  const itemSizes = async (TableName: string) =>
    Object.fromEntries(
      ((await client.send(new ScanCommand({ TableName, ConsistentRead: true }))).Items ?? []).map((item) => [
        item.pk?.S ?? '',
        Object.entries(item).reduce((sum, [name, value]) => sum + name.length + (value.B?.length ?? JSON.stringify(value).length), 0),
      ]),
    );

  it('a report of 5,000 PVs kept whole -> in an item of its own; the cluster\'s item, which every confirmation, Events take and record writes, stays under 1 KB', async () => {
    const { TableName, store, writes } = await counted();
    const whole = canonicalReport(bigReport(5000));
    const digest = reportDigest(whole);
    expect(await store.put({ clusterId: 'c1', digest, observedAt: 1000, receivedAt: 1000, report: whole })).toBe(true);
    writes.length = 0;
    expect(await store.confirm('c1', digest, 2000, 2000)).toBe(true);
    await store.verifiedWith('c1', 'sha256:ffffffffffff', 2000);
    await store.refused('c1', { at: 2000, status: 401, code: 'bad_signature' });
    await store.queueEvents('c1', [event('VolumeLost')]);
    expect(await store.takeEvents('c1')).toEqual([event('VolumeLost')]);
    expect(writes.length).toBeGreaterThanOrEqual(5);
    expect(writes.every((w) => w.pk.length === 1 && w.pk[0] === 'c1')).toBe(true);
    const sizes = await itemSizes(TableName);
    expect(sizes['c1']).toBeLessThan(1024);
    // The control: the report is there, and large.
    expect(sizes[`c1#whole#${digest}`]).toBeGreaterThan(20 * 1024);
    expect((await store.get('c1'))?.report).toEqual(whole);
  });

  it('a confirmation that finds no Events queued -> taking them right after writes nothing; Events queued -> the confirmation sees them and they are taken', async () => {
    const { TableName, store, writes } = await counted();
    const stored = report('c1', 'a'.repeat(64), 1000);
    await store.put(stored);
    writes.length = 0;
    expect(await store.confirm('c1', stored.digest, 2000, 2000)).toBe(true);
    expect(await store.takeEvents('c1')).toEqual([]);
    expect(writes.map((w) => w.command)).toEqual(['UpdateItemCommand']);
    // Queued by another store (the audit's process): this one learns it from its next confirmation.
    writes.length = 0;
    const audit = createDynamoDbReportStore({ tableName: TableName, client });
    await audit.queueEvents('c1', [event('VolumeLost')]);
    expect(await store.confirm('c1', stored.digest, 3000, 3000)).toBe(true);
    expect(await store.takeEvents('c1')).toEqual([event('VolumeLost')]);
    expect(writes.map((w) => w.command)).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
  });

  it('reports replaced whole -> the one replaced deleted; the same report kept again -> stays; a late one (observed earlier) -> refused, nothing of it left; parts after a whole one -> the whole one deleted', async () => {
    const { TableName, store } = await counted();
    const pks = async () => Object.keys(await itemSizes(TableName)).sort();
    const [a, b, late] = ['a', 'b', 'c'].map((x) => x.repeat(64)) as [string, string, string];
    await store.put(report('c1', a, 1000));
    await store.put(report('c1', a, 2000));
    expect(await pks()).toEqual(['c1', `c1#whole#${a}`]);
    expect((await store.get('c1'))?.digest).toBe(a);
    await store.put(report('c1', b, 3000, ['u2']));
    expect(await pks()).toEqual(['c1', `c1#whole#${b}`]);
    expect(await store.put(report('c1', late, 2500))).toBe(false);
    expect(await pks()).toEqual(['c1', `c1#whole#${b}`]);
    expect(await store.get('c1')).toEqual(report('c1', b, 3000, ['u2']));
    // In parts: the whole one goes once they are the cluster's report.
    const whole = canonicalReport(bigReport(200));
    const digest = reportDigest(whole);
    const parts = splitReport(whole, 8 * 1024);
    for (const [index, part] of parts.entries()) await store.putPart({ clusterId: 'c1', digest, index, count: parts.length, observedAt: 4000, receivedAt: 4000, report: part });
    expect(await store.complete('c1', digest, parts.length, 4000, 4000)).toBe(true);
    expect((await pks()).filter((pk) => pk.includes('#whole#'))).toEqual([]);
    expect((await store.get('c1'))?.report).toEqual(whole);
  });
});

describe('report store: DynamoDB (moto), the parts\' expiry', () => {
  const NOW = Date.UTC(2026, 11, 1, 12);
  const items = async (TableName: string) =>
    ((await client.send(new ScanCommand({ TableName, ConsistentRead: true }))).Items ?? []).map((item) => ({ pk: item.pk?.S ?? '', expiresAt: item.expiresAt?.N }));
  const partsOf = (all: { pk: string; expiresAt?: string }[], digest: string) => all.filter((i) => i.pk.includes(`#part#${digest}#`) || i.pk.endsWith(`#parts#${digest}`));
  const split = (clusterId: string, n: number, observedAt: number) => {
    const whole = canonicalReport(bigReport(n));
    const digest = reportDigest(whole);
    return { whole, digest, parts: splitReport(whole, 8 * 1024).map((report, index, all) => ({ clusterId, digest, index, count: all.length, observedAt, receivedAt: observedAt, report })) };
  };

  it('parts and their count expire a day after they were sent; completing takes the expiry off the parts; a part of the completed report sent again stays without one', async () => {
    const TableName = await reportsTable();
    let now = NOW;
    const store = createDynamoDbReportStore({ tableName: TableName, client, now: () => now });
    const kept = split('c1', 120, 1000);
    const abandoned = split('c1', 121, 1500);
    expect(kept.parts.length).toBeGreaterThan(2);
    for (const part of kept.parts) await store.putPart(part);
    for (const part of abandoned.parts.slice(0, 2)) await store.putPart(part);
    const due = String(NOW / 1000 + PART_TTL_SECONDS);
    const before = await items(TableName);
    expect(partsOf(before, kept.digest)).toHaveLength(kept.parts.length + 1);
    expect(partsOf(before, kept.digest).every((i) => i.expiresAt === due)).toBe(true);
    expect(partsOf(before, abandoned.digest).map((i) => i.expiresAt)).toEqual([due, due, due]);

    now += 60_000;
    expect(await store.complete('c1', kept.digest, kept.parts.length, 1000, 1000)).toBe(true);
    const after = await items(TableName);
    // The parts are the report now: none expires; the count of parts went; the abandoned report's parts still expire.
    expect(partsOf(after, kept.digest).map((i) => i.expiresAt)).toEqual(kept.parts.map(() => undefined));
    expect(after.some((i) => i.pk === `c1#parts#${kept.digest}`)).toBe(false);
    expect(partsOf(after, abandoned.digest).map((i) => i.expiresAt)).toEqual([due, due, due]);
    expect(after.find((i) => i.pk === 'c1')?.expiresAt).toBeUndefined();

    // A lost answer: the forwarder sends part 1 again after the report was completed.
    now += 60_000;
    await store.putPart(kept.parts[1]!);
    const part1 = await client.send(new GetItemCommand({ TableName, Key: { pk: { S: `c1#part#${kept.digest}#1` } }, ConsistentRead: true }));
    expect(part1.Item?.expiresAt).toBeUndefined();
    expect(part1.Item?.partBody?.B).toBeDefined();
    expect((await store.get('c1'))?.report).toEqual(kept.whole);
  });

  it('a part gone before the report completes (as the TTL deletes it) -> refused naming the report, the last complete report kept, the rest of its parts deleted', async () => {
    const TableName = await reportsTable();
    const store = createDynamoDbReportStore({ tableName: TableName, client, now: () => NOW });
    const first = split('c1', 50, 1000);
    for (const part of first.parts) await store.putPart(part);
    expect(await store.complete('c1', first.digest, first.parts.length, 1000, 1000)).toBe(true);
    const next = split('c1', 60, 2000);
    for (const part of next.parts) await store.putPart(part);
    await client.send(new DeleteItemCommand({ TableName, Key: { pk: { S: `c1#part#${next.digest}#1` } } }));
    await expect(store.complete('c1', next.digest, next.parts.length, 2000, 2000)).rejects.toThrow(`the volume report ${next.digest} of cluster "c1" is not all kept: parts are missing`);
    expect(await store.get('c1')).toEqual({ clusterId: 'c1', digest: first.digest, observedAt: 1000, receivedAt: 1000, report: first.whole });
    const left = await items(TableName);
    expect(partsOf(left, next.digest)).toEqual([]);
    expect(partsOf(left, first.digest)).toHaveLength(first.parts.length);
  });
});
