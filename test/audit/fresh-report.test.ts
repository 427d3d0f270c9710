/**
 * The scenario end to end through the backend's API: a leaked disk marked, made due by
 * the next resync; then the cluster's requests are refused (a wrongly rotated Secret) while an
 * administrator makes a static PV for the disk. The hourly audit on the report an hour old keeps
 * the disk; once the forwarder's reports are accepted again (naming nothing), it goes.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createApp } from '../../lib/app/index.js';
import { runAudit } from '../../lib/audit/index.js';
import { ReconcileResponseSchema, REPORT_WITHIN_MAX_SECONDS, reportDigest, sign, type VolumeReport } from '../../lib/contract/index.js';
import { createFileReportStore, createMemoryReportStore, type ReportStore } from '../../lib/reports/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';

const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const WRONG = `whsec_${Buffer.alloc(32, 4).toString('base64')}`;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const VERSIONS = { contract: 2, forwarderVersion: '0.2.0' };

it('requests refused after the mark became due -> the hourly audit keeps the disk (no fresh report); accepted again -> deleted', async () => {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  let now = Date.UTC(2026, 10, 30, 10);
  const app = createApp({ registry: createStaticRegistry([{ clusterId: 'alpha', secrets: [SECRET], region: 'us-east-1' }]), reports, gatewayFor: () => ec2, now: () => now });
  const disk = ec2.addVolume({
    volumeId: 'vol-0ddddddddddddddd1',
    tags: { CSIVolumeName: `pvc-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
    createdAt: new Date(now - 2 * HOUR).toISOString(),
  });
  const report: VolumeReport = { volumes: [], attachments: [], claims: [] };
  /** One resync of the forwarder: its report, signed with `secret` by its clock (the backend's here). */
  const resync = async (secret: string) => {
    const body = JSON.stringify({ clusterId: 'alpha', items: [{ kind: 'VolumeReport', digest: reportDigest(report), observedAt: now, report }] });
    const res = await app.request('/v1/clusters/alpha/reconcile', { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, secret, { now: Math.floor(now / 1000), versions: VERSIONS }) } });
    return res.status;
  };
  const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });

  expect(await resync(SECRET)).toBe(200);
  now += MINUTE;
  expect((await audit()).deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'marked' }]);
  now += 4 * MINUTE;
  expect(await resync(SECRET)).toBe(200); // the mark is due by this report
  // The Secret rotated wrongly: every resync of the next 55 minutes refused.
  for (let n = 0; n < 11; n++) {
    now += 5 * MINUTE;
    expect(await resync(WRONG)).toBe(401);
  }
  const refused = await audit();
  expect(refused.deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining('not arriving or are refused') }]);
  expect(ec2.callsOf('deleteDisk')).toEqual([]);

  // The control: the Secret put right, the next report accepted (naming nothing; a resync after
  // the last refusal, as the audit needs over a minute after it) -> deleted.
  now += 5 * MINUTE;
  expect(await resync(SECRET)).toBe(200);
  now += MINUTE;
  expect((await audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
});

it(`a quiet cluster (asked for a report within ${REPORT_WITHIN_MAX_SECONDS} s) -> marked by an audit on its 25-minute-old report, then asked for one every resync; a report after the mark but 20 minutes old at the next audit -> kept; a fresh one -> deleted, and quiet again`, async () => {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  let now = Date.UTC(2026, 10, 30, 10);
  const app = createApp({ registry: createStaticRegistry([{ clusterId: 'alpha', secrets: [SECRET], region: 'us-east-1' }]), reports, gatewayFor: () => ec2, now: () => now });
  const disk = ec2.addVolume({
    volumeId: 'vol-0ddddddddddddddd3',
    tags: { CSIVolumeName: `pvc-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
    createdAt: new Date(now - 2 * HOUR).toISOString(),
  });
  const report: VolumeReport = { volumes: [], attachments: [], claims: [] };
  /** The forwarder's report (its digest alone once kept): how soon the backend asks for the next, undefined for every resync. */
  const send = async (item: object) => {
    const body = JSON.stringify({ clusterId: 'alpha', items: [{ kind: 'VolumeReport', digest: reportDigest(report), observedAt: now, ...item }] });
    const res = await app.request('/v1/clusters/alpha/reconcile', { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, SECRET, { now: Math.floor(now / 1000), versions: VERSIONS }) } });
    expect(res.status).toBe(200);
    const [result] = ReconcileResponseSchema.parse(await res.json()).results;
    expect(result?.outcome).toBe('done');
    return result?.outcome === 'done' ? result.reportWithinSeconds : -1;
  };
  const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });

  expect(await send({ report })).toBe(REPORT_WITHIN_MAX_SECONDS);
  now += 25 * MINUTE;
  // No deletion rests on a report this old; the audit only marks, dated by its own clock.
  const marking = await audit();
  expect(marking.deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'marked' }]);
  expect(marking.reportAgeSeconds).toBe(25 * 60);
  now += 5 * MINUTE;
  // The forwarder's next report, within the 30 minutes: the mark is due by it, and from now on every resync is asked for.
  expect(await send({})).toBeUndefined();
  // A forwarder that sends no more (or whose reports are lost): the report is received after the mark, but not fresh.
  now += 20 * MINUTE;
  const stale = await audit();
  expect(stale.deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining('not arriving or are refused') }]);
  expect(ec2.callsOf('deleteDisk')).toEqual([]);
  // The control: a report at the resync -> deleted; the mark gone, the backend asks for one within 30 minutes again.
  expect(await send({})).toBeUndefined();
  now += MINUTE;
  expect((await audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
  expect(await send({})).toBe(REPORT_WITHIN_MAX_SECONDS);
});

/** The backend's store, and the one the audit reads: the same in memory; in files, another store over the directory, as the CLI's audit in its own process. */
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
const storesOf: [string, () => Promise<{ reports: ReportStore; audited: ReportStore }>][] = [
  ['memory', async () => {
    const reports = createMemoryReportStore();
    return { reports, audited: reports };
  }],
  ['files (the CLI\'s audit over the local stack\'s directory)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'volhook-refusals-'));
    dirs.push(dir);
    return { reports: createFileReportStore(dir), audited: createFileReportStore(dir) };
  }],
];

it.each(storesOf)('%s: requests refused (401) for 2 minutes after a fresh report -> the audit 3 minutes later keeps the disk, naming the refusal; a report accepted after the refusals -> deleted', async (_name, make) => {
  const ec2 = new FakeGateway('alpha');
  const { reports, audited } = await make();
  let now = Date.UTC(2026, 10, 30, 10);
  const app = createApp({ registry: createStaticRegistry([{ clusterId: 'alpha', secrets: [SECRET], region: 'us-east-1' }]), reports, gatewayFor: () => ec2, now: () => now });
  const disk = ec2.addVolume({
    volumeId: 'vol-0ddddddddddddddd2',
    tags: { CSIVolumeName: `pvc-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
    createdAt: new Date(now - 2 * HOUR).toISOString(),
  });
  const empty: VolumeReport = { volumes: [], attachments: [], claims: [] };
  const named: VolumeReport = { ...empty, volumes: [{ pv: 'recovered', volumeId: disk.volumeId, reclaimPolicy: 'Retain' }] };
  const send = async (secret: string, report: VolumeReport) => {
    const body = JSON.stringify({ clusterId: 'alpha', items: [{ kind: 'VolumeReport', digest: reportDigest(report), observedAt: now, report }] });
    const res = await app.request('/v1/clusters/alpha/reconcile', { method: 'POST', body, headers: { 'content-type': 'application/json', ...sign(body, secret, { now: Math.floor(now / 1000), versions: VERSIONS }) } });
    return res.status;
  };
  const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports: audited, graceMs: HOUR, delete: true, now: () => now });

  expect(await send(SECRET, empty)).toBe(200);
  now += MINUTE;
  expect((await audit()).deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'marked' }]);
  now += 4 * MINUTE;
  expect(await send(SECRET, empty)).toBe(200); // due; fresh for the next 10 minutes
  // The Secret rotated wrongly a minute later; an administrator makes a static PV naming the
  // disk; the forwarder's report carrying it is refused, retried every 30 s for 2 minutes.
  now += MINUTE;
  const refusedFrom = now;
  for (let n = 0; n <= 4; n++) {
    expect(await send(WRONG, named)).toBe(401);
    now += 30_000;
  }
  // Refused at 0, 30, 60, 90, 120 s: recorded at most once a minute, so the last one held is the one at 120 s.
  const lastRecorded = refusedFrom + 2 * MINUTE;
  expect(await audited.lastRefusal('alpha')).toEqual({ at: lastRecorded, status: 401, code: 'bad_signature' });
  now += 30_000; // 3 minutes after the report: fresh by its age alone
  const kept = await audit();
  expect(kept.deletions).toMatchObject([
    { volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining(`a request of the cluster was refused (401 bad_signature) at ${new Date(lastRecorded).toISOString()}`) },
  ]);
  expect(ec2.callsOf('deleteDisk')).toEqual([]);

  // The control: the Secret put right, a report accepted after the refusals (here still naming
  // nothing of the disk: the PV was deleted again) -> deleted.
  now += MINUTE;
  expect(await send(SECRET, empty)).toBe(200);
  now += MINUTE;
  expect((await audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
});

it('a replayed request (409: accepted once already) is no refusal -> the disk goes on the fresh report; refused requests for an id with no report -> nothing kept', async () => {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  let now = Date.UTC(2026, 10, 30, 10);
  const app = createApp({
    registry: createStaticRegistry([{ clusterId: 'alpha', secrets: [SECRET], region: 'us-east-1' }, { clusterId: 'beta', secrets: [SECRET], region: 'us-east-1' }]),
    reports,
    gatewayFor: () => ec2,
    now: () => now,
  });
  const disk = ec2.addVolume({
    volumeId: 'vol-0ddddddddddddddd3',
    tags: { CSIVolumeName: `pvc-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
    createdAt: new Date(now - 2 * HOUR).toISOString(),
  });
  const report: VolumeReport = { volumes: [], attachments: [], claims: [] };
  const signed = (clusterId: string) => {
    const body = JSON.stringify({ clusterId, items: [{ kind: 'VolumeReport', digest: reportDigest(report), observedAt: now, report }] });
    return { body, headers: { 'content-type': 'application/json', ...sign(body, SECRET, { now: Math.floor(now / 1000), versions: VERSIONS }) } };
  };
  const post = async (clusterId: string, request: { body: string; headers: Record<string, string> }) =>
    (await app.request(`/v1/clusters/${clusterId}/reconcile`, { method: 'POST', ...request })).status;
  const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });

  expect(await post('alpha', signed('alpha'))).toBe(200);
  now += MINUTE;
  await audit();
  now += 4 * MINUTE;
  const resync = signed('alpha');
  expect(await post('alpha', resync)).toBe(200);
  now += MINUTE;
  expect(await post('alpha', resync)).toBe(409);
  expect(await post('beta', { body: '{}', headers: { 'content-type': 'application/json' } })).toBe(401);
  expect(await reports.lastRefusal('alpha')).toBeUndefined();
  expect(await reports.lastRefusal('beta')).toBeUndefined();
  now += MINUTE;
  expect((await audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
});
