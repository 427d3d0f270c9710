import { describe, expect, it } from 'vitest';
import { canonicalReport, reportDigest, splitReport, type VolumeReport, type VolumeReportItem, type Write } from '../../lib/contract/index.js';
import { reconcileItems } from '../../lib/reconcile/index.js';
import { SEND_WHOLE_REPORT } from '../../lib/reconcile/report.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { bigReport } from '../contract/big-report.js';
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

  /** The items of a report in parts, as a forwarder sends them. */
  const partItems = (n: number, observedAt: number, maxBytes = 16 * 1024) => {
    const whole = canonicalReport(bigReport(n));
    const digest = reportDigest(whole);
    const parts = splitReport(whole, maxBytes);
    const items: VolumeReportItem[] = parts.map((part, index) => ({ kind: 'VolumeReport', digest, observedAt, report: part, part: { index, count: parts.length } }));
    return { whole, digest, items };
  };

  it('parts in any order -> requeue at once while any is missing, the last complete report kept meanwhile; the last part in -> the report is the cluster\'s, done', async () => {
    const { reports, ctx } = setup(5_000_000);
    await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 1_000_000, report }], ctx);
    const { whole, digest: next, items } = partItems(300, 4_000_000);
    expect(items.length).toBeGreaterThan(3);
    const order = [...items.keys()].reverse();
    for (const i of order.slice(0, -1)) {
      const [result] = await reconcileItems([items[i] as VolumeReportItem], ctx);
      expect(result).toMatchObject({ key: 'VolumeReport/cluster', outcome: 'requeue', requeueAfterSeconds: 0 });
      expect((await reports.get(ctx.clusterId))?.digest).toBe(digest);
    }
    const [last] = await reconcileItems([items[order.at(-1) as number] as VolumeReportItem], ctx);
    expect(last).toMatchObject({ outcome: 'done' });
    expect(await reports.get(ctx.clusterId)).toEqual({ clusterId: ctx.clusterId, digest: next, observedAt: 4_000_000, report: whole });
    // A part of the report kept (a forwarder sending again after a restart): done, nothing stored again.
    const [again] = await reconcileItems([items[1] as VolumeReportItem], ctx);
    expect(again).toMatchObject({ outcome: 'done' });
    expect(await reports.parts(ctx.clusterId, next, items.length)).toEqual(items.map(() => undefined));
  });

  it('parts of two reports interleaved -> never mixed: each complete only with all of its own parts', async () => {
    const { reports, ctx } = setup(9_000_000);
    const a = partItems(300, 2_000_000);
    const b = partItems(301, 3_000_000);
    for (const item of a.items.slice(1)) await reconcileItems([item], ctx);
    for (const item of b.items.slice(1)) await reconcileItems([item], ctx);
    expect(await reports.get(ctx.clusterId)).toBeUndefined();
    const [bDone] = await reconcileItems([b.items[0] as VolumeReportItem], ctx);
    expect(bDone).toMatchObject({ outcome: 'done' });
    expect((await reports.get(ctx.clusterId))?.report).toEqual(b.whole);
    // The older report completing after the newer one is not kept over it.
    await reconcileItems([a.items[0] as VolumeReportItem], ctx);
    expect((await reports.get(ctx.clusterId))?.digest).toBe(b.digest);
  });

  it('parts that do not make up their digest -> failed InvalidItem, the last complete report kept', async () => {
    const { reports, ctx } = setup();
    await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 500_000, report }], ctx);
    const { items } = partItems(300, 900_000);
    const forged = structuredClone(items);
    (forged[1] as VolumeReportItem).report!.claims.push('someone-else');
    const results = [];
    for (const item of forged) results.push(...(await reconcileItems([item], ctx)));
    expect(results.at(-1)).toMatchObject({ outcome: 'failed', reason: 'InvalidItem' });
    expect((await reports.get(ctx.clusterId))?.digest).toBe(digest);
  });
});
