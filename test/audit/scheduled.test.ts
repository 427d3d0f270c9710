import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditAllClusters, type AuditResult } from '../../lib/audit/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';

const SECRET = 'a-secret-of-at-least-24-bytes';
const now = Date.now();

describe('the scheduled audit', () => {
  it("every cluster with a report, by its registration: deletes only where deleteOrphans is set, two hourly audits the two phases (mark, then delete after a report); a cluster without a registration is skipped, said why", async () => {
    const ec2 = new FakeGateway('keep');
    const reports = createMemoryReportStore();
    const orphanOf = (clusterId: string) =>
      ec2.addVolume({
        volumeId: `vol-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
        tags: { CSIVolumeName: `pvc-${randomUUID()}`, [`kubernetes.io/cluster/${clusterId}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': clusterId },
        createdAt: new Date(now - 3 * 3_600_000).toISOString(),
      });
    const kept = orphanOf('keep');
    const cleaned = orphanOf('clean');
    for (const clusterId of ['keep', 'clean', 'gone']) {
      await reports.put({ clusterId, digest: 'a'.repeat(64), observedAt: now - 1000, receivedAt: now - 1000, report: { volumes: [], attachments: [], claims: [] } });
    }
    const registry = createStaticRegistry([
      { clusterId: 'keep', secrets: [SECRET], region: 'us-east-1' },
      { clusterId: 'clean', secrets: [SECRET], region: 'us-east-1', audit: { deleteOrphans: true, graceSeconds: 7200 } },
    ]);
    let results: AuditResult[] = [];
    const skipped: string[] = [];
    /**
     * One hourly run; then the clusters' forwarders report again (their digests, received later):
     * 5 minutes after it and, resyncing every 5 minutes, 5 minutes before the next run — the
     * report a deletion rests on must be fresh when it happens.
     */
    const hourly = async (at: number) => {
      results = [];
      const outcomes = await auditAllClusters({
        registry,
        reports,
        gatewayFor: (registration) => ec2.forCluster(registration.clusterId),
        onResult: (r) => results.push(r),
        onSkipped: (id, why) => skipped.push(`${id}: ${why}`),
        now: () => at,
      });
      for (const clusterId of ['keep', 'clean', 'gone']) {
        for (const resync of [300_000, 3_300_000]) await reports.confirm(clusterId, 'a'.repeat(64), at + resync, at + resync);
      }
      return outcomes;
    };
    const outcomes = await hourly(now);
    expect(outcomes.map((o) => `${o.clusterId}:${o.outcome}`)).toEqual(['clean:audited', 'gone:skipped', 'keep:audited']);
    expect(skipped.join()).toContain('no registration');
    expect(results.find((r) => r.clusterId === 'keep')?.orphans.map((o) => o.volumeId)).toEqual([kept.volumeId]);
    expect(results.find((r) => r.clusterId === 'keep')?.deletions).toEqual([]);
    // The first of two consecutive hourly audits marks, the second deletes.
    expect(results.find((r) => r.clusterId === 'clean')?.deletions).toMatchObject([{ volumeId: cleaned.volumeId, outcome: 'marked' }]);
    expect(ec2.volumes.get(cleaned.volumeId)?.state).toBe('available');
    await hourly(now + 3_600_000);
    expect(results.find((r) => r.clusterId === 'keep')?.deletions).toEqual([]);
    expect(results.find((r) => r.clusterId === 'clean')?.deletions).toEqual([{ volumeId: cleaned.volumeId, outcome: 'deleted' }]);
    expect(results.find((r) => r.clusterId === 'clean')?.graceSeconds).toBe(7200);
    expect(ec2.volumes.get(kept.volumeId)?.state).toBe('available');
    expect(ec2.volumes.get(cleaned.volumeId)?.state).toBe('deleting');
  });

  it('orphaned snapshots are deleted only where deleteOrphanedSnapshots is set, not by deleteOrphans alone', async () => {
    const ec2 = new FakeGateway('disks-only');
    const reports = createMemoryReportStore();
    const snapshotOf = (clusterId: string) =>
      ec2.addSnapshot({
        snapshotId: `snap-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
        startTime: new Date(now - 3 * 3_600_000).toISOString(),
        tags: { CSIVolumeSnapshotName: `snapcontent-${randomUUID()}`, [`kubernetes.io/cluster/${clusterId}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': clusterId },
      });
    const kept = snapshotOf('disks-only');
    const cleaned = snapshotOf('snapshots-too');
    for (const clusterId of ['disks-only', 'snapshots-too']) {
      await reports.put({ clusterId, digest: 'a'.repeat(64), observedAt: now - 1000, receivedAt: now - 1000, report: { volumes: [], attachments: [], claims: [], snapshots: [] } });
    }
    const registry = createStaticRegistry([
      { clusterId: 'disks-only', secrets: [SECRET], region: 'us-east-1', audit: { deleteOrphans: true } },
      { clusterId: 'snapshots-too', secrets: [SECRET], region: 'us-east-1', audit: { deleteOrphanedSnapshots: true } },
    ]);
    let results: AuditResult[] = [];
    for (const at of [now, now + 3_600_000]) {
      results = [];
      await auditAllClusters({ registry, reports, gatewayFor: (r) => ec2.forCluster(r.clusterId), onResult: (r) => results.push(r), onSkipped: () => {}, now: () => at });
      for (const clusterId of ['disks-only', 'snapshots-too']) {
        for (const resync of [300_000, 3_300_000]) await reports.confirm(clusterId, 'a'.repeat(64), at + resync, at + resync);
      }
    }
    expect(results.find((r) => r.clusterId === 'disks-only')?.orphanedSnapshots.map((o) => o.snapshotId)).toEqual([kept.snapshotId]);
    expect(results.find((r) => r.clusterId === 'disks-only')?.snapshotDeletions).toEqual([]);
    expect(results.find((r) => r.clusterId === 'snapshots-too')?.snapshotDeletions).toEqual([{ snapshotId: cleaned.snapshotId, outcome: 'deleted' }]);
    expect([...ec2.snapshots.keys()]).toEqual([kept.snapshotId]);
  });
});
