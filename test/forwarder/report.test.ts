import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalReport, ItemSchema, reportDigest, splitReport, MAX_REPORT_PART_BYTES, REPORT_WITHIN_MAX_SECONDS, type VolumeReport } from '../../lib/contract/index.js';
import { bigReport, incompressible } from '../contract/big-report.js';
import { buildVolumeReport, ReportTracker } from '../../lib/forwarder/report.js';
import { attachment, claim, csiNode, volume } from './objects.js';

const DRIVER_NAME = 'ebs.csi.aws.com';
const ownership = { provisioner: DRIVER_NAME, driver: DRIVER_NAME };

describe('the volume report', () => {
  const pv = volume('pvc-1', { provisionedBy: 'ebs.csi.aws.com' });
  pv.spec!.claimRef = { namespace: 'default', name: 'data', uid: 'c-1' };
  const foreign = volume('pv-efs', { driver: 'efs.csi.aws.com' });
  const va = { ...attachment('csi-1', 'pvc-1', 'n1'), status: { attached: true } };
  const leaving = { ...attachment('csi-2', 'pvc-1', 'n2'), metadata: { name: 'csi-2', deletionTimestamp: new Date() } };
  const source = {
    claims: () => [claim('data', { uid: 'c-1' }), claim('efs', { uid: 'c-2', provisioner: 'efs.csi.aws.com' })],
    volumes: () => [pv, foreign],
    attachments: () => [va, leaving, attachment('csi-efs', 'pv-efs', 'n1', 'efs.csi.aws.com')],
    csiNode: (name: string) => (name === 'n1' ? csiNode('n1', 'i-0aaaaaaaaaaaaaaaa') : undefined),
    snapshotContents: () => [
      { metadata: { name: 'snapcontent-1', uid: 'u-1' }, spec: { driver: 'ebs.csi.aws.com', deletionPolicy: 'Delete', source: { volumeHandle: 'vol-0123456789abcdef0' } }, status: { snapshotHandle: 'snap-0aaaaaaaaaaaaaaa1', readyToUse: true } },
      {
        metadata: { name: 'snapcontent-2', annotations: { 'snapshot.storage.kubernetes.io/volumesnapshot-being-created': 'yes' } },
        spec: { driver: 'ebs.csi.aws.com', deletionPolicy: 'Retain', source: { volumeHandle: 'vol-0123456789abcdef0' } },
      },
      { metadata: { name: 'imported', deletionTimestamp: new Date() }, spec: { driver: 'ebs.csi.aws.com', deletionPolicy: 'Retain', source: { snapshotHandle: 'snap-0aaaaaaaaaaaaaaa2' } } },
      { metadata: { name: 'efs-content' }, spec: { driver: 'efs.csi.aws.com', deletionPolicy: 'Delete', source: { snapshotHandle: 'snap-0aaaaaaaaaaaaaaa3' } } },
    ],
  };

  it("our PVs with their disks and claims, our attachments (not those being deleted) with the node's instance, our claims' uids", () => {
    expect(buildVolumeReport(source, ownership)).toEqual({
      volumes: [{ pv: 'pvc-1', pvUid: 'uid-pvc-1', volumeId: 'vol-0123456789abcdef0', reclaimPolicy: 'Delete', phase: 'Bound', claim: { namespace: 'default', name: 'data', uid: 'c-1' } }],
      attachments: [{ name: 'csi-1', volumeId: 'vol-0123456789abcdef0', instanceId: 'i-0aaaaaaaaaaaaaaaa', attached: true }],
      claims: ['c-1'],
      snapshots: [
        { content: 'snapcontent-1', contentUid: 'u-1', snapshotHandle: 'snap-0aaaaaaaaaaaaaaa1', deletionPolicy: 'Delete', readyToUse: true, beingCreated: false, deleting: false },
        { content: 'snapcontent-2', deletionPolicy: 'Retain', readyToUse: false, beingCreated: true, deleting: false },
        { content: 'imported', snapshotHandle: 'snap-0aaaaaaaaaaaaaaa2', deletionPolicy: 'Retain', readyToUse: false, beingCreated: false, deleting: true },
      ],
    });
  });

  it("an inline volume's attachment (no PV) -> listed with the disk its inlineVolumeSpec names; another driver's inline one -> not", () => {
    const inline = (name: string, driver: string) => ({
      metadata: { name },
      spec: { attacher: DRIVER_NAME, nodeName: 'n1', source: { inlineVolumeSpec: { csi: { driver, volumeHandle: 'vol-0bbbbbbbbbbbbbbb1' } } } },
      status: { attached: true },
    });
    const report = buildVolumeReport({ ...source, attachments: () => [va, inline('csi-inline', DRIVER_NAME), inline('csi-odd', 'efs.csi.aws.com')] }, ownership);
    expect(report.attachments).toEqual([
      { name: 'csi-1', volumeId: 'vol-0123456789abcdef0', instanceId: 'i-0aaaaaaaaaaaaaaaa', attached: true },
      { name: 'csi-inline', volumeId: 'vol-0bbbbbbbbbbbbbbb1', instanceId: 'i-0aaaaaaaaaaaaaaaa', attached: true },
    ]);
  });

  it('a report without snapshots (an older forwarder) keeps its digest; the contents are covered by the digest', () => {
    const report = buildVolumeReport(source, ownership);
    const { snapshots, ...older } = report;
    // As forwarders without snapshots computed it: the three lists alone.
    const before = createHash('sha256').update(JSON.stringify({ volumes: older.volumes, attachments: older.attachments, claims: older.claims })).digest('hex');
    expect(reportDigest(older)).toBe(before);
    expect(reportDigest(older)).not.toBe(reportDigest(report));
    const retained = { ...report, snapshots: snapshots!.map((s) => (s.content === 'snapcontent-1' ? { ...s, snapshotHandle: 'snap-0aaaaaaaaaaaaaaa9' } : s)) };
    expect(reportDigest(retained)).not.toBe(reportDigest(report));
    expect(reportDigest({ ...report, snapshots: [...snapshots!].reverse() })).toBe(reportDigest(report));
  });

  it('the digest does not depend on the order the caches list objects in', () => {
    const report = buildVolumeReport(source, ownership);
    const shuffled = { ...report, claims: ['c-9', ...report.claims], volumes: [...report.volumes].reverse() };
    const again = { ...report, claims: [...report.claims, 'c-9'] };
    expect(reportDigest(shuffled)).toBe(reportDigest(again));
    expect(reportDigest(again)).not.toBe(reportDigest(report));
  });

  it('tracker: the whole report until the backend answers done; then the digest alone; a changed report or an answer other than done -> the whole report again', () => {
    const tracker = new ReportTracker();
    const report = buildVolumeReport(source, ownership);
    expect(tracker.item(report, 1000).report).toBeDefined();
    tracker.answered(true);
    expect(tracker.item(report, 1000)).toEqual({ kind: 'VolumeReport', digest: reportDigest(report), observedAt: 1000 });
    tracker.answered(false);
    expect(tracker.item(report, 1000).report).toBeDefined();
    tracker.answered(true);
    const changed = { ...report, claims: [...report.claims, 'c-3'] };
    expect(tracker.item(changed, 1000).report).toEqual(changed);
  });

  it('tracker, when a resync offers the report: every resync until the backend says how soon it needs one (an older backend never does); then only when needed by the next resync or changed', () => {
    const RESYNC = 300_000;
    const tracker = new ReportTracker();
    const report = buildVolumeReport(source, ownership);
    const read = () => report;
    expect(tracker.due(read, 0, RESYNC)).toBe(true);
    tracker.item(report, 0);
    // An answer without reportWithinSeconds: every resync, as before the backend asked for less.
    tracker.answered(true, undefined, 0);
    expect(tracker.due(read, 1_000, RESYNC)).toBe(true);
    tracker.item(report, 1_000);
    tracker.answered(true, 1800, 1_000);
    expect(tracker.due(read, 1_000 + RESYNC, RESYNC)).toBe(false);
    // The last resync before the backend needs it: the next would be late.
    expect(tracker.due(read, 1_000 + 1_500_000, RESYNC)).toBe(false);
    expect(tracker.due(read, 1_000 + 1_500_001, RESYNC)).toBe(true);
    // Changed: at once, however long the backend would wait.
    expect(tracker.due(() => ({ ...report, claims: [...report.claims, 'c-3'] }), 1_000 + RESYNC, RESYNC)).toBe(true);
    // Asked for one every resync again (the cluster has marks): every resync.
    tracker.item(report, 2_000);
    tracker.answered(true, undefined, 2_000);
    expect(tracker.due(read, 2_000 + RESYNC, RESYNC)).toBe(true);
    // An answer other than done: every resync until one is.
    tracker.item(report, 3_000);
    tracker.answered(true, 1800, 3_000);
    tracker.item(report, 4_000);
    tracker.answered(false, undefined, 4_000);
    expect(tracker.due(read, 4_000 + RESYNC, RESYNC)).toBe(true);
  });

  it(`tracker: told to wait longer than REPORT_WITHIN_MAX_SECONDS (${REPORT_WITHIN_MAX_SECONDS} s) -> waits that long at most`, () => {
    const RESYNC = 300_000;
    const tracker = new ReportTracker();
    const report = buildVolumeReport(source, ownership);
    tracker.item(report, 0);
    tracker.answered(true, 86_400, 0);
    const last = REPORT_WITHIN_MAX_SECONDS * 1000 - RESYNC;
    expect(tracker.due(() => report, last, RESYNC)).toBe(false);
    expect(tracker.due(() => report, last + 1, RESYNC)).toBe(true);
  });

  it('tracker, a report larger than a part: one part per turn of one reading, whatever the caches say meanwhile; done -> the digest alone', () => {
    const tracker = new ReportTracker();
    const first = bigReport(6000);
    const parts = splitReport(canonicalReport(first));
    expect(parts.length).toBeGreaterThan(2);
    let reads = 0;
    const read = (report: VolumeReport) => () => ((reads += 1), report);
    const sent = parts.map((_, i) => {
      // The cluster changes between turns: the parts of the first reading go on all the same.
      const item = tracker.item(read(i === 0 ? first : bigReport(6001)), 1000 + i);
      tracker.answered(false);
      return item;
    });
    expect(reads).toBe(1);
    expect(sent.map((i) => i.part)).toEqual(parts.map((_, index) => ({ index, count: parts.length })));
    expect(sent.map((i) => i.report)).toEqual(parts);
    expect(new Set(sent.map((i) => `${i.digest}@${i.observedAt}`))).toEqual(new Set([`${reportDigest(first)}@1000`]));
    for (const item of sent) expect(ItemSchema.safeParse(item).success).toBe(true);
    // A part lost on the way: the next round sends them all again, from the first.
    expect(tracker.item(read(first), 2000).part).toEqual({ index: 0, count: parts.length });
    tracker.answered(true);
    expect(tracker.item(read(first), 3000)).toEqual({ kind: 'VolumeReport', digest: reportDigest(first), observedAt: 3000 });
  });

  it('tracker: parts never all taken after two rounds -> the caches are read again and the new report goes from its first part', () => {
    const tracker = new ReportTracker();
    const first = bigReport(6000);
    const count = splitReport(canonicalReport(first)).length;
    for (let i = 0; i < 2 * count; i += 1) {
      tracker.item(first, 1000);
      tracker.answered(false);
    }
    const later = bigReport(6001);
    const item = tracker.item(later, 5000);
    expect(item).toMatchObject({ digest: reportDigest(later), observedAt: 5000, part: { index: 0 } });
  });

  it('tracker: one entry too large for a part alone -> sent as a part the contract refuses, naming the entry', () => {
    const tracker = new ReportTracker();
    const report = bigReport(10);
    report.volumes.push({ pv: 'pv-enormous', volumeId: 'vol-0123456789abcdef1', reclaimPolicy: 'Delete', phase: incompressible(2 * MAX_REPORT_PART_BYTES) });
    const items = [tracker.item(report, 1000), tracker.item(report, 1000)];
    const problems = items.map((i) => ItemSchema.safeParse(i).error?.issues.map((x) => x.message).join());
    expect(problems.filter(Boolean)).toEqual([expect.stringContaining('its PersistentVolume "pv-enormous" alone is')]);
  });
});
