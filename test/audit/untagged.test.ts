/**
 * The audit of disks and snapshots listed for the cluster (`kubernetes.io/cluster/<id>=owned`)
 * that volhook may not act on — made before they carried `volhook.io/cluster`, or tagged for
 * another cluster by it: findings of their own kind (`untagged`), never marked, deleted or
 * detached, by the audit or by `remove --delete-volumes`; once tagged, judged as any other.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditSummary, auditTable, deleteLeftBehind, deleteSnapshotsLeftBehind, leftBehind, runAudit, snapshotsLeftBehind } from '../../lib/audit/index.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';

const HOUR = 3_600_000;
const start = Date.now();
const ADOPT = 'run `npm run cluster -- adopt alpha --apply` to tag it (nothing was done';
const current = { 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' };
const { 'volhook.io/cluster': _tag, ...preChange } = current;

function setup() {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  let now = start;
  const orphan = (tags: Record<string, string>) =>
    ec2.addVolume({
      volumeId: `vol-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
      tags: { CSIVolumeName: `pvc-${randomUUID()}`, ...tags },
      createdAt: new Date(start - 2 * HOUR).toISOString(),
    });
  const orphanedSnapshot = (tags: Record<string, string>) =>
    ec2.addSnapshot({
      snapshotId: `snap-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
      startTime: new Date(start - 2 * HOUR).toISOString(),
      tags: { CSIVolumeSnapshotName: `snapcontent-${randomUUID()}`, ...tags },
    });
  /** A report naming nothing, received now; then, after each audit, the forwarder's next one. */
  const report = async () => {
    await reports.put({ clusterId: 'alpha', digest: randomUUID().replaceAll('-', '').padEnd(64, '0'), observedAt: now - 1000, receivedAt: now, report: { volumes: [], attachments: [], claims: [], snapshots: [] } });
    now += 1000;
  };
  const audit = async () => {
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, deleteSnapshots: true, now: () => now });
    // The forwarder's next report, taken after the audit's marks.
    now += 5000;
    await report();
    return result;
  };
  return { ec2, reports, orphan, orphanedSnapshot, report, audit };
}

describe('the audit of disks and snapshots made before volhook.io/cluster', () => {
  it('a provably orphaned disk and snapshot without volhook.io/cluster -> untagged (needs-adopt, naming adopt --apply), never marked or deleted over two audits; the same with the tag (the control) -> marked, then deleted', async () => {
    const { ec2, reports, orphan, orphanedSnapshot, report, audit } = setup();
    const old = orphan(preChange);
    const oldSnapshot = orphanedSnapshot(preChange);
    const tagged = orphan(current);
    const taggedSnapshot = orphanedSnapshot(current);
    await report();

    const first = await audit();
    expect(first.untagged).toEqual([
      expect.objectContaining({ volumeId: old.volumeId, ownership: 'needs-adopt', why: expect.stringContaining(`untagged for IAM: volume ${old.volumeId} was made by volhook before volume tags carried volhook.io/cluster; ${ADOPT}`) }),
    ]);
    expect(first.untaggedSnapshots).toEqual([
      expect.objectContaining({ snapshotId: oldSnapshot.snapshotId, ownership: 'needs-adopt', why: expect.stringContaining(`snapshot ${oldSnapshot.snapshotId} was made by volhook before snapshot tags carried volhook.io/cluster; ${ADOPT}`) }),
    ]);
    expect(first.orphans.map((o) => o.volumeId)).toEqual([tagged.volumeId]);
    expect(first.orphanedSnapshots.map((o) => o.snapshotId)).toEqual([taggedSnapshot.snapshotId]);
    expect([...(await reports.marks('alpha')).keys()].sort()).toEqual([tagged.volumeId, taggedSnapshot.snapshotId].sort());
    expect(auditTable(first)).toMatch(new RegExp(`^untagged +${old.volumeId} .*kept: untagged for IAM`, 'm'));
    expect(auditTable(first)).toMatch(new RegExp(`^untagged snapshot +${oldSnapshot.snapshotId} .*kept: untagged for IAM`, 'm'));
    expect(auditSummary(first)).toContain('1 untagged disk(s) and 1 untagged snapshot(s) left alone');

    const second = await audit();
    expect(second.deletions).toEqual([{ volumeId: tagged.volumeId, outcome: 'deleted' }]);
    expect(second.snapshotDeletions).toEqual([{ snapshotId: taggedSnapshot.snapshotId, outcome: 'deleted' }]);
    expect(ec2.mutations.map((c) => [c.verb, c.args[0]])).toEqual([
      ['deleteDisk', tagged.volumeId],
      ['deleteSnapshot', taggedSnapshot.snapshotId],
    ]);
    expect(ec2.volumes.get(old.volumeId)?.state).toBe('available');
    expect(ec2.snapshots.has(oldSnapshot.snapshotId)).toBe(true);
  });

  it('adopted since (volhook.io/cluster added) -> judged as any orphan: marked by the next audit, deleted by the one after', async () => {
    const { ec2, orphan, report, audit } = setup();
    const old = orphan(preChange);
    await report();
    expect((await audit()).untagged.map((u) => u.volumeId)).toEqual([old.volumeId]);
    ec2.volumes.get(old.volumeId)!.tags['volhook.io/cluster'] = 'alpha';
    const marked = await audit();
    expect(marked.untagged).toEqual([]);
    expect(marked.deletions).toMatchObject([{ volumeId: old.volumeId, outcome: 'marked' }]);
    expect((await audit()).deletions).toEqual([{ volumeId: old.volumeId, outcome: 'deleted' }]);
  });

  it('an orphan marked, then found without volhook.io/cluster right before its delete -> kept, said why; never deleted', async () => {
    const { ec2, orphan, report, audit } = setup();
    const d = orphan(current);
    await report();
    expect((await audit()).deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'marked' }]);
    const original = ec2.getDisk.bind(ec2);
    ec2.getDisk = async (id: string) => {
      const found = await original(id);
      if (!found) return found;
      const { 'volhook.io/cluster': _gone, ...tags } = found.tags;
      return { ...found, tags };
    };
    const result = await audit();
    expect(result.deletions).toEqual([{ volumeId: d.volumeId, outcome: 'kept', why: expect.stringContaining(ADOPT) }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it("a disk and a snapshot listed for the cluster whose volhook.io/cluster names another (in another case too) -> untagged (foreign), never deleted", async () => {
    const { ec2, orphan, orphanedSnapshot, report, audit } = setup();
    const beta = orphan({ ...current, 'volhook.io/cluster': 'beta' });
    const variant = orphan({ ...current, 'Volhook.io/Cluster': 'beta' });
    const betaSnapshot = orphanedSnapshot({ ...current, 'volhook.io/cluster': 'beta' });
    await report();
    const first = await audit();
    expect(first.untagged.map((u) => [u.volumeId, u.ownership, u.why]).sort()).toEqual(
      [
        [beta.volumeId, 'foreign', "tagged volhook.io/cluster=beta: not this cluster's to delete or detach"],
        [variant.volumeId, 'foreign', "tagged Volhook.io/Cluster=beta: not this cluster's to delete or detach"],
      ].sort(),
    );
    expect(first.untaggedSnapshots).toMatchObject([{ snapshotId: betaSnapshot.snapshotId, ownership: 'foreign' }]);
    expect(first.orphans).toEqual([]);
    await audit();
    expect(ec2.mutations).toEqual([]);
  });

  it('remove --delete-volumes: a disk and a snapshot without volhook.io/cluster -> kept, naming adopt; those with it (the control) -> deleted', async () => {
    const { ec2, reports, orphan, orphanedSnapshot } = setup();
    const old = orphan(preChange);
    const tagged = orphan(current);
    const oldSnapshot = orphanedSnapshot(preChange);
    const taggedSnapshot = orphanedSnapshot(current);
    const evidence = { clusterId: 'alpha', report: undefined, retained: await reports.retained('alpha') };
    const entries = leftBehind(await ec2.listClusterDisks(), evidence, 'us-east-1');
    expect(entries.find((e) => e.volumeId === old.volumeId)).toMatchObject({ action: 'keep', why: expect.stringContaining(ADOPT) });
    expect(entries.find((e) => e.volumeId === tagged.volumeId)).toMatchObject({ action: 'delete' });
    const snapshots = snapshotsLeftBehind(await ec2.listClusterSnapshots(), evidence, 'us-east-1');
    expect(snapshots.find((e) => e.snapshotId === oldSnapshot.snapshotId)).toMatchObject({ action: 'keep', why: expect.stringContaining(ADOPT) });
    expect(await deleteLeftBehind(ec2, 'alpha', entries, evidence)).toEqual([{ volumeId: tagged.volumeId, outcome: 'deleted' }]);
    expect(await deleteSnapshotsLeftBehind(ec2, 'alpha', snapshots, evidence)).toEqual([{ snapshotId: taggedSnapshot.snapshotId, outcome: 'deleted' }]);
    expect(ec2.mutations.map((c) => c.args[0])).toEqual([tagged.volumeId, taggedSnapshot.snapshotId]);
  });
});
