import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditSummary, auditTable, deleteLeftBehind, FRESH_REPORT_MS, leftBehind, runAudit, type AuditRequest } from '../../lib/audit/index.js';
import { reconcileItems } from '../../lib/reconcile/index.js';
import { reportDigest, type VolumeReport } from '../../lib/contract/index.js';
import { createMemoryReportStore, REFUSAL_RECORD_INTERVAL_MS, type ReportStore } from '../../lib/reports/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';
import { setup as fixture } from '../reconcile/fixtures.js';

const HOUR = 3_600_000;
const start = Date.now();

function setup() {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  const orphan = (over: { uid?: string; ageMs?: number } = {}) =>
    ec2.addVolume({
      volumeId: `vol-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
      tags: { CSIVolumeName: `pvc-${over.uid ?? randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
      createdAt: new Date(start - (over.ageMs ?? 2 * HOUR)).toISOString(),
    });
  /** The backend's clock (and the auditor's): moved on by each report and each audit. */
  let now = start;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  /** A report received now (as the backend keeps one: sender's time and receipt); its digest. */
  const put = async (claims: string[] = [], volumes: VolumeReport['volumes'] = []) => {
    const digest = randomUUID().replaceAll('-', '').padEnd(64, '0');
    await reports.put({ clusterId: 'alpha', digest, observedAt: now - 1000, receivedAt: now, report: { volumes, attachments: [], claims } });
    clock.advance(1000);
    return digest;
  };
  /** The forwarder's next resync: the digest alone, received now. */
  const confirm = async (digest: string) => {
    expect(await reports.confirm('alpha', digest, now, now)).toBe(true);
    clock.advance(1000);
  };
  const audit = async (over: Partial<AuditRequest> = {}) => {
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: clock.now, ...over });
    clock.advance(1000);
    return result;
  };
  return { ec2, reports, orphan, clock, put, confirm, audit };
}

describe('runAudit: two phases', () => {
  it('--delete -> the first audit only marks the provably orphaned disks; after a report received since, the next deletes exactly them, each described anew right before its DeleteVolume', async () => {
    const { ec2, reports, orphan, put, confirm, audit } = setup();
    const claimed = randomUUID();
    const [a, b] = [orphan(), orphan()];
    const young = orphan({ ageMs: 60_000 });
    const stillClaimed = orphan({ uid: claimed });
    const digest = await put([claimed]);

    const first = await audit();
    expect(first.deletions.map((d) => [d.volumeId, d.outcome]).sort()).toEqual([[a.volumeId, 'marked'], [b.volumeId, 'marked']].sort());
    expect(first.deletions[0]).toMatchObject({ why: expect.stringContaining('a report received after that') });
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
    expect([...(await reports.marks('alpha')).keys()].sort()).toEqual([a.volumeId, b.volumeId].sort());

    // Without a report since the mark, a second audit still only marks (the same mark).
    const again = await audit();
    expect(again.deletions.map((d) => d.outcome)).toEqual(['marked', 'marked']);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);

    await confirm(digest);
    const second = await audit();
    expect(second.deletions.map((d) => d.volumeId).sort()).toEqual([a.volumeId, b.volumeId].sort());
    expect(second.deletions.every((d) => d.outcome === 'deleted')).toBe(true);
    expect(ec2.callsOf('deleteDisk').map((c) => c.args[0]).sort()).toEqual([a.volumeId, b.volumeId].sort());
    expect(ec2.volumes.get(young.volumeId)?.state).toBe('available');
    expect(ec2.volumes.get(stillClaimed.volumeId)?.state).toBe('available');
    const verbs = ec2.calls.map((c) => `${c.verb}:${String(c.args[0] ?? '')}`);
    for (const d of [a, b]) expect(verbs[verbs.indexOf(`deleteDisk:${d.volumeId}`) - 1]).toBe(`getDisk:${d.volumeId}`);
    // The deleted ones' marks go with them.
    expect((await reports.marks('alpha')).size).toBe(0);
  });

  it('a disk marked, then named by a PV in the next report -> its mark dropped, kept; the PV gone again -> marked anew, not deleted at once', async () => {
    const { ec2, reports, orphan, put, audit } = setup();
    const d = orphan();
    await put();
    expect((await audit()).deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'marked' }]);
    await put([], [{ pv: 'pv-static', volumeId: d.volumeId, reclaimPolicy: 'Delete' }]);
    const named = await audit();
    expect(named.orphans).toEqual([]);
    expect(named.deletions).toEqual([]);
    expect((await reports.marks('alpha')).has(d.volumeId)).toBe(false);
    await put();
    expect((await audit()).deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'marked' }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('without --delete -> the provable orphans are marked all the same (the table says when they may go); a later --delete audit after a report deletes them', async () => {
    const { ec2, orphan, put, confirm, audit } = setup();
    const d = orphan();
    const digest = await put();
    const report = await audit({ delete: false });
    expect(report.deletions).toEqual([]);
    expect(report.orphans).toMatchObject([{ volumeId: d.volumeId, deletable: true, mark: { due: false } }]);
    const row = auditTable(report).split('\n').find((line) => line.includes(d.volumeId));
    expect(row).toMatch(/marked \S+Z, deletable once a report received after that still names nothing of it/);
    await confirm(digest);
    expect((await audit()).deletions).toEqual([{ volumeId: d.volumeId, outcome: 'deleted' }]);
    expect(ec2.callsOf('deleteDisk').map((c) => c.args[0])).toEqual([d.volumeId]);
  });

  it('the table and the summary say how old the report is, by the backend\'s clock, and what was marked', async () => {
    const { orphan, put, audit, clock } = setup();
    orphan();
    await put();
    clock.advance(125_000);
    const result = await audit();
    // Read 1 s before it was received, 126 s before the audit.
    expect(result.reportAgeSeconds).toBe(127);
    expect(auditTable(result).split('\n')[0]).toMatch(/^report: of \S+Z \(as the backend received it\), 2m7s old$/);
    expect(auditSummary(result)).toContain('report 2m7s old');
    expect(auditSummary(result)).toContain('0 deleted, 1 marked');
  });

  it('a PV names the disk in a report that arrives between the audit and the delete -> kept', async () => {
    const { ec2, reports, orphan, put, confirm, audit } = setup();
    const d = orphan();
    const digest = await put();
    await audit();
    await confirm(digest);
    const racing: ReportStore = {
      ...reports,
      get: async (id) => {
        const stored = await reports.get(id);
        // Every read after the first (the re-check before deleting) sees the newer report.
        if (ec2.callsOf('listClusterDisks').length > 1 && stored) stored.report.volumes.push({ pv: 'pv-new', volumeId: d.volumeId, reclaimPolicy: 'Retain' });
        return stored;
      },
    };
    const result = await audit({ reports: racing });
    expect(result.deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'kept' }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('its mark dropped by another audit between this one\'s judging and its delete -> kept', async () => {
    const { ec2, reports, orphan, put, confirm, audit } = setup();
    const d = orphan();
    const digest = await put();
    await audit();
    await confirm(digest);
    const original = ec2.getDisk.bind(ec2);
    ec2.getDisk = async (id) => {
      await reports.unmark('alpha', [id]);
      return original(id);
    };
    const result = await audit();
    expect(result.deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'kept', why: expect.stringContaining('its mark is gone') }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('the disk got attached before its delete -> kept, never detached or deleted', async () => {
    const { ec2, orphan, put, confirm, audit } = setup();
    const d = orphan();
    const digest = await put();
    await audit();
    await confirm(digest);
    const original = ec2.getDisk.bind(ec2);
    ec2.getDisk = async (id) => {
      const disk = await original(id);
      return disk && { ...disk, state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdaa', state: 'attached' }] };
    };
    const result = await audit();
    expect(result.deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'kept' }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('a lost volume -> Warning VolumeLost Events on its PV and claim queued for the next report answer', async () => {
    const { reports, put, audit } = setup();
    await put([], [{ pv: 'pvc-1', volumeId: 'vol-00000000000000001', reclaimPolicy: 'Delete', phase: 'Bound', claim: { namespace: 'ns', name: 'c' } }]);
    const result = await audit({ delete: false });
    expect(result.lost).toHaveLength(1);
    const events = await reports.takeEvents('alpha');
    expect(events.map((e) => (e.op === 'createEvent' ? `${e.involvedObject.kind}/${e.reason}/${e.type}` : e.op))).toEqual(['PersistentVolume/VolumeLost/Warning', 'PersistentVolumeClaim/VolumeLost/Warning']);
    expect(await reports.takeEvents('alpha')).toEqual([]);
  });
});

/**
 * The reports as the backend keeps them (reconcileItems, with its clock and the forwarder's),
 * then the audit: the evidence the destructive paths lacked.
 */
describe('runAudit on reports as the backend keeps them', () => {
  const claimUid = () => randomUUID();
  const backend = (reports: ReportStore) => {
    let now = start;
    const send = async (report: VolumeReport, forwarderAheadMs = 0) => {
      const ctx = { ...fixture().ctx, clusterId: 'alpha', reports, now: () => new Date(now), signedAt: new Date(now + forwarderAheadMs) };
      const [result] = await reconcileItems([{ kind: 'VolumeReport', digest: reportDigest(report), observedAt: now + forwarderAheadMs, report }], ctx);
      expect(result?.outcome).toBe('done');
    };
    return { send, now: () => now, advance: (ms: number) => void (now += ms) };
  };

  it('a forwarder clock 200 s fast, then silent past the grace: the disk of a claim made after its last report -> unknown, never deleted (twice over)', async () => {
    const ec2 = new FakeGateway('alpha');
    const reports = createMemoryReportStore();
    const b = backend(reports);
    await b.send({ volumes: [], attachments: [], claims: [] }, 200_000);
    // A claim made 10 s later; its disk 20 s after the report reached the backend.
    b.advance(20_000);
    const live = ec2.addVolume({
      volumeId: 'vol-0aaaaaaaaaaaaaaa1',
      tags: { CSIVolumeName: `pvc-${claimUid()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
      createdAt: new Date(b.now()).toISOString(),
    });
    // The forwarder stops; two hourly audits.
    for (const after of [2 * HOUR, HOUR]) {
      b.advance(after);
      const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: b.now });
      expect(ec2.callsOf('deleteDisk')).toEqual([]);
      expect(result.orphans).toEqual([]);
      expect(result.unknown.map((u) => u.volumeId)).toEqual([live.volumeId]);
    }
  });

  it('a Retain claim deleted, its PV deleted (the user takes the disk over) -> the disk is reported as retained, never deleted; named with --volume -> deleted (marked by the first audit, a report received since)', async () => {
    const ec2 = new FakeGateway('alpha');
    const reports = createMemoryReportStore();
    const b = backend(reports);
    const uid = claimUid();
    const disk = ec2.addVolume({
      volumeId: 'vol-0bbbbbbbbbbbbbbb2',
      tags: { CSIVolumeName: `pvc-${uid}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
      createdAt: new Date(b.now() - 3 * HOUR).toISOString(),
    });
    const pv = { pv: `pvc-${uid}`, volumeId: disk.volumeId, reclaimPolicy: 'Retain', claim: { namespace: 'ns', name: 'data', uid } };
    await b.send({ volumes: [{ ...pv, phase: 'Bound' }], attachments: [], claims: [uid] });
    b.advance(60_000);
    await b.send({ volumes: [{ ...pv, phase: 'Released' }], attachments: [], claims: [] });
    b.advance(60_000);
    await b.send({ volumes: [], attachments: [], claims: [] });
    const audit = async (over: Partial<AuditRequest> = {}) => {
      b.advance(60_000);
      const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: b.now, ...over });
      b.advance(60_000);
      await b.send({ volumes: [], attachments: [], claims: [] });
      return result;
    };
    for (const due of [false, true]) {
      const result = await audit();
      expect(result.deletions).toEqual([]);
      expect(result.orphans).toMatchObject([{ volumeId: disk.volumeId, deletable: false, retained: true, mark: { due } }]);
    }
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
    expect([...(await reports.retained('alpha'))]).toEqual([disk.volumeId]);
    expect((await audit({ volumes: [disk.volumeId] })).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
    expect(ec2.callsOf('deleteDisk').map((c) => c.args[0])).toEqual([disk.volumeId]);
    expect((await reports.retained('alpha')).size).toBe(0);
  });

  it('--volume names only what is deleted: another due orphan stays; a named disk that is no orphan -> kept, said why', async () => {
    const ec2 = new FakeGateway('alpha');
    const reports = createMemoryReportStore();
    const b = backend(reports);
    const made = { tags: (uid: string) => ({ CSIVolumeName: `pvc-${uid}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' }), createdAt: new Date(b.now() - 3 * HOUR).toISOString() };
    const named = ec2.addVolume({ volumeId: 'vol-0ccccccccccccccc3', tags: made.tags(claimUid()), createdAt: made.createdAt });
    const other = ec2.addVolume({ volumeId: 'vol-0ccccccccccccccc4', tags: made.tags(claimUid()), createdAt: made.createdAt });
    const inUse = ec2.addVolume({ volumeId: 'vol-0ccccccccccccccc5', tags: made.tags(claimUid()), createdAt: made.createdAt });
    const empty = { volumes: [{ pv: 'pv-in-use', volumeId: inUse.volumeId, reclaimPolicy: 'Delete' }], attachments: [], claims: [] };
    await b.send(empty);
    const audit = async () => {
      b.advance(60_000);
      const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: b.now, volumes: [named.volumeId, inUse.volumeId] });
      b.advance(60_000);
      await b.send(empty);
      return result;
    };
    await audit();
    const result = await audit();
    expect(result.deletions).toEqual([
      { volumeId: named.volumeId, outcome: 'deleted' },
      { volumeId: inUse.volumeId, outcome: 'kept', why: expect.stringContaining('not an orphan') },
    ]);
    expect(ec2.volumes.get(other.volumeId)?.state).toBe('available');
  });
});

/**
 * The second audit deletes only on a report fresh when it deletes (FRESH_REPORT_MS, two resyncs),
 * dated by the backend's clock: a report received after the mark but long ago says nothing of a
 * static PV made since, while the forwarder's requests were absent or refused.
 */
describe('runAudit: deletes only on a fresh report', () => {
  const MINUTE = 60_000;
  const leaked = (ec2: FakeGateway, createdAt: number) =>
    ec2.addVolume({
      volumeId: 'vol-0bbbbbbbbbbbbbbb1',
      tags: { CSIVolumeName: `pvc-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
      createdAt: new Date(createdAt).toISOString(),
    });
  const empty: VolumeReport = { volumes: [], attachments: [], claims: [] };
  const world = () => {
    const ec2 = new FakeGateway('alpha');
    const reports = createMemoryReportStore();
    let now = start;
    const send = async (forwarderAheadMs = 0) => {
      const ctx = { ...fixture().ctx, clusterId: 'alpha', reports, now: () => new Date(now), signedAt: new Date(now + forwarderAheadMs) };
      const [result] = await reconcileItems([{ kind: 'VolumeReport', digest: reportDigest(empty), observedAt: now + forwarderAheadMs, report: empty }], ctx);
      expect(result?.outcome).toBe('done');
    };
    const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });
    return { ec2, reports, send, audit, now: () => now, advance: (ms: number) => void (now += ms) };
  };

  it('marked, made due by the next resync, then the forwarder silent (a static PV made meanwhile) -> the hourly audit on the 55-minute-old report keeps it; a fresh report -> deleted', async () => {
    const w = world();
    const disk = leaked(w.ec2, start - 2 * HOUR);
    await w.send();
    w.advance(MINUTE);
    expect((await w.audit()).deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'marked' }]);
    w.advance(4 * MINUTE);
    await w.send(); // the next resync: the mark is due
    // Requests stop arriving (pods down, a wrongly rotated Secret): an administrator makes a
    // static PV for the disk, which no report carries.
    w.advance(55 * MINUTE);
    const stale = await w.audit();
    expect(stale.deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringMatching(/the report is 3300 s old .*older than 600 s \(two resyncs of 300 s\)/) }]);
    expect(w.ec2.callsOf('deleteDisk')).toEqual([]);
    expect(w.ec2.volumes.get(disk.volumeId)?.state).toBe('available');
    // The control: the path is reachable — a report fresh when the audit runs (still naming nothing) deletes it.
    await w.send();
    w.advance(MINUTE);
    expect((await w.audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
    expect(w.ec2.callsOf('deleteDisk').map((c) => c.args[0])).toEqual([disk.volumeId]);
  });

  it('dated by the backend\'s clock: a forwarder 200 s fast cannot keep its report fresh; at the bound it is fresh, past it not', async () => {
    const w = world();
    const disk = leaked(w.ec2, start - 2 * HOUR);
    await w.send(200_000);
    w.advance(MINUTE);
    await w.audit();
    w.advance(MINUTE);
    await w.send(200_000);
    // 601 s after receipt (401 s by the forwarder's clock): too old.
    w.advance(FRESH_REPORT_MS + 1000);
    expect((await w.audit()).deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining('the report is 601 s old') }]);
    expect(w.ec2.callsOf('deleteDisk')).toEqual([]);
    // Received exactly FRESH_REPORT_MS ago: still fresh.
    await w.send(200_000);
    w.advance(FRESH_REPORT_MS);
    expect((await w.audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
  });

  it('re-read right before each delete: the report turns stale between the audit\'s judging and the DeleteVolume -> kept', async () => {
    const w = world();
    const disk = leaked(w.ec2, start - 2 * HOUR);
    await w.send();
    w.advance(MINUTE);
    await w.audit();
    w.advance(MINUTE);
    await w.send();
    w.advance(MINUTE);
    const original = w.ec2.getDisk.bind(w.ec2);
    w.ec2.getDisk = async (id) => {
      // The describe right before the delete takes long (throttled): the bound passes meanwhile.
      w.advance(FRESH_REPORT_MS);
      return original(id);
    };
    expect((await w.audit()).deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining('older than 600 s') }]);
    expect(w.ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('a snapshot likewise: due, the report stale -> kept; fresh -> deleted', async () => {
    const w = world();
    const snapshot = w.ec2.addSnapshot({
      snapshotId: 'snap-0ccccccccccccccc1',
      tags: { CSIVolumeSnapshotName: `snapcontent-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
      startTime: new Date(start - 2 * HOUR).toISOString(),
    });
    const withContents: VolumeReport = { ...empty, snapshots: [] };
    const send = async () => {
      const ctx = { ...fixture().ctx, clusterId: 'alpha', reports: w.reports, now: () => new Date(w.now()), signedAt: new Date(w.now()) };
      const [result] = await reconcileItems([{ kind: 'VolumeReport', digest: reportDigest(withContents), observedAt: w.now(), report: withContents }], ctx);
      expect(result?.outcome).toBe('done');
    };
    const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: w.ec2, reports: w.reports, graceMs: HOUR, delete: false, deleteSnapshots: true, now: w.now });
    await send();
    w.advance(MINUTE);
    await audit();
    w.advance(MINUTE);
    await send();
    w.advance(55 * MINUTE);
    expect((await audit()).snapshotDeletions).toMatchObject([{ snapshotId: snapshot.snapshotId, outcome: 'kept', why: expect.stringContaining('older than 600 s') }]);
    await send();
    expect((await audit()).snapshotDeletions).toEqual([{ snapshotId: snapshot.snapshotId, outcome: 'deleted' }]);
  });

  it('a request of the cluster refused after the report it judges by (a fresh one) -> kept, naming what was refused and when; re-read right before the delete', async () => {
    const w = world();
    const disk = leaked(w.ec2, start - 2 * HOUR);
    await w.send();
    w.advance(MINUTE);
    await w.audit();
    w.advance(4 * MINUTE);
    await w.send(); // due, and fresh for the next 10 minutes
    w.advance(MINUTE);
    // A static PV made now; the forwarder's report naming it refused (a wrongly rotated Secret).
    await w.reports.refused('alpha', { at: w.now(), status: 401, code: 'bad_signature' });
    const refusedAt = new Date(w.now()).toISOString();
    w.advance(3 * MINUTE);
    const kept = await w.audit();
    expect(kept.deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining(`refused (401 bad_signature) at ${refusedAt}`) }]);
    expect(w.ec2.callsOf('deleteDisk')).toEqual([]);

    // Refused between the audit's judging and its DeleteVolume: the re-read sees it.
    await w.send();
    w.advance(2 * MINUTE);
    const original = w.ec2.getDisk.bind(w.ec2);
    w.ec2.getDisk = async (id) => {
      await w.reports.refused('alpha', { at: w.now(), status: 403, code: 'registration_invalid' });
      return original(id);
    };
    expect((await w.audit()).deletions).toMatchObject([{ volumeId: disk.volumeId, outcome: 'kept', why: expect.stringContaining('refused (403 registration_invalid)') }]);
    expect(w.ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('the control: a refusal older than the report (by over the recording interval) does not hold the deletion back', async () => {
    const w = world();
    const disk = leaked(w.ec2, start - 2 * HOUR);
    await w.send();
    w.advance(MINUTE);
    await w.audit();
    w.advance(MINUTE);
    await w.reports.refused('alpha', { at: w.now(), status: 401, code: 'bad_signature' });
    w.advance(REFUSAL_RECORD_INTERVAL_MS + 1000);
    await w.send(); // accepted after the refusal
    w.advance(MINUTE);
    expect((await w.audit()).deletions).toEqual([{ volumeId: disk.volumeId, outcome: 'deleted' }]);
    expect(w.ec2.callsOf('deleteDisk').map((c) => c.args[0])).toEqual([disk.volumeId]);
  });

  it('a snapshot likewise: a refusal since the report -> kept; a report accepted after it -> deleted', async () => {
    const w = world();
    const snapshot = w.ec2.addSnapshot({
      snapshotId: 'snap-0ccccccccccccccc2',
      tags: { CSIVolumeSnapshotName: `snapcontent-${randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
      startTime: new Date(start - 2 * HOUR).toISOString(),
    });
    const withContents: VolumeReport = { ...empty, snapshots: [] };
    const send = async () => {
      const ctx = { ...fixture().ctx, clusterId: 'alpha', reports: w.reports, now: () => new Date(w.now()), signedAt: new Date(w.now()) };
      const [result] = await reconcileItems([{ kind: 'VolumeReport', digest: reportDigest(withContents), observedAt: w.now(), report: withContents }], ctx);
      expect(result?.outcome).toBe('done');
    };
    const audit = () => runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: w.ec2, reports: w.reports, graceMs: HOUR, delete: false, deleteSnapshots: true, now: w.now });
    await send();
    w.advance(MINUTE);
    await audit();
    w.advance(MINUTE);
    await send();
    w.advance(MINUTE);
    await w.reports.refused('alpha', { at: w.now(), status: 413, code: 'body_too_large' });
    w.advance(MINUTE);
    expect((await audit()).snapshotDeletions).toMatchObject([{ snapshotId: snapshot.snapshotId, outcome: 'kept', why: expect.stringContaining('refused (413 body_too_large)') }]);
    w.advance(MINUTE);
    await send();
    expect((await audit()).snapshotDeletions).toEqual([{ snapshotId: snapshot.snapshotId, outcome: 'deleted' }]);
  });
});

describe('remove --delete-volumes: disks left behind', () => {
  it('deletes the available disks, never one a Retain PV names nor one whose last known PV had Retain', async () => {
    const { ec2, reports, orphan, put } = setup();
    const plain = orphan();
    const named = orphan();
    const remembered = orphan();
    await put([], [{ pv: 'pv-kept', volumeId: named.volumeId, reclaimPolicy: 'Retain' }]);
    await reports.retain('alpha', [remembered.volumeId]);
    const evidence = { clusterId: 'alpha', report: await reports.get('alpha'), retained: await reports.retained('alpha') };
    const entries = leftBehind(await ec2.listClusterDisks(), evidence, 'us-east-1');
    expect(entries.map((e) => [e.volumeId, e.action, e.why]).sort()).toEqual(
      [
        [plain.volumeId, 'delete', undefined],
        [named.volumeId, 'keep', 'PersistentVolume pv-kept (Retain) names it'],
        [remembered.volumeId, 'keep', expect.stringContaining('reclaimPolicy Retain')],
      ].sort(),
    );
    expect(await deleteLeftBehind(ec2, 'alpha', entries, evidence)).toEqual([{ volumeId: plain.volumeId, outcome: 'deleted' }]);
  });
});
