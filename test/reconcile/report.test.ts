import { describe, expect, it } from 'vitest';
import { reportDigest, type VolumeReport, type Write } from '../../lib/contract/index.js';
import { reconcileItems } from '../../lib/reconcile/index.js';
import { SEND_WHOLE_REPORT } from '../../lib/reconcile/report.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { setup as fixture } from './fixtures.js';

const report: VolumeReport = { volumes: [{ pv: 'pvc-1', volumeId: 'vol-00000000000000001', reclaimPolicy: 'Delete' }], attachments: [], claims: ['u1'] };
const digest = reportDigest(report);

function setup(signedAt = 1_000_000) {
  const reports = createMemoryReportStore();
  const ctx = { ...fixture().ctx, reports, signedAt: new Date(signedAt) };
  return { reports, ctx };
}

describe('VolumeReport items', () => {
  it('the whole report -> kept as the cluster\'s, observed when the request was signed; done', async () => {
    const { reports, ctx } = setup();
    const [result] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000, report }], ctx);
    expect(result).toMatchObject({ key: 'VolumeReport/cluster', outcome: 'done', writes: [] });
    expect(await reports.get(ctx.clusterId)).toEqual({ clusterId: ctx.clusterId, digest, observedAt: 1_000_000, report });
  });

  it('read by the forwarder before it signed -> observed when it was read, not when signed', async () => {
    const { reports, ctx } = setup(5_000_000);
    await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 4_000_000, report }], ctx);
    expect((await reports.get(ctx.clusterId))?.observedAt).toBe(4_000_000);
  });

  it('a digest that is not the digest of the content -> failed InvalidItem, nothing kept', async () => {
    const { reports, ctx } = setup();
    const [result] = await reconcileItems([{ kind: 'VolumeReport', digest: 'f'.repeat(64), observedAt: 9_000_000, report }], ctx);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'InvalidItem' });
    expect(await reports.get(ctx.clusterId)).toBeUndefined();
  });

  it('the digest alone, kept -> observedAt moves on; not kept -> requeue at once asking for the whole report', async () => {
    const { reports, ctx } = setup(2_000_000);
    const [unknown] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(unknown).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0, message: SEND_WHOLE_REPORT });
    await reports.put({ clusterId: ctx.clusterId, digest, observedAt: 1_000_000, report });
    const [known] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(known).toMatchObject({ outcome: 'done' });
    expect((await reports.get(ctx.clusterId))?.observedAt).toBe(2_000_000);
  });

  it('Events an audit queued -> in the answer, once', async () => {
    const { reports, ctx } = setup();
    const lost: Write = { op: 'createEvent', involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name: 'pvc-1' }, type: 'Warning', reason: 'VolumeLost', message: 'gone' };
    await reports.queueEvents(ctx.clusterId, [lost]);
    const [first] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000, report }], ctx);
    expect(first?.writes).toEqual([lost]);
    const [second] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(second?.writes).toEqual([]);
  });
});
