/**
 * Resizing and VolumeAttributesClass changes of a bound claim (lib/reconcile/modify.ts) over
 * the in-memory gateway: "situation -> outcome".
 */
import { describe, expect, it } from 'vitest';
import type { ItemInput, Result, Write } from '../../lib/contract/index.js';
import { TagKeys } from '../../lib/contract/tags.js';
import { Ec2Error } from '../../lib/ec2/types.js';
import { CLAIM_UID, CLUSTER, DRIVER, merge, NOW, PV_NAME, reconcileOne, setup, storageClass } from './fixtures.js';
import { ec2Error, FAKE_MODIFICATION_WINDOW_MS } from './fake-gateway.js';

const VOLUME = 'vol-0000000000000000a';

function boundPv(override: unknown = {}) {
  return merge(
    {
      metadata: { name: PV_NAME, uid: 'pv-uid-1', resourceVersion: '7', annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER } },
      spec: {
        capacity: { storage: '4Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data', uid: CLAIM_UID },
        csi: { driver: DRIVER, volumeHandle: VOLUME, fsType: 'ext4' },
      },
      status: { phase: 'Bound' },
    },
    override,
  );
}

function boundClaim(override: { pvc?: unknown; pv?: unknown; storageClass?: unknown; volumeAttributesClass?: unknown } = {}): ItemInput {
  return {
    kind: 'PersistentVolumeClaim',
    pvc: merge(
      {
        metadata: { name: 'data', namespace: 'shop', uid: CLAIM_UID, resourceVersion: '42', annotations: { 'volume.kubernetes.io/storage-provisioner': DRIVER } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '8Gi' } }, storageClassName: 'gp3', volumeName: PV_NAME },
        status: { phase: 'Bound', capacity: { storage: '4Gi' } },
      },
      override.pvc,
    ),
    storageClass: storageClass(merge({ allowVolumeExpansion: true }, override.storageClass)),
    pvExists: true,
    pv: boundPv(override.pv),
    ...(override.volumeAttributesClass !== undefined && { volumeAttributesClass: override.volumeAttributesClass }),
  } as ItemInput;
}

const fast = { metadata: { name: 'fast' }, driverName: DRIVER, parameters: { type: 'gp3', iops: '6000', throughput: '250' } };

function events(result: Result): { type: string; reason: string; message: string }[] {
  return result.writes.flatMap((w) => (w.op === 'createEvent' ? [{ type: w.type, reason: w.reason, message: w.message }] : []));
}
const warnings = (result: Result) => events(result).filter((e) => e.type === 'Warning');
/** The claim's status as the last of its status writes leaves it (writes apply in order). */
const lastStatusWrite = (result: Result) => result.writes.findLast(
  (w): w is Extract<Write, { op: 'patchPersistentVolumeClaimStatus' }> => w.op === 'patchPersistentVolumeClaimStatus',
);
const statusWrite = (result: Result) => result.writes.find((w): w is Extract<Write, { op: 'patchPersistentVolumeClaimStatus' }> => w.op === 'patchPersistentVolumeClaimStatus');

function withVolume(ec2: ReturnType<typeof setup>['ec2'], override: Record<string, unknown> = {}) {
  return ec2.addVolume({
    volumeId: VOLUME,
    sizeGiB: 4,
    type: 'gp3',
    iops: 3000,
    throughput: 125,
    tags: { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER, [TagKeys.csiVolumeName]: PV_NAME },
    ...override,
  });
}

describe('resize of a bound claim', () => {
  it('Filesystem claim asks 8Gi of a 4Gi disk -> status ControllerResizeInProgress and Event Resizing, one ModifyVolume to 8 GiB; settled -> PV 8Gi, NodeResizePending, FileSystemResizeRequired', async () => {
    const { ec2, ctx } = setup();
    ec2.now = () => NOW.getTime();
    withVolume(ec2);
    const first = await reconcileOne(ctx, boundClaim());
    expect(ec2.mutations).toEqual([{ verb: 'modifyDisk', args: [VOLUME, { sizeGiB: 8 }] }]);
    expect(first).toMatchObject({ outcome: 'requeue' });
    expect(statusWrite(first)?.status).toMatchObject({ allocatedResources: { storage: '8Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } });
    expect(statusWrite(first)).toMatchObject({ uid: CLAIM_UID, resourceVersion: '42' });
    expect(events(first)).toEqual([{ type: 'Normal', reason: 'Resizing', message: `External resizer is resizing volume ${PV_NAME}` }]);

    ec2.settle();
    const inProgress = { pvc: { status: { allocatedResources: { storage: '8Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } } };
    const second = await reconcileOne(ctx, boundClaim(inProgress));
    expect(ec2.callsOf('modifyDisk')).toHaveLength(1);
    expect(second.outcome).toBe('done');
    expect(second.writes[0]).toEqual({ op: 'patchPersistentVolume', name: PV_NAME, uid: 'pv-uid-1', capacity: '8Gi' });
    expect(statusWrite(second)?.status.allocatedResourceStatuses).toEqual({ storage: 'NodeResizePending' });
    expect(statusWrite(second)?.status.conditions?.map((c) => c.type)).toEqual(['Resizing', 'FileSystemResizePending']);
    expect(events(second).map((e) => e.reason)).toEqual(['FileSystemResizeRequired']);
  });

  it('Block claim, disk grown -> capacity set on the claim directly, storage status removed, VolumeResizeSuccessful', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 8 });
    const result = await reconcileOne(ctx, boundClaim({ pv: { spec: { volumeMode: 'Block' } }, pvc: { status: { allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } } }));
    expect(ec2.mutations).toEqual([]);
    expect(statusWrite(result)?.status).toMatchObject({ capacity: { storage: '8Gi' }, allocatedResourceStatuses: null });
    expect(events(result).map((e) => e.reason)).toEqual(['VolumeResizeSuccessful']);
  });

  it('crash after ModifyVolume, before the writes: the same item again -> no second ModifyVolume, requeue while modifying, then the writes', async () => {
    const { ec2, ctx } = setup();
    ec2.now = () => NOW.getTime();
    withVolume(ec2);
    await reconcileOne(ctx, boundClaim()); // its writes are lost
    const replay = await reconcileOne(ctx, boundClaim());
    expect(ec2.callsOf('modifyDisk')).toHaveLength(1);
    expect(replay).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('being modified') });
    ec2.settle();
    const after = await reconcileOne(ctx, boundClaim());
    expect(ec2.callsOf('modifyDisk')).toHaveLength(1);
    expect(after.outcome).toBe('done');
    expect(after.writes.some((w) => w.op === 'patchPersistentVolume')).toBe(true);
  });

  it('the disk grown and the PV saying 8Gi, every status write of the resize lost (the claim says 4Gi, no resize status) -> no ModifyVolume: NodeResizePending, FileSystemResizeRequired', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 8 });
    const result = await reconcileOne(ctx, boundClaim({ pv: { spec: { capacity: { storage: '8Gi' } } } }));
    expect(ec2.mutations).toEqual([]);
    expect(result.outcome).toBe('done');
    expect(result.writes.some((w) => w.op === 'patchPersistentVolume')).toBe(false);
    expect(statusWrite(result)?.status.allocatedResourceStatuses).toEqual({ storage: 'NodeResizePending' });
    expect(events(result).map((e) => e.reason)).toEqual(['FileSystemResizeRequired']);
  });

  it('the PV saying 8Gi of a disk EC2 says is 4 GiB, the claim never told -> the resize done for real: one ModifyVolume to 8 GiB, ControllerResizeInProgress', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2);
    const result = await reconcileOne(ctx, boundClaim({ pv: { spec: { capacity: { storage: '8Gi' } } } }));
    expect(ec2.mutations).toEqual([{ verb: 'modifyDisk', args: [VOLUME, { sizeGiB: 8 }] }]);
    expect(statusWrite(result)?.status.allocatedResourceStatuses).toEqual({ storage: 'ControllerResizeInProgress' });
  });

  it.each([
    ['shrink 4Gi -> 2Gi', 'ShrinkNotSupported', { pvc: { spec: { resources: { requests: { storage: '2Gi' } } } } }, /shrinking volume .* from 4Gi to 2Gi is not supported/],
    ['class without allowVolumeExpansion', 'ExpansionNotAllowed', { storageClass: { allowVolumeExpansion: false } }, /does not set allowVolumeExpansion: true/],
    ['over gp3 maximum (70000Gi, cluster at most 16384)', 'SizeOverMaximum', { pvc: { spec: { resources: { requests: { storage: '70000Gi' } } } } }, /at most 16384 GiB/],
    ['bound to another claim\'s PV', 'NotOurVolume', { pv: { spec: { claimRef: { uid: 'someone-else' } } } }, /not an EBS volume of ebs\.csi\.aws\.com bound to this claim/],
    ['PV of another driver', 'NotOurVolume', { pv: { metadata: { annotations: { 'pv.kubernetes.io/provisioned-by': undefined } }, spec: { csi: { driver: 'efs.csi.aws.com' } } } }, /not an EBS volume/],
  ])('%s -> failed %s, Warning VolumeResizeFailed, zero gateway calls', async (_name, reason, override, message) => {
    const { ec2, ctx } = setup();
    withVolume(ec2);
    const result = await reconcileOne(ctx, boundClaim(override));
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(events(result)).toEqual([{ type: 'Warning', reason: 'VolumeResizeFailed', message: expect.stringMatching(message) }]);
    expect(ec2.calls).toEqual([]);
  });

  it('iopsPerGB class with allowAutoIOPSIncreaseOnModify (the disk\'s tags say so) -> the resize raises IOPS in the same ModifyVolume', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { type: 'io2', iops: 400, throughput: undefined, tags: { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER, 'ebs.csi.aws.com/IOPSPerGb': '100', 'ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify': 'true' } });
    await reconcileOne(ctx, boundClaim({ storageClass: { parameters: { type: 'io2', iopsPerGB: '100', allowAutoIOPSIncreaseOnModify: 'true' } } }));
    expect(ec2.mutations).toEqual([{ verb: 'modifyDisk', args: [VOLUME, { sizeGiB: 8, iops: 800 }] }]);
  });
});

describe('VolumeAttributesClass change of a bound claim', () => {
  const toFast = { pvc: { spec: { resources: { requests: { storage: '20Gi' } }, volumeAttributesClassName: 'fast' }, status: { capacity: { storage: '20Gi' }, currentVolumeAttributesClassName: 'base' } }, pv: { spec: { capacity: { storage: '20Gi' } } }, volumeAttributesClass: fast };

  it('gp3 3000/125 -> class fast 6000/250 -> one ModifyVolume with both, InProgress; settled -> current class fast, PV names it', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    const first = await reconcileOne(ctx, boundClaim(toFast));
    expect(ec2.mutations).toEqual([{ verb: 'modifyDisk', args: [VOLUME, { iops: 6000, throughput: 250 }] }]);
    expect(statusWrite(first)?.status.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: 'fast', status: 'InProgress' });
    expect(events(first).map((e) => e.reason)).toEqual(['VolumeModify']);
    ec2.settle();
    const second = await reconcileOne(ctx, boundClaim(merge(toFast, { pvc: { status: { modifyVolumeStatus: { targetVolumeAttributesClassName: 'fast', status: 'InProgress' } } } })));
    expect(second.writes[0]).toEqual({ op: 'patchPersistentVolume', name: PV_NAME, uid: 'pv-uid-1', volumeAttributesClassName: 'fast' });
    expect(statusWrite(second)?.status).toMatchObject({ modifyVolumeStatus: null, currentVolumeAttributesClassName: 'fast' });
    expect(events(second).map((e) => e.reason)).toEqual(['VolumeModifySuccessful']);
  });

  it('a resize pending with a class change -> one ModifyVolume with size, IOPS and throughput', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    await reconcileOne(ctx, boundClaim(merge(toFast, { pvc: { spec: { resources: { requests: { storage: '30Gi' } } } } })));
    expect(ec2.mutations).toEqual([{ verb: 'modifyDisk', args: [VOLUME, { sizeGiB: 30, iops: 6000, throughput: 250 }] }]);
  });

  it('a class that only adds a tag and removes another -> CreateTags and DeleteTags, no ModifyVolume', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { tags: { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER, old: 'x' } });
    const vac = { metadata: { name: 'tagged' }, driverName: DRIVER, parameters: { tagSpecification_1: 'team={{ .PVCNamespace }}', tagDeletion_1: 'old' } };
    const result = await reconcileOne(ctx, boundClaim({ pvc: { spec: { resources: { requests: { storage: '4Gi' } }, volumeAttributesClassName: 'tagged' } }, volumeAttributesClass: vac }));
    expect(ec2.mutations).toEqual([
      { verb: 'tagDisk', args: [VOLUME, { team: 'shop' }] },
      { verb: 'untagDisk', args: [VOLUME, ['old']] },
    ]);
    expect(statusWrite(result)?.status.currentVolumeAttributesClassName).toBe('tagged');
  });

  it('two copies of the claim\'s item at once for a tagging class -> one CreateTags and one DeleteTags; the other copy requeued as in progress, and done once looked at again', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { tags: { [TagKeys.cluster(CLUSTER)]: 'owned', [TagKeys.ebsCluster]: 'true', [TagKeys.volhookCluster]: CLUSTER, old: 'x' } });
    const vac = { metadata: { name: 'tagged' }, driverName: DRIVER, parameters: { tagSpecification_1: 'team={{ .PVCNamespace }}', tagDeletion_1: 'old' } };
    const item = boundClaim({ pvc: { spec: { resources: { requests: { storage: '4Gi' } }, volumeAttributesClassName: 'tagged' } }, volumeAttributesClass: vac });
    const [first, second] = await Promise.all([reconcileOne(ctx, item), reconcileOne(ctx, item)]);
    expect(ec2.mutations).toEqual([
      { verb: 'tagDisk', args: [VOLUME, { team: 'shop' }] },
      { verb: 'untagDisk', args: [VOLUME, ['old']] },
    ]);
    expect(statusWrite(first)?.status.currentVolumeAttributesClassName).toBe('tagged');
    expect(second).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 2, message: `volume ${VOLUME} is being reconciled by another request; looking again shortly` });
    const again = await reconcileOne(ctx, item);
    expect(again.outcome).toBe('done');
    expect(ec2.mutations).toHaveLength(2);
  });

  it('modified an hour ago, that modification completed -> one ModifyVolume at once (no 6-hour wait since 2026)', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    ec2.modifications.set(VOLUME, { volumeId: VOLUME, state: 'completed', startTime: new Date(NOW.getTime() - 60 * 60 * 1000).toISOString(), target: { sizeGiB: 20 } });
    const result = await reconcileOne(ctx, boundClaim(toFast));
    expect(ec2.mutations).toEqual([{ verb: 'modifyDisk', args: [VOLUME, { iops: 6000, throughput: 250 }] }]);
    expect(result).toMatchObject({ outcome: 'requeue' });
    expect(statusWrite(result)?.status.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: 'fast', status: 'InProgress' });
  });

  it('the last modification failed -> a new one starts at once', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    ec2.modifications.set(VOLUME, { volumeId: VOLUME, state: 'failed', startTime: new Date(NOW.getTime() - 60 * 1000).toISOString(), target: { sizeGiB: 30 } });
    await reconcileOne(ctx, boundClaim(toFast));
    expect(ec2.callsOf('modifyDisk')).toHaveLength(1);
  });

  it('the last modification still optimizing -> no ModifyVolume (EC2 starts the next once it is completed): InProgress, requeue, no Event; completed -> one ModifyVolume', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    ec2.modifications.set(VOLUME, { volumeId: VOLUME, state: 'optimizing', startTime: new Date(NOW.getTime() - 60 * 1000).toISOString(), target: { sizeGiB: 20 } });
    const waiting = await reconcileOne(ctx, boundClaim(toFast));
    expect(ec2.mutations).toEqual([]);
    expect(waiting).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 30, message: expect.stringContaining('still optimizing') });
    expect(statusWrite(waiting)?.status.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: 'fast', status: 'InProgress' });
    expect(events(waiting)).toEqual([]);
    ec2.settle();
    await reconcileOne(ctx, boundClaim(toFast));
    expect(ec2.callsOf('modifyDisk')).toHaveLength(1);
  });

  it('four modifications in the last 24 hours -> EC2 refuses the fifth: its message (naming when) as a Warning and ModifyVolumeError, requeue for that time; the same words when looked at again', async () => {
    const { ec2, ctx } = setup();
    ec2.now = () => NOW.getTime();
    withVolume(ec2, { sizeGiB: 4 });
    const claim = (gib: number) => boundClaim({ pvc: { spec: { resources: { requests: { storage: `${gib}Gi` } } } } });
    // Four expansions ten minutes apart, each once the last is completed.
    for (const [n, gib] of [5, 6, 7, 8].entries()) {
      ec2.now = () => NOW.getTime() + n * 10 * 60 * 1000;
      await reconcileOne({ ...ctx, now: () => new Date(ec2.now()) }, claim(gib));
      ec2.settle().settle();
    }
    expect(ec2.callsOf('modifyDisk')).toHaveLength(4);
    ec2.now = () => NOW.getTime() + 40 * 60 * 1000;
    const at = () => new Date(ec2.now());
    const fifth = await reconcileOne({ ...ctx, now: at }, claim(9));
    const nextAt = NOW.getTime() + FAKE_MODIFICATION_WINDOW_MS;
    expect(fifth).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: (nextAt - ec2.now()) / 1000 });
    // As external-resizer: the Resizing Event as the call is made, then the refusal's Warning.
    expect(events(fifth).map((e) => e.reason)).toEqual(['Resizing', 'VolumeResizeFailed']);
    expect(warnings(fifth)).toEqual([
      { type: 'Warning', reason: 'VolumeResizeFailed', message: expect.stringMatching(new RegExp(`rolling 24-hour period.*again after ${new Date(nextAt).toISOString()}`)) },
    ]);
    expect(lastStatusWrite(fifth)?.status.allocatedResourceStatuses).toEqual({ storage: 'ControllerResizeInProgress' });
    ec2.now = () => NOW.getTime() + 50 * 60 * 1000;
    const again = await reconcileOne({ ...ctx, now: at }, claim(9));
    expect(warnings(again)).toEqual(warnings(fifth));
    expect((again as { requeueAfterSeconds: number }).requeueAfterSeconds).toBe((fifth as { requeueAfterSeconds: number }).requeueAfterSeconds - 600);
    // Once the first of the four is 24 hours old, the fifth goes through.
    ec2.now = () => nextAt;
    await reconcileOne({ ...ctx, now: at }, claim(9));
    // Four accepted, two refused, the fifth accepted.
    expect(ec2.callsOf('modifyDisk')).toHaveLength(7);
    expect(ec2.modifications.get(VOLUME)).toMatchObject({ state: 'modifying', target: { sizeGiB: 9 }, startTime: new Date(nextAt).toISOString() });
  });

  it('VolumeModificationRateExceeded on a VolumeAttributesClass change -> ModifyVolumeError VolumeModificationRateExceeded, InProgress, Warning VolumeModifyFailed', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    const message = "EC2 ModifyVolume: VolumeModificationRateExceeded: You've reached the limit. You can modify it again after 2025-03-01T18:00:00Z.";
    ec2.fail('modifyDisk', new Ec2Error('modificationRate', 'VolumeModificationRateExceeded', message, 'ModifyVolume', undefined, new Date('2025-03-01T18:00:00Z')));
    const result = await reconcileOne(ctx, boundClaim(toFast));
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: (Date.parse('2025-03-01T18:00:00Z') - NOW.getTime()) / 1000 });
    expect(lastStatusWrite(result)?.status.conditions).toContainEqual(expect.objectContaining({ type: 'ModifyVolumeError', reason: 'VolumeModificationRateExceeded', message: expect.stringContaining('again after 2025-03-01T18:00:00Z') }));
    expect(lastStatusWrite(result)?.status.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: 'fast', status: 'InProgress' });
    expect(warnings(result)).toEqual([{ type: 'Warning', reason: 'VolumeModifyFailed', message: expect.stringContaining('again after 2025-03-01T18:00:00Z') }]);
  });

  it('VolumeModificationRateExceeded whose message names no time -> requeue slowly (300 s), not a tight loop', async () => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    ec2.fail('modifyDisk', ec2Error('modificationRate', 'VolumeModificationRateExceeded'));
    const result = await reconcileOne(ctx, boundClaim(toFast));
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 300 });
  });

  it.each([
    ['io2 at 50000 IOPS on 20 GiB', { type: 'io2', iops: '50000' }, /50000 IOPS is more than 1000 IOPS per GiB allows for 20 GiB of io2/],
    ['gp2 with throughput', { type: 'gp2', throughput: '200' }, /volume type gp2 has no throughput setting/],
    ['an unknown key', { type: 'gp3', burst: 'yes' }, /burst: is not a mutable parameter of the EBS CSI driver/],
  ])('class %s -> Infeasible with the reason, Warning VolumeModifyFailed, zero gateway calls', async (_name, parameters, message) => {
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20 });
    const result = await reconcileOne(ctx, boundClaim({ ...toFast, volumeAttributesClass: { ...fast, parameters } }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'Infeasible' });
    expect(statusWrite(result)?.status.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: 'fast', status: 'Infeasible' });
    expect(events(result)).toEqual([{ type: 'Warning', reason: 'VolumeModifyFailed', message: expect.stringMatching(message) }]);
    expect(ec2.calls).toEqual([]);
  });

  it('class that does not exist -> Pending, Warning VAC "x" does not exist., zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, boundClaim(merge(toFast, { volumeAttributesClass: null })));
    expect(statusWrite(result)?.status.modifyVolumeStatus).toEqual({ status: 'Pending' });
    expect(events(result)).toEqual([{ type: 'Warning', reason: 'VolumeModifyFailed', message: 'VAC "fast" does not exist.' }]);
    expect(ec2.calls).toEqual([]);
  });

  it("the PV controller's bind half written (volumeName set, status not yet Bound) -> requeued with no writes and no gateway call; Bound with the PV's class -> done; Bound without it -> modified (the path the gate holds back)", async () => {
    // The real PV controller writes spec.volumeName, then the status with the PV's class as
    // currentVolumeAttributesClassName: in between the claim seems to ask for a class it has.
    const onFast = { pvc: { spec: { resources: { requests: { storage: '20Gi' } }, volumeAttributesClassName: 'fast' }, status: { capacity: { storage: '20Gi' } } }, pv: { spec: { capacity: { storage: '20Gi' }, volumeAttributesClassName: 'fast' } }, volumeAttributesClass: fast };
    const { ec2, ctx } = setup();
    withVolume(ec2, { sizeGiB: 20, iops: 6000, throughput: 250 });
    const halfBound = await reconcileOne(ctx, boundClaim(merge(onFast, { pvc: { status: { phase: 'Pending' } } })));
    expect(halfBound).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(halfBound.message).toMatch(/not Bound yet \(phase Pending\)/);
    expect(ec2.calls).toEqual([]);
    const bound = await reconcileOne(ctx, boundClaim(merge(onFast, { pvc: { status: { currentVolumeAttributesClassName: 'fast' } } })));
    expect(bound).toEqual({ key: 'PersistentVolumeClaim/shop/data', outcome: 'done', writes: [] });
    const asking = await reconcileOne(ctx, boundClaim(onFast));
    expect(events(asking).map((e) => e.reason)).toEqual(['VolumeModifySuccessful']);
  });

  it('a converged bound claim -> done, no writes, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, boundClaim({ pvc: { spec: { resources: { requests: { storage: '4Gi' } } } } }));
    expect(result).toEqual({ key: 'PersistentVolumeClaim/shop/data', outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });
});
