/**
 * The snapshots of a group snapshot are tagged with the group content's name, which no
 * VolumeSnapshotContent has: the forwarder's report lists the group content (`group: true`), and
 * the audit and teardown never take the group's snapshots for orphans while it is there.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GRACE_MS, snapshotFindings } from '../../lib/audit/index.js';
import { snapshotTeardownVerdict } from '../../lib/audit/teardown.js';
import { VolumeReportSchema } from '../../lib/contract/index.js';
import type { Snapshot } from '../../lib/ec2/index.js';
import type { GroupSnapshotContentObject } from '../../lib/forwarder/items.js';
import { buildVolumeReport } from '../../lib/forwarder/report.js';
import type { StoredReport } from '../../lib/reports/index.js';

const NOW = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;
const CLUSTER = 'c1';
const DRIVER = 'ebs.csi.aws.com';
const GROUP = 'groupsnapcontent-5b0c4e1a-7f0e-4a8b-9c1d-2e3f4a5b6c7d';

const groupSnapshot = (i: number): Snapshot => ({
  snapshotId: `snap-0000000000000000${i}`,
  volumeId: `vol-000000000000000${i}`,
  sizeGiB: 10,
  state: 'completed',
  startTime: new Date(NOW - 5 * HOUR).toISOString(),
  encrypted: false,
  tags: { CSIVolumeSnapshotName: GROUP, [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': CLUSTER },
});
const snapshots = [1, 2, 3].map(groupSnapshot);

const groupContent = (driver = DRIVER, deletionPolicy = 'Delete'): GroupSnapshotContentObject => ({
  apiVersion: 'groupsnapshot.storage.k8s.io/v1',
  kind: 'VolumeGroupSnapshotContent',
  metadata: { name: GROUP, uid: 'gc-uid' },
  spec: { driver, deletionPolicy, source: { volumeHandles: snapshots.map((s) => s.volumeId) }, volumeGroupSnapshotClassName: 'group', volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly' } },
  status: { volumeGroupSnapshotHandle: GROUP, readyToUse: true },
});

/** The report the forwarder builds with these group contents (and no VolumeSnapshotContent naming the snapshots). */
function reportWith(groups: GroupSnapshotContentObject[]): StoredReport {
  const built = buildVolumeReport(
    { claims: () => [], volumes: () => [], attachments: () => [], csiNode: () => undefined, snapshotContents: () => [], groupSnapshotContents: () => groups },
    { provisioner: DRIVER, driver: DRIVER },
  );
  const report = VolumeReportSchema.parse(built);
  return { clusterId: CLUSTER, digest: 'd'.repeat(64), observedAt: NOW - 60_000, receivedAt: NOW - 60_000, report };
}

const findings = (report: StoredReport) => snapshotFindings({ clusterId: CLUSTER, snapshots, report, lookedUp: new Map(), region: 'us-east-1', now: NOW, graceMs: DEFAULT_GRACE_MS });

describe('group snapshots in the report and the audit', () => {
  it('a group content of ours -> reported by its name as a group, without a handle', () => {
    expect(reportWith([groupContent()]).report.snapshots).toEqual([
      { content: GROUP, contentUid: 'gc-uid', deletionPolicy: 'Delete', readyToUse: true, beingCreated: false, deleting: false, group: true },
    ]);
    expect(reportWith([groupContent('other.csi.example.com')]).report.snapshots).toEqual([]);
  });

  it('its three snapshots, past the grace, no member content naming them yet -> not orphans, not lost', () => {
    const out = findings(reportWith([groupContent()]));
    expect(out.orphanedSnapshots).toEqual([]);
    expect(out.unknownSnapshots).toEqual([]);
    expect(out.lostSnapshots).toEqual([]);
  });

  it('teardown, as for a content: a Retain group content keeps its snapshots, a Delete one lets them go', () => {
    const evidence = (policy: string) => ({ clusterId: CLUSTER, report: reportWith([groupContent(DRIVER, policy)]), retained: new Set<string>() });
    for (const s of snapshots) {
      expect(snapshotTeardownVerdict(s, evidence('Retain'))).toEqual({ action: 'keep', why: `VolumeSnapshotContent ${GROUP} (Retain) names it` });
      expect(snapshotTeardownVerdict(s, evidence('Delete'))).toEqual({ action: 'delete' });
    }
  });

  it('control: the group content gone -> the three are provable, deletable orphans', () => {
    const out = findings(reportWith([]));
    expect(out.orphanedSnapshots.map((o) => [o.snapshotId, o.deletable])).toEqual(snapshots.map((s) => [s.snapshotId, true]));
  });
});
