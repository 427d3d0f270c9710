import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GRACE_MS, judgeSnapshotOrphan, lostSnapshotCandidates, monthlySnapshotCost, snapshotFindings } from '../../lib/audit/index.js';
import type { ReportedSnapshotContent } from '../../lib/contract/index.js';
import type { Snapshot } from '../../lib/ec2/index.js';
import type { StoredReport } from '../../lib/reports/index.js';

const NOW = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;
const CLUSTER = 'c1';
const REGION = 'us-east-1';

const snapId = () => `snap-${randomUUID().replaceAll('-', '').slice(0, 17)}`;

function snapshot(over: Partial<Snapshot> & { content?: string | null } = {}): Snapshot {
  const { content, ...rest } = over;
  const name = content === undefined ? `snapcontent-${randomUUID()}` : content;
  return {
    snapshotId: snapId(),
    volumeId: 'vol-0aaaaaaaaaaaaaaa1',
    sizeGiB: 100,
    state: 'completed',
    startTime: new Date(NOW - 2 * HOUR).toISOString(),
    encrypted: false,
    tags: { ...(name !== null && { CSIVolumeSnapshotName: name }), [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': CLUSTER },
    ...rest,
  };
}

function content(over: Partial<ReportedSnapshotContent> = {}): ReportedSnapshotContent {
  return { content: `snapcontent-${randomUUID()}`, deletionPolicy: 'Delete', readyToUse: true, beingCreated: false, deleting: false, ...over };
}

function stored(snapshots: ReportedSnapshotContent[] | null = [], observedAt = NOW - 60_000): StoredReport {
  return { clusterId: CLUSTER, digest: 'd'.repeat(64), observedAt, receivedAt: observedAt, report: { volumes: [], attachments: [], claims: [], ...(snapshots && { snapshots }) } };
}

function findings(input: {
  snapshots: Snapshot[];
  report?: StoredReport;
  lookedUp?: Map<string, Snapshot | undefined>;
  graceMs?: number;
  retained?: Set<string>;
  chosen?: Set<string>;
  marks?: Map<string, number>;
}) {
  return snapshotFindings({ clusterId: CLUSTER, report: stored(), lookedUp: new Map(), region: REGION, now: NOW, graceMs: DEFAULT_GRACE_MS, ...input });
}

describe('orphaned snapshots', () => {
  it('completed, no content names it, past the grace, the report postdates it -> a deletable orphan with size and monthly cost', () => {
    const s = snapshot();
    const out = findings({ snapshots: [s], report: stored([content()]) });
    expect(out.orphanedSnapshots).toMatchObject([{ snapshotId: s.snapshotId, sizeGiB: 100, monthlyUsd: 5, deletable: true, name: s.tags.CSIVolumeSnapshotName }]);
    expect(out.snapshotTotals).toEqual({ orphanedSnapshots: 1, orphanedSnapshotGiB: 100, orphanedSnapshotMonthlyUsd: 5 });
    expect(monthlySnapshotCost(100, 'eu-central-1')).toBe(5.4);
    expect(monthlySnapshotCost(100, 'ap-south-2')).toBeUndefined();
  });

  it('younger than the grace -> not flagged; grace 0 -> flagged', () => {
    const young = snapshot({ startTime: new Date(NOW - 10 * 60_000).toISOString() });
    expect(findings({ snapshots: [young] }).orphanedSnapshots).toEqual([]);
    expect(findings({ snapshots: [young], graceMs: 0 }).orphanedSnapshots).toHaveLength(1);
  });

  it('in flight: a content whose being-created annotation is set names it by the tag -> never flagged, whatever the grace', () => {
    const s = snapshot({ state: 'completed' });
    const inFlight = content({ content: s.tags.CSIVolumeSnapshotName!, beingCreated: true, readyToUse: false });
    expect(findings({ snapshots: [s], report: stored([inFlight]), graceMs: 0 }).orphanedSnapshots).toEqual([]);
    expect(judgeSnapshotOrphan(s, { report: stored([inFlight]), retained: new Set(), chosen: new Set() }, NOW, 0)).toBeUndefined();
  });

  it('its content still exists but has not recorded the handle -> not flagged; a pending snapshot -> never flagged', () => {
    const s = snapshot();
    expect(findings({ snapshots: [s], report: stored([content({ content: s.tags.CSIVolumeSnapshotName!, readyToUse: false })]), graceMs: 0 }).orphanedSnapshots).toEqual([]);
    expect(findings({ snapshots: [snapshot({ state: 'pending' })], graceMs: 0 }).orphanedSnapshots).toEqual([]);
  });

  it('named by a Retain content (by its handle, as a pre-provisioned content names it) -> not flagged', () => {
    const s = snapshot({ content: 'snapcontent-long-gone' });
    const retained = content({ content: 'imported-backup', snapshotHandle: s.snapshotId, deletionPolicy: 'Retain' });
    expect(findings({ snapshots: [s], report: stored([retained]), graceMs: 0 }).orphanedSnapshots).toEqual([]);
  });

  it('the report does not postdate the snapshot by the clock skew -> unknown (its content may be newer than the report), not an orphan', () => {
    const s = snapshot({ startTime: new Date(NOW - 2 * HOUR).toISOString() });
    const out = findings({ snapshots: [s], report: stored([], NOW - 2 * HOUR + 2_000) });
    expect(out.orphanedSnapshots).toEqual([]);
    expect(out.unknownSnapshots).toMatchObject([{ snapshotId: s.snapshotId, why: expect.stringContaining('newer than the latest report') }]);
    // Control: the same snapshot against a report taken well after it -> an orphan.
    expect(findings({ snapshots: [s], report: stored([], NOW - 2 * HOUR + 6_000) }).orphanedSnapshots).toMatchObject([{ snapshotId: s.snapshotId, deletable: true }]);
  });

  it('its last known content had Retain (kept by the store after the content went) -> reported, kept; named by the operator -> deletable', () => {
    const s = snapshot();
    const retained = new Set([s.snapshotId]);
    expect(findings({ snapshots: [s], retained }).orphanedSnapshots).toMatchObject([{ snapshotId: s.snapshotId, deletable: false, retained: true, why: expect.stringContaining('deletionPolicy Retain') }]);
    expect(findings({ snapshots: [s], retained, chosen: new Set([s.snapshotId]) }).orphanedSnapshots).toMatchObject([{ deletable: true, retained: true }]);
    expect(findings({ snapshots: [s] }).orphanedSnapshots).toMatchObject([{ deletable: true }]);
  });

  it('marks: a provable orphan not marked -> marked now, not due; marked before a report received since -> due; marked after the report -> not due', () => {
    const s = snapshot();
    const report = stored([], NOW - 60_000);
    expect(findings({ snapshots: [s], report }).orphanedSnapshots[0]?.mark).toEqual({ at: new Date(NOW).toISOString(), due: false });
    expect(findings({ snapshots: [s], report, marks: new Map([[s.snapshotId, NOW - 120_000]]) }).orphanedSnapshots[0]?.mark).toEqual({ at: new Date(NOW - 120_000).toISOString(), due: true });
    expect(findings({ snapshots: [s], report, marks: new Map([[s.snapshotId, NOW - 60_000]]) }).orphanedSnapshots[0]?.mark?.due).toBe(false);
  });

  it('no CSIVolumeSnapshotName tag (not made by volhook) -> listed, never deletable', () => {
    const [finding] = findings({ snapshots: [snapshot({ content: null })] }).orphanedSnapshots;
    expect(finding).toMatchObject({ deletable: false, why: expect.stringContaining('CSIVolumeSnapshotName') });
  });

  it('a start time EC2 did not give (the epoch) is never taken for old', () => {
    expect(findings({ snapshots: [snapshot({ startTime: new Date(0).toISOString() })] }).orphanedSnapshots).toEqual([]);
  });

  it('a report without contents (an older forwarder) -> no snapshot judged, and a note that says why', () => {
    const out = findings({ snapshots: [snapshot()], report: stored(null) });
    expect(out.orphanedSnapshots).toEqual([]);
    expect(out.lostSnapshots).toEqual([]);
    expect(out.notes.join(' ')).toContain('carries no VolumeSnapshotContents');
  });
});

describe('lost snapshots', () => {
  it('a ready content whose handle EC2 no longer has (looked up by ID) -> lost; one EC2 still has elsewhere -> not', () => {
    const gone = content({ snapshotHandle: snapId(), deletionPolicy: 'Retain' });
    const elsewhere = content({ snapshotHandle: snapId() });
    const report = stored([gone, elsewhere]);
    expect(lostSnapshotCandidates([], report).sort()).toEqual([gone.snapshotHandle, elsewhere.snapshotHandle].sort());
    const lookedUp = new Map<string, Snapshot | undefined>([
      [gone.snapshotHandle!, undefined],
      [elsewhere.snapshotHandle!, snapshot({ snapshotId: elsewhere.snapshotHandle! })],
    ]);
    expect(findings({ snapshots: [], report, lookedUp }).lostSnapshots).toEqual([{ snapshotId: gone.snapshotHandle, content: gone.content, deletionPolicy: 'Retain' }]);
  });

  it('listed -> not lost; a Delete content being deleted, or one never ready -> not lost, and not looked up', () => {
    const listed = snapshot();
    const deleting = content({ snapshotHandle: snapId(), deleting: true });
    const neverReady = content({ snapshotHandle: snapId(), readyToUse: false });
    const report = stored([content({ snapshotHandle: listed.snapshotId }), deleting, neverReady]);
    expect(lostSnapshotCandidates([listed], report)).toEqual([deleting.snapshotHandle]);
    const lookedUp = new Map([[deleting.snapshotHandle!, undefined]]);
    expect(findings({ snapshots: [listed], report, lookedUp }).lostSnapshots).toEqual([]);
  });
});
