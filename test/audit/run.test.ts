import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runAudit } from '../../lib/audit/index.js';
import { createMemoryReportStore, type ReportStore } from '../../lib/reports/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';

const HOUR = 3_600_000;
const now = Date.now();

function setup() {
  const ec2 = new FakeGateway('alpha');
  const reports = createMemoryReportStore();
  const orphan = (over: { uid?: string; ageMs?: number } = {}) =>
    ec2.addVolume({
      volumeId: `vol-${randomUUID().replaceAll('-', '').slice(0, 17)}`,
      tags: { CSIVolumeName: `pvc-${over.uid ?? randomUUID()}`, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true' },
      createdAt: new Date(now - (over.ageMs ?? 2 * HOUR)).toISOString(),
    });
  return { ec2, reports, orphan };
}

const put = (reports: ReportStore, claims: string[] = [], volumes: { pv: string; volumeId: string; reclaimPolicy: string }[] = []) =>
  reports.put({ clusterId: 'alpha', digest: randomUUID().replaceAll('-', '').padEnd(64, '0'), observedAt: now - 1000, report: { volumes, attachments: [], claims } });

describe('runAudit', () => {
  it('--delete -> deletes exactly the provably orphaned disks, each described anew right before its DeleteVolume', async () => {
    const { ec2, reports, orphan } = setup();
    const claimed = randomUUID();
    const [a, b] = [orphan(), orphan()];
    const young = orphan({ ageMs: 60_000 });
    const stillClaimed = orphan({ uid: claimed });
    await put(reports, [claimed]);
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });
    expect(result.deletions.map((d) => d.volumeId).sort()).toEqual([a.volumeId, b.volumeId].sort());
    expect(ec2.callsOf('deleteDisk').map((c) => c.args[0]).sort()).toEqual([a.volumeId, b.volumeId].sort());
    expect(ec2.volumes.get(young.volumeId)?.state).toBe('available');
    expect(ec2.volumes.get(stillClaimed.volumeId)?.state).toBe('available');
    // Each DeleteVolume comes right after a getDisk of the same volume.
    const verbs = ec2.calls.map((c) => `${c.verb}:${String(c.args[0] ?? '')}`);
    for (const d of [a, b]) expect(verbs[verbs.indexOf(`deleteDisk:${d.volumeId}`) - 1]).toBe(`getDisk:${d.volumeId}`);
  });

  it('a PV names the disk in a report that arrives between the audit and the delete -> kept', async () => {
    const { ec2, reports, orphan } = setup();
    const d = orphan();
    await put(reports);
    const racing: ReportStore = {
      ...reports,
      get: async (id) => {
        const stored = await reports.get(id);
        // Every read after the first (the re-check before deleting) sees the newer report.
        if (ec2.callsOf('listClusterDisks').length > 0 && stored) stored.report.volumes.push({ pv: 'pv-new', volumeId: d.volumeId, reclaimPolicy: 'Retain' });
        return stored;
      },
    };
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports: racing, graceMs: HOUR, delete: true, now: () => now });
    expect(result.deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'kept' }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('the disk got attached before its delete -> kept, never detached or deleted', async () => {
    const { ec2, reports, orphan } = setup();
    const d = orphan();
    await put(reports);
    const original = ec2.getDisk.bind(ec2);
    ec2.getDisk = async (id) => {
      const disk = await original(id);
      return disk && { ...disk, state: 'in-use', attachments: [{ instanceId: 'i-1', device: '/dev/xvdaa', state: 'attached' }] };
    };
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: true, now: () => now });
    expect(result.deletions).toMatchObject([{ volumeId: d.volumeId, outcome: 'kept' }]);
    expect(ec2.callsOf('deleteDisk')).toEqual([]);
  });

  it('a lost volume -> Warning VolumeLost Events on its PV and claim queued for the next report answer', async () => {
    const { ec2, reports } = setup();
    await reports.put({
      clusterId: 'alpha',
      digest: 'a'.repeat(64),
      observedAt: now - 1000,
      report: { volumes: [{ pv: 'pvc-1', volumeId: 'vol-00000000000000001', reclaimPolicy: 'Delete', phase: 'Bound', claim: { namespace: 'ns', name: 'c' } }], attachments: [], claims: [] },
    });
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: HOUR, delete: false, now: () => now });
    expect(result.lost).toHaveLength(1);
    const events = await reports.takeEvents('alpha');
    expect(events.map((e) => (e.op === 'createEvent' ? `${e.involvedObject.kind}/${e.reason}/${e.type}` : e.op))).toEqual(['PersistentVolume/VolumeLost/Warning', 'PersistentVolumeClaim/VolumeLost/Warning']);
    expect(await reports.takeEvents('alpha')).toEqual([]);
  });
});
