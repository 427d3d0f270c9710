import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditFindings, claimUidOf, DEFAULT_GRACE_MS, monthlyCost, type AuditInput } from '../../lib/audit/index.js';
import type { VolumeReport } from '../../lib/contract/index.js';
import type { Disk } from '../../lib/ec2/index.js';
import type { StoredReport } from '../../lib/reports/index.js';

const NOW = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;
const CLUSTER = 'c1';

function disk(over: Partial<Disk> & { uid?: string } = {}): Disk {
  const uid = over.uid ?? randomUUID();
  const { uid: _uid, ...rest } = over;
  return {
    volumeId: `vol-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
    zone: 'us-east-1a',
    sizeGiB: 100,
    state: 'available',
    type: 'gp3',
    iops: 3000,
    throughput: 125,
    encrypted: false,
    multiAttach: false,
    tags: {
      CSIVolumeName: `pvc-${uid}`,
      [`kubernetes.io/cluster/${CLUSTER}`]: 'owned',
      'ebs.csi.aws.com/cluster': 'true',
      'volhook.io/cluster': CLUSTER,
      'kubernetes.io/created-for/pvc/namespace': 'ns',
      'kubernetes.io/created-for/pvc/name': 'data',
    },
    attachments: [],
    createdAt: new Date(NOW - 2 * HOUR).toISOString(),
    ...rest,
  };
}

function stored(report: Partial<VolumeReport> = {}, observedAt = NOW - 60_000): StoredReport {
  return { clusterId: CLUSTER, digest: 'd'.repeat(64), observedAt, receivedAt: observedAt, report: { volumes: [], attachments: [], claims: [], ...report } };
}

function audit(input: Partial<AuditInput>) {
  return auditFindings({ clusterId: CLUSTER, region: 'us-east-1', disks: [], report: stored(), lookedUp: new Map(), now: NOW, graceMs: DEFAULT_GRACE_MS, ...input });
}

describe('orphans', () => {
  it('available, no PV names it, past the grace, claim gone from a later report -> a deletable orphan with size and cost', () => {
    const d = disk();
    const { orphans, totals } = audit({ disks: [d] });
    expect(orphans).toMatchObject([{ volumeId: d.volumeId, deletable: true, sizeGiB: 100, monthlyUsd: 8, claim: { namespace: 'ns', name: 'data' } }]);
    expect(totals).toEqual({ orphanedVolumes: 1, orphanedGiB: 100, orphanedMonthlyUsd: 8, unpriced: 0 });
  });

  it('younger than the grace -> not flagged; grace 0 -> flagged', () => {
    const young = disk({ createdAt: new Date(NOW - 10 * 60_000).toISOString() });
    expect(audit({ disks: [young] }).orphans).toEqual([]);
    expect(audit({ disks: [young], graceMs: 0 }).orphans).toHaveLength(1);
  });

  it('its claim is still in the report -> an orphan, not deletable', () => {
    const uid = randomUUID();
    const [o] = audit({ disks: [disk({ uid })], report: stored({ claims: [uid] }) }).orphans;
    expect(o).toMatchObject({ deletable: false });
    expect(o?.why).toContain('still exists');
  });

  it('the report predates the disk -> unknown, not an orphan (its claim, its PV may be newer than the report)', () => {
    const d = disk();
    const result = audit({ disks: [d], report: stored({}, Date.parse(d.createdAt!) - 1) });
    expect(result.orphans).toEqual([]);
    expect(result.unknown).toMatchObject([{ volumeId: d.volumeId, why: expect.stringContaining('newer than the latest report') }]);
  });

  it('a disk made after the latest report with no claim in its tags (a static PV\'s, made since) -> unknown, not an orphan "whose tag names no claim"; the same disk older than the report -> that orphan', () => {
    const made = NOW - 2 * HOUR;
    const d = disk({ createdAt: new Date(made).toISOString() });
    delete d.tags.CSIVolumeName;
    const newer = audit({ disks: [d], report: stored({}, made - 60_000) });
    expect(newer.orphans).toEqual([]);
    expect(newer.unknown).toMatchObject([{ volumeId: d.volumeId, sizeGiB: 100, monthlyUsd: 8 }]);
    const older = audit({ disks: [d], report: stored({}, made + 60_000) });
    expect(older.unknown).toEqual([]);
    expect(older.orphans).toMatchObject([{ volumeId: d.volumeId, deletable: false, why: expect.stringContaining('names no claim') }]);
  });

  it("the report's age by the backend's clock: the earlier of the sender's time and the receipt", () => {
    const result = audit({ report: { ...stored({}, NOW - 60_000), receivedAt: NOW - 90_000 } });
    expect(result).toMatchObject({ reportAt: new Date(NOW - 90_000).toISOString(), reportAgeSeconds: 90, reportObservedAt: new Date(NOW - 60_000).toISOString() });
  });

  it('a forwarder clock 200 s fast: a disk made after the report was received, before the time the forwarder claims -> unknown, never deletable; a report received after the disk -> deletable', () => {
    const received = NOW - 2 * HOUR;
    const d = disk({ createdAt: new Date(received + 20_000).toISOString() });
    const fast = { ...stored({}, received + 200_000), receivedAt: received };
    const result = audit({ disks: [d], report: fast });
    expect(result.orphans).toEqual([]);
    expect(result.unknown.map((u) => u.volumeId)).toEqual([d.volumeId]);
    expect(audit({ disks: [d], report: { ...fast, receivedAt: received + 200_000 } }).orphans).toMatchObject([{ volumeId: d.volumeId, deletable: true }]);
  });

  it('a report kept before reports were dated by the backend (receivedAt 0) -> nothing judged orphaned, and a note says why', () => {
    const result = audit({ disks: [disk()], report: { ...stored(), receivedAt: 0 } });
    expect(result.orphans).toEqual([]);
    expect(result.unknown).toHaveLength(1);
    expect(result.notes.join(' ')).toContain('before the backend dated reports by its own clock');
  });

  it('its last known PV had Retain (the store keeps it after the PV went) -> an orphan, retained, not deletable; named by the operator -> deletable', () => {
    const d = disk();
    const retained = new Set([d.volumeId]);
    expect(audit({ disks: [d], retained }).orphans).toMatchObject([{ volumeId: d.volumeId, deletable: false, retained: true, why: expect.stringContaining('reclaimPolicy Retain') }]);
    expect(audit({ disks: [d], retained, chosen: new Set([d.volumeId]) }).orphans).toMatchObject([{ deletable: true, retained: true }]);
    expect(audit({ disks: [d], retained: new Set() }).orphans).toMatchObject([{ deletable: true }]);
  });

  it('marks: a provable orphan not marked yet -> marked now, not due; marked before the report -> due; marked at or after it -> not due; an orphan not provable -> no mark', () => {
    const d = disk();
    const report = stored({}, NOW - 60_000);
    expect(audit({ disks: [d], report }).orphans[0]?.mark).toEqual({ at: new Date(NOW).toISOString(), due: false });
    expect(audit({ disks: [d], report, marks: new Map([[d.volumeId, NOW - 61_000]]) }).orphans[0]?.mark).toEqual({ at: new Date(NOW - 61_000).toISOString(), due: true });
    expect(audit({ disks: [d], report, marks: new Map([[d.volumeId, NOW - 60_000]]) }).orphans[0]?.mark?.due).toBe(false);
    const claimed = disk();
    const [o] = audit({ disks: [claimed], report: stored({ claims: [claimUidOf(claimed)!] }) }).orphans;
    expect(o?.mark).toBeUndefined();
  });

  it('named by a PV (Retain or Delete), attached, creating or being deleted -> no orphan', () => {
    const retained = disk();
    const attached = disk({ state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdaa', state: 'attached', attachTime: new Date(NOW).toISOString() }] });
    const disks = [retained, attached, disk({ state: 'creating' }), disk({ state: 'deleting' })];
    const report = stored({ volumes: [{ pv: 'pv-static', volumeId: retained.volumeId, reclaimPolicy: 'Retain', phase: 'Released' }] });
    expect(audit({ disks, report }).orphans).toEqual([]);
  });

  it('no claim uid in its tags (not made by volhook) -> an orphan, never deletable', () => {
    const d = disk();
    delete d.tags.CSIVolumeName;
    expect(audit({ disks: [d] }).orphans).toMatchObject([{ deletable: false }]);
  });

  it('no report from the cluster -> no findings, and a note that says why', () => {
    const result = audit({ disks: [disk()], report: undefined });
    expect(result.orphans).toEqual([]);
    expect(result.notes.join()).toContain('no volume report');
  });
});

describe('lost', () => {
  it("a PV whose disk EC2 does not have -> lost, with its claim; the disk of another cluster, or a Released Delete PV's -> not", () => {
    const elsewhere = disk({ tags: { 'kubernetes.io/cluster/other': 'owned' } });
    const report = stored({
      volumes: [
        { pv: 'pvc-a', pvUid: 'u-a', volumeId: 'vol-0000000000000000a', reclaimPolicy: 'Delete', phase: 'Bound', claim: { namespace: 'ns', name: 'a', uid: 'c-a' } },
        { pv: 'pvc-b', volumeId: elsewhere.volumeId, reclaimPolicy: 'Retain', phase: 'Bound' },
        { pv: 'pvc-c', volumeId: 'vol-0000000000000000c', reclaimPolicy: 'Delete', phase: 'Released' },
      ],
    });
    const lookedUp = new Map<string, Disk | undefined>([
      ['vol-0000000000000000a', undefined],
      [elsewhere.volumeId, elsewhere],
      ['vol-0000000000000000c', undefined],
    ]);
    expect(audit({ report, lookedUp }).lost).toEqual([{ volumeId: 'vol-0000000000000000a', pv: 'pvc-a', pvUid: 'u-a', claim: { namespace: 'ns', name: 'a', uid: 'c-a' } }]);
  });

  it('a PV whose disk is listed as deleting -> lost', () => {
    const gone = disk({ state: 'deleting' });
    const report = stored({ volumes: [{ pv: 'pvc-x', volumeId: gone.volumeId, reclaimPolicy: 'Delete', phase: 'Bound' }] });
    expect(audit({ disks: [gone], report }).lost).toHaveLength(1);
  });
});

describe('drift', () => {
  const attachedAt = new Date(NOW - 10 * 60_000).toISOString();
  it('attached in EC2 before the report, no VolumeAttachment names it -> drift; one attached after the report -> not judged', () => {
    const old = disk({ state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdz', state: 'attached', attachTime: attachedAt }] });
    const fresh = disk({ state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdy', state: 'attached', attachTime: new Date(NOW).toISOString() }] });
    const { drift } = audit({ disks: [old, fresh], report: stored({}, NOW - 60_000) });
    expect(drift).toMatchObject([{ volumeId: old.volumeId, direction: 'attached-without-volumeattachment', instanceId: 'i-1' }]);
  });

  it('a VolumeAttachment reported attached, the disk attached elsewhere or not at all -> drift; matching -> none', () => {
    const loose = disk();
    const matched = disk({ state: 'in-use', attachments: [{ instanceId: 'i-2', device: '/dev/xvdaa', state: 'attached', attachTime: attachedAt }] });
    const report = stored({
      volumes: [
        { pv: 'pv-1', volumeId: loose.volumeId, reclaimPolicy: 'Delete', phase: 'Bound' },
        { pv: 'pv-2', volumeId: matched.volumeId, reclaimPolicy: 'Delete', phase: 'Bound' },
      ],
      attachments: [
        { name: 'csi-1', volumeId: loose.volumeId, instanceId: 'i-1', attached: true },
        { name: 'csi-2', volumeId: matched.volumeId, instanceId: 'i-2', attached: true },
      ],
    });
    expect(audit({ disks: [loose, matched], report }).drift).toMatchObject([{ volumeId: loose.volumeId, direction: 'volumeattachment-without-attachment', volumeAttachment: 'csi-1' }]);
  });
});

describe('cost', () => {
  it.each([
    [{ type: 'gp3', sizeGiB: 100 }, 'us-east-1', 8],
    [{ type: 'gp3', sizeGiB: 100, iops: 4000, throughput: 225 }, 'us-east-1', 8 + 5 + 4],
    [{ type: 'io2', sizeGiB: 10, iops: 40_000 }, 'us-east-1', 1.25 + 32_000 * 0.065 + 8_000 * 0.0455],
    [{ type: 'gp2', sizeGiB: 10 }, 'eu-west-1', 1.1],
  ])('%o in %s -> $%d a month', (volume, region, usd) => {
    expect(monthlyCost(volume, region)).toBeCloseTo(usd, 2);
  });

  it('a Region the table lacks -> unpriced (undefined), and the finding counts as unpriced, never $0', () => {
    expect(monthlyCost({ type: 'gp3', sizeGiB: 10 }, 'ap-south-2')).toBeUndefined();
    const result = audit({ disks: [disk()], region: 'ap-south-2' });
    expect(result.orphans[0]?.monthlyUsd).toBeUndefined();
    expect(result.totals.unpriced).toBe(1);
  });
});
