import { describe, expect, it } from 'vitest';
import { canonicalReport, REPORT_WITHIN_MAX_SECONDS, reportDigest, ResultSchema, splitReport, type VolumeReport, type VolumeReportItem, type Write } from '../../lib/contract/index.js';
import { reconcileItems } from '../../lib/reconcile/index.js';
import { SEND_WHOLE_REPORT } from '../../lib/reconcile/report.js';
import { createMemoryReportStore, reportTime, type ReportStore } from '../../lib/reports/index.js';
import { bigReport } from '../contract/big-report.js';
import { setup as fixture } from './fixtures.js';

const report: VolumeReport = { volumes: [{ pv: 'pvc-1', volumeId: 'vol-00000000000000001', reclaimPolicy: 'Delete' }], attachments: [], claims: ['u1'] };
const digest = reportDigest(report);

/** The backend's clock, `receivedMs` after the forwarder signed (set `clock.now` to move it). */
function setup(signedAt = 1_000_000, receivedMs = 500) {
  const reports = createMemoryReportStore();
  const clock = { now: signedAt + receivedMs };
  const ctx = { ...fixture().ctx, reports, signedAt: new Date(signedAt), now: () => new Date(clock.now) };
  return { reports, ctx, clock };
}

describe('VolumeReport items', () => {
  it('the whole report -> kept as the cluster\'s, observed when the request was signed, received by the backend\'s clock; done', async () => {
    const { reports, ctx } = setup();
    const [result] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000, report }], ctx);
    expect(result).toMatchObject({ key: 'VolumeReport/cluster', outcome: 'done', writes: [] });
    expect(await reports.get(ctx.clusterId)).toEqual({ clusterId: ctx.clusterId, digest, observedAt: 1_000_000, receivedAt: 1_000_500, report });
  });

  it('a forwarder clock 200 s fast (inside the signature window) -> observedAt as it says, receivedAt by the backend: the report is dated when it arrived, not 200 s later', async () => {
    const backendNow = 5_000_000;
    const { reports, ctx } = setup(backendNow + 200_000, -200_000);
    await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: backendNow + 200_000, report }], ctx);
    const stored = await reports.get(ctx.clusterId);
    expect(stored).toMatchObject({ observedAt: backendNow + 200_000, receivedAt: backendNow });
    expect(reportTime(stored!)).toBe(backendNow);
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

  it('the digest alone, kept -> observedAt and receivedAt move on; not kept -> requeue at once asking for the whole report', async () => {
    const { reports, ctx } = setup(2_000_000);
    const [unknown] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(unknown).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0, message: SEND_WHOLE_REPORT });
    await reports.put({ clusterId: ctx.clusterId, digest, observedAt: 1_000_000, receivedAt: 1_000_000, report });
    const [known] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(known).toMatchObject({ outcome: 'done' });
    expect(await reports.get(ctx.clusterId)).toMatchObject({ observedAt: 2_000_000, receivedAt: 2_000_500 });
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

  it(`the answer says how soon the next report is needed: with no mark of the cluster, within REPORT_WITHIN_MAX_SECONDS (${REPORT_WITHIN_MAX_SECONDS} s); with a mark, nothing (every resync)`, async () => {
    const { reports, ctx } = setup();
    const [quiet] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000, report }], ctx);
    expect(quiet).toMatchObject({ outcome: 'done', reportWithinSeconds: REPORT_WITHIN_MAX_SECONDS });
    const [digestAlone] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(digestAlone).toMatchObject({ outcome: 'done', reportWithinSeconds: REPORT_WITHIN_MAX_SECONDS });
    await reports.mark(ctx.clusterId, new Map([['vol-0000000000000000f', 1_000_000]]));
    const [marked] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(marked?.outcome).toBe('done');
    expect(marked).not.toHaveProperty('reportWithinSeconds');
    // The answer as the contract parses it: the field is optional, and absent means every resync.
    expect(ResultSchema.parse(marked)).not.toHaveProperty('reportWithinSeconds');
    await reports.unmark(ctx.clusterId, ['vol-0000000000000000f']);
    const [unmarked] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000 }], ctx);
    expect(ResultSchema.parse(unmarked)).toMatchObject({ reportWithinSeconds: REPORT_WITHIN_MAX_SECONDS });
  });

  it('a bench whose forwarders resync 4 times faster (reportTimeScale 4) -> asked for a report 4 times sooner', async () => {
    const { ctx } = setup();
    const [result] = await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 9_000_000, report }], { ...ctx, reportTimeScale: 4 });
    expect(result).toMatchObject({ outcome: 'done', reportWithinSeconds: REPORT_WITHIN_MAX_SECONDS / 4 });
  });

  /** The items of a report in parts, as a forwarder sends them. */
  const partItems = (n: number, observedAt: number, maxBytes = 16 * 1024) => {
    const whole = canonicalReport(bigReport(n));
    const digest = reportDigest(whole);
    const parts = splitReport(whole, maxBytes);
    const items: VolumeReportItem[] = parts.map((part, index) => ({ kind: 'VolumeReport', digest, observedAt, report: part, part: { index, count: parts.length } }));
    return { whole, digest, items };
  };

  it('parts in any order -> requeue at once while any is missing, the last complete report kept meanwhile; the last part in -> the report is the cluster\'s, received when its first part was, done', async () => {
    const { reports, ctx, clock } = setup(5_000_000);
    await reconcileItems([{ kind: 'VolumeReport', digest, observedAt: 1_000_000, report }], ctx);
    const { whole, digest: next, items } = partItems(300, 4_000_000);
    expect(items.length).toBeGreaterThan(3);
    const order = [...items.keys()].reverse();
    const firstReceived = clock.now;
    for (const i of order.slice(0, -1)) {
      const [result] = await reconcileItems([items[i] as VolumeReportItem], ctx);
      expect(result).toMatchObject({ key: 'VolumeReport/cluster', outcome: 'requeue', requeueAfterSeconds: 0 });
      expect((await reports.get(ctx.clusterId))?.digest).toBe(digest);
      clock.now += 1000;
    }
    const [last] = await reconcileItems([items[order.at(-1) as number] as VolumeReportItem], ctx);
    expect(last).toMatchObject({ outcome: 'done' });
    expect(await reports.get(ctx.clusterId)).toEqual({ clusterId: ctx.clusterId, digest: next, observedAt: 4_000_000, receivedAt: firstReceived, report: whole });
    // A part of the report kept (a forwarder sending again after a restart): done, nothing stored
    // again, and its arrival dates nothing (it was read with the others).
    clock.now += 60_000;
    const [again] = await reconcileItems([items[1] as VolumeReportItem], ctx);
    expect(again).toMatchObject({ outcome: 'done' });
    expect(await reports.parts(ctx.clusterId, next, items.length)).toEqual(items.map(() => undefined));
    expect((await reports.get(ctx.clusterId))?.receivedAt).toBe(firstReceived);
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

  describe('what the cluster keeps for its users (Retain)', () => {
    const retainPv = { pv: 'pvc-r', volumeId: 'vol-0000000000000000a', reclaimPolicy: 'Retain', phase: 'Bound' };
    const deletePv = { pv: 'pvc-d', volumeId: 'vol-0000000000000000b', reclaimPolicy: 'Delete', phase: 'Bound' };
    const send = async (ctx: ReturnType<typeof setup>['ctx'], r: VolumeReport) => {
      const [result] = await reconcileItems([{ kind: 'VolumeReport', digest: reportDigest(r), observedAt: 9_000_000, report: r }], ctx);
      return result;
    };
    const contentOf = (snapshotHandle: string, deletionPolicy: string) => ({ content: `c-${snapshotHandle}`, snapshotHandle, deletionPolicy, readyToUse: true, beingCreated: false, deleting: false });

    it('a Retain PV gone from the next report -> its disk retained; a Delete PV gone -> not; the disk named again under Delete -> released', async () => {
      const { reports, ctx } = setup();
      await send(ctx, { volumes: [retainPv, deletePv], attachments: [], claims: [] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set());
      await send(ctx, { volumes: [], attachments: [], claims: [] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set([retainPv.volumeId]));
      // A static PV of the Retain policy for it: still retained (and named).
      await send(ctx, { volumes: [{ ...retainPv, pv: 'static' }], attachments: [], claims: [] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set([retainPv.volumeId]));
      await send(ctx, { volumes: [{ ...deletePv, pv: 'static', volumeId: retainPv.volumeId }], attachments: [], claims: [] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set());
    });

    it('a Retain PV whose handle changed -> the disk it named retained', async () => {
      const { reports, ctx } = setup();
      await send(ctx, { volumes: [retainPv], attachments: [], claims: [] });
      await send(ctx, { volumes: [{ ...retainPv, volumeId: 'vol-0000000000000000c' }], attachments: [], claims: [] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set([retainPv.volumeId]));
    });

    it('a Retain content gone -> its snapshot retained; a report without contents (an older forwarder) -> every Retain snapshot of the last one retained, nothing released', async () => {
      const { reports, ctx } = setup();
      await send(ctx, { volumes: [], attachments: [], claims: [], snapshots: [contentOf('snap-0000000000000000a', 'Retain'), contentOf('snap-0000000000000000b', 'Delete')] });
      await send(ctx, { volumes: [], attachments: [], claims: [], snapshots: [contentOf('snap-0000000000000000b', 'Delete')] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set(['snap-0000000000000000a']));
      await send(ctx, { volumes: [], attachments: [], claims: [], snapshots: [contentOf('snap-0000000000000000c', 'Retain')] });
      await send(ctx, { volumes: [], attachments: [], claims: [] });
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set(['snap-0000000000000000a', 'snap-0000000000000000c']));
    });

    it('the same in parts: retained once the report completes', async () => {
      const { reports, ctx } = setup();
      // A disk bigReport's PVs do not name.
      const kept = { ...retainPv, volumeId: 'vol-0fffffffffffffff1' };
      await send(ctx, { volumes: [kept], attachments: [], claims: [] });
      const { items } = partItems(300, 9_000_000);
      for (const item of items.slice(0, -1)) await reconcileItems([item], ctx);
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set());
      await reconcileItems([items.at(-1)!], ctx);
      expect((await reports.get(ctx.clusterId))?.report.volumes).toHaveLength(300);
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set([kept.volumeId]));
    });

    it('remembered before the report that no longer names the disk is kept: a store that fails to keep it -> the disk retained all the same, the old report still kept', async () => {
      const { reports, ctx } = setup();
      await send(ctx, { volumes: [retainPv], attachments: [], claims: [] });
      const failing: ReportStore = { ...reports, put: async () => Promise.reject(new Error('DynamoDB down')) };
      await expect(reconcileItems([{ kind: 'VolumeReport', digest: reportDigest({ volumes: [], attachments: [], claims: [] }), observedAt: 9_000_000, report: { volumes: [], attachments: [], claims: [] } }], { ...ctx, reports: failing })).resolves.toMatchObject([{ outcome: 'requeue', message: 'unexpected error: DynamoDB down' }]);
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set([retainPv.volumeId]));
      expect((await reports.get(ctx.clusterId))?.report.volumes).toEqual([retainPv]);
    });

    it('a report refused as older than the kept one -> releases nothing', async () => {
      const { reports, ctx } = setup();
      await send(ctx, { volumes: [retainPv], attachments: [], claims: [] });
      await send(ctx, { volumes: [], attachments: [], claims: [] });
      const older = { ...ctx, signedAt: new Date(10) };
      const r: VolumeReport = { volumes: [{ ...retainPv, reclaimPolicy: 'Delete' }], attachments: [], claims: [] };
      await reconcileItems([{ kind: 'VolumeReport', digest: reportDigest(r), observedAt: 10, report: r }], older);
      expect((await reports.get(ctx.clusterId))?.report.volumes).toEqual([]);
      expect(await reports.retained(ctx.clusterId)).toEqual(new Set([retainPv.volumeId]));
    });
  });
});
