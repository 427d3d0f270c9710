import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditMetricValues, auditSummary, auditTable, deleteSnapshotsLeftBehind, runAudit, snapshotsLeftBehind } from '../../lib/audit/index.js';
import type { ReportedSnapshotContent } from '../../lib/contract/index.js';
import { createMemoryReportStore, type ReportStore } from '../../lib/reports/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';

const HOUR = 3_600_000;
const now = Date.now();

function setup() {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  const snapshot = (over: { content?: string; ageMs?: number; cluster?: string } = {}) =>
    ec2.addSnapshot({
      snapshotId: `snap-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
      sizeGiB: 20,
      startTime: new Date(now - (over.ageMs ?? 2 * HOUR)).toISOString(),
      tags: { CSIVolumeSnapshotName: over.content ?? `snapcontent-${randomUUID()}`, [`kubernetes.io/cluster/${over.cluster ?? 'alpha'}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': over.cluster ?? 'alpha' },
    });
  return { ec2, reports, snapshot };
}

const content = (over: Partial<ReportedSnapshotContent>): ReportedSnapshotContent => ({
  content: `snapcontent-${randomUUID()}`,
  deletionPolicy: 'Delete',
  readyToUse: true,
  beingCreated: false,
  deleting: false,
  ...over,
});

const put = (reports: ReportStore, snapshots: ReportedSnapshotContent[] | undefined) =>
  reports.put({
    clusterId: 'alpha',
    digest: randomUUID().replaceAll('-', '').padEnd(64, '0'),
    observedAt: now - 1000,
    receivedAt: now - 1000,
    report: { volumes: [], attachments: [], claims: [], ...(snapshots && { snapshots }) },
  });

const audit = (ec2: FakeGateway, reports: ReportStore, del: boolean, graceMs = HOUR, at = now, over: { snapshots?: string[] } = {}) =>
  runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs, delete: del, deleteSnapshots: del, now: () => at, ...over });

/** The two phases: an audit that marks, the forwarder's next report (its digest, received a second later), the audit that deletes. */
async function twoAudits(ec2: FakeGateway, reports: ReportStore, graceMs = HOUR, over: { snapshots?: string[] } = {}) {
  const first = await audit(ec2, reports, true, graceMs, now, over);
  const stored = await reports.get('alpha');
  if (stored) expect(await reports.confirm('alpha', stored.digest, now + 1000, now + 1000)).toBe(true);
  return { first, second: await audit(ec2, reports, true, graceMs, now + 2000, over) };
}

describe('runAudit: snapshots', () => {
  it('delete without deleteSnapshots (the CLI\'s --delete alone) -> the orphaned snapshot is reported and kept', async () => {
    const { ec2, reports, snapshot } = setup();
    const orphan = snapshot();
    await put(reports, []);
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });
    expect(result.orphanedSnapshots.map((o) => o.snapshotId)).toEqual([orphan.snapshotId]);
    expect(result.snapshotDeletions).toEqual([]);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
    expect(ec2.snapshots.has(orphan.snapshotId)).toBe(true);
  });

  it('--delete -> deletes exactly the provably orphaned snapshot, each described anew right before its DeleteSnapshot; one named by a content, a young one and a pending one stay', async () => {
    const { ec2, reports, snapshot } = setup();
    const orphan = snapshot();
    const named = snapshot();
    const byTag = snapshot({ content: 'snapcontent-in-flight' });
    const young = snapshot({ ageMs: 60_000 });
    const pending = snapshot();
    ec2.snapshots.get(pending.snapshotId)!.state = 'pending';
    await put(reports, [content({ snapshotHandle: named.snapshotId, deletionPolicy: 'Retain' }), content({ content: 'snapcontent-in-flight', beingCreated: true, readyToUse: false })]);

    const { first, second: result } = await twoAudits(ec2, reports);
    expect(first.snapshotDeletions).toMatchObject([{ snapshotId: orphan.snapshotId, outcome: 'marked' }]);
    expect(result.orphanedSnapshots.map((o) => o.snapshotId)).toEqual([orphan.snapshotId]);
    expect(result.snapshotDeletions).toEqual([{ snapshotId: orphan.snapshotId, outcome: 'deleted' }]);
    expect(ec2.callsOf('deleteSnapshot').map((c) => c.args[0])).toEqual([orphan.snapshotId]);
    for (const kept of [named, byTag, young, pending]) expect(ec2.snapshots.has(kept.snapshotId)).toBe(true);
    const verbs = ec2.calls.map((c) => `${c.verb}:${String(c.args[0] ?? '')}`);
    expect(verbs[verbs.indexOf(`deleteSnapshot:${orphan.snapshotId}`) - 1]).toBe(`getSnapshot:${orphan.snapshotId}`);
    expect(auditMetricValues(result)).toMatchObject({ OrphanedSnapshots: 1, OrphanedSnapshotGiB: 20, DeletedOrphanedSnapshots: 1 });
  });

  it('without --delete -> reported (table row, summary), nothing deleted', async () => {
    const { ec2, reports, snapshot } = setup();
    const s = snapshot();
    await put(reports, []);
    const result = await audit(ec2, reports, false);
    expect(result.orphanedSnapshots).toHaveLength(1);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
    const row = auditTable(result).split('\n').find((line) => line.includes(s.snapshotId));
    expect(row).toMatch(/^orphaned snapshot\s+snap-\S+\s+20 GiB snapshot\s+\$1\.00\s+snapcontent-\S+ of vol-\S+\s+marked \S+Z, deletable once a report received after that still names nothing of it: no VolumeSnapshotContent names it/);
    expect(auditSummary(result)).toContain('1 snapshot(s)');
    expect(auditSummary(result)).toContain('1 orphaned snapshot(s) (20 GiB, at most $1.00/month)');
  });

  it('a content names the snapshot in a report that arrives between the audit and the delete -> kept', async () => {
    const { ec2, reports, snapshot } = setup();
    const s = snapshot();
    await put(reports, []);
    const racing: ReportStore = {
      ...reports,
      get: async (id) => {
        const stored = await reports.get(id);
        if (ec2.callsOf('listClusterSnapshots').length > 1 && stored) stored.report.snapshots!.push(content({ content: s.tags.CSIVolumeSnapshotName! }));
        return stored;
      },
    };
    const { second: result } = await twoAudits(ec2, racing);
    expect(result.snapshotDeletions).toMatchObject([{ snapshotId: s.snapshotId, outcome: 'kept', why: 'no longer an orphan' }]);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
  });

  it('no longer tagged for the cluster when described again -> kept', async () => {
    const { ec2, reports, snapshot } = setup();
    const s = snapshot();
    await put(reports, []);
    const original = ec2.getSnapshot.bind(ec2);
    ec2.getSnapshot = async (id) => {
      const found = await original(id);
      return found && { ...found, tags: { ...found.tags, 'kubernetes.io/cluster/alpha': 'shared' } };
    };
    const { second: result } = await twoAudits(ec2, reports);
    expect(result.snapshotDeletions).toMatchObject([{ snapshotId: s.snapshotId, outcome: 'kept', why: expect.stringContaining('no longer tagged') }]);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
  });

  it('a report without contents (older forwarder) -> no DescribeSnapshots, no snapshot deleted, a note', async () => {
    const { ec2, reports, snapshot } = setup();
    snapshot();
    await put(reports, undefined);
    const result = await audit(ec2, reports, true, 0);
    expect(ec2.callsOf('listClusterSnapshots')).toEqual([]);
    expect(result.snapshotDeletions).toEqual([]);
    expect(result.notes.join(' ')).toContain('carries no VolumeSnapshotContents');
  });

  it('a snapshot whose last known content had Retain (the content deleted since) -> reported and kept by every audit; named with --snapshot -> deleted (marked by the first audit, a report received since)', async () => {
    const { ec2, reports, snapshot } = setup();
    const s = snapshot();
    const other = snapshot();
    await put(reports, []);
    await reports.retain('alpha', [s.snapshotId]);
    const { first, second } = await twoAudits(ec2, reports);
    for (const result of [first, second]) expect(result.orphanedSnapshots.find((o) => o.snapshotId === s.snapshotId)).toMatchObject({ deletable: false, retained: true });
    expect(second.snapshotDeletions).toEqual([{ snapshotId: other.snapshotId, outcome: 'deleted' }]);
    expect(ec2.snapshots.has(s.snapshotId)).toBe(true);
    const named = await audit(ec2, reports, true, HOUR, now + 2000, { snapshots: [s.snapshotId] });
    expect(named.snapshotDeletions).toEqual([{ snapshotId: s.snapshotId, outcome: 'deleted' }]);
    expect(ec2.snapshots.has(s.snapshotId)).toBe(false);
  });

  it('a lost snapshot -> a Warning SnapshotLost Event on its content, queued for the next report answer; nothing deleted', async () => {
    const { ec2, reports } = setup();
    const gone = content({ snapshotHandle: 'snap-0000000000000dead', contentUid: 'u-1' });
    await put(reports, [gone]);
    const result = await audit(ec2, reports, true);
    expect(result.lostSnapshots).toEqual([{ snapshotId: 'snap-0000000000000dead', content: gone.content, contentUid: 'u-1', deletionPolicy: 'Delete' }]);
    expect(ec2.callsOf('getSnapshot').map((c) => c.args[0])).toEqual(['snap-0000000000000dead']);
    const events = await reports.takeEvents('alpha');
    expect(events).toMatchObject([
      { op: 'createEvent', type: 'Warning', reason: 'SnapshotLost', involvedObject: { kind: 'VolumeSnapshotContent', apiVersion: 'snapshot.storage.k8s.io/v1', name: gone.content, uid: 'u-1' } },
    ]);
    expect(ec2.callsOf('deleteSnapshot')).toEqual([]);
  });
});

describe('remove --delete-volumes: snapshots left behind', () => {
  it('lists every snapshot of the cluster; deletes the settled ones, never a pending one, one a Retain content names, nor one whose last content had Retain', async () => {
    const { ec2, snapshot } = setup();
    const reports = createMemoryReportStore();
    const plain = snapshot();
    const retained = snapshot();
    const remembered = snapshot();
    const pending = snapshot();
    ec2.snapshots.get(pending.snapshotId)!.state = 'pending';
    await put(reports, [content({ content: retained.tags.CSIVolumeSnapshotName!, deletionPolicy: 'Retain' })]);
    await reports.retain('alpha', [remembered.snapshotId]);
    const evidence = { clusterId: 'alpha', report: await reports.get('alpha'), retained: await reports.retained('alpha') };
    const entries = snapshotsLeftBehind(await ec2.listClusterSnapshots(), evidence, 'us-east-1');
    expect(entries.map((e) => [e.snapshotId, e.action]).sort()).toEqual(
      [
        [plain.snapshotId, 'delete'],
        [retained.snapshotId, 'keep'],
        [remembered.snapshotId, 'keep'],
        [pending.snapshotId, 'keep'],
      ].sort(),
    );
    expect(entries.find((e) => e.snapshotId === remembered.snapshotId)?.why).toContain('deletionPolicy Retain');
    expect(entries.find((e) => e.snapshotId === plain.snapshotId)).toMatchObject({ monthlyUsd: 1 });
    const outcomes = await deleteSnapshotsLeftBehind(ec2, 'alpha', entries, evidence);
    expect(outcomes).toEqual([{ snapshotId: plain.snapshotId, outcome: 'deleted' }]);
    expect([...ec2.snapshots.keys()].sort()).toEqual([retained.snapshotId, remembered.snapshotId, pending.snapshotId].sort());
  });
});
