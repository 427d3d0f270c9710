import { describe, expect, it } from 'vitest';
import { ec2Error, throttled } from './fake-gateway.js';
import { ATTACHER_FINALIZER, CLUSTER, PROVISIONER_FINALIZER, PV_NAME, ownedTags, pvItem, reconcileOne, setup } from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const pvTarget = { kind: 'PersistentVolume', name: PV_NAME, uid: 'pv-uid-1' };
const released = (override: Record<string, unknown> = {}) => pvItem({ pv: { status: { phase: 'Released' } }, ...override });

describe('reclaim: finalizers', () => {
  it('Bound Delete PV of ours without the provisioner finalizer -> addFinalizer (with uid), no EC2 call', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, pvItem({ pv: { metadata: { finalizers: ['kubernetes.io/pv-protection'] } } }));
    expect(result).toEqual({
      key: `PersistentVolume/${PV_NAME}`,
      outcome: 'done',
      writes: [{ op: 'addFinalizer', target: pvTarget, finalizer: PROVISIONER_FINALIZER }],
    });
    expect(ec2.calls).toEqual([]);
  });

  it('Bound Delete PV naming our driver but provisioned by someone else -> no finalizer added', async () => {
    const { ctx } = setup();
    const item = pvItem({ pv: { metadata: { annotations: undefined, finalizers: [] } } });
    expect(await reconcileOne(ctx, item)).toMatchObject({ outcome: 'done', writes: [] });
  });

  it.each(['Bound', 'Released', 'Available'])('Retain PV (%s) with the provisioner finalizer -> removeFinalizer only, zero EC2 calls', async (phase) => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const result = await reconcileOne(ctx, pvItem({ pv: { spec: { persistentVolumeReclaimPolicy: 'Retain' }, status: { phase } } }));
    expect(result).toMatchObject({ outcome: 'done', writes: [{ op: 'removeFinalizer', target: pvTarget, finalizer: PROVISIONER_FINALIZER }] });
    expect(ec2.calls).toEqual([]);
  });

  it('attacher finalizer and no VolumeAttachment left -> removeFinalizer attacher', async () => {
    const { ctx } = setup();
    const item = pvItem({ pv: { metadata: { finalizers: [PROVISIONER_FINALIZER, ATTACHER_FINALIZER] } } });
    const result = await reconcileOne(ctx, item);
    expect(result.writes).toEqual([{ op: 'removeFinalizer', target: pvTarget, finalizer: ATTACHER_FINALIZER }]);
  });

  it('attacher finalizer while a VolumeAttachment names the PV -> kept', async () => {
    const { ctx } = setup();
    const item = pvItem({ pv: { metadata: { finalizers: [PROVISIONER_FINALIZER, ATTACHER_FINALIZER] } }, volumeAttachments: ['csi-abc'] });
    expect((await reconcileOne(ctx, item)).writes).toEqual([]);
  });

  it.each([
    ['another provisioner and driver', { pv: { metadata: { annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/nfs' } }, spec: { csi: { driver: 'nfs.csi.k8s.io', volumeHandle: 'x' } }, status: { phase: 'Released' } } }],
  ])('PV of %s -> done, no writes, zero EC2 calls', async (_name, override) => {
    const { ec2, ctx } = setup();
    expect(await reconcileOne(ctx, pvItem(override))).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });
});

describe('reclaim: deleting the disk', () => {
  it('Released + Delete, disk ours and free -> DeleteVolume, then delete PV (uid) and drop the finalizer', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const result = await reconcileOne(ctx, released());
    expect(ec2.mutations).toEqual([{ verb: 'deleteDisk', args: [VOL] }]);
    expect(result).toEqual({
      key: `PersistentVolume/${PV_NAME}`,
      outcome: 'done',
      writes: [
        { op: 'deletePersistentVolume', name: PV_NAME, uid: 'pv-uid-1' },
        { op: 'removeFinalizer', target: pvTarget, finalizer: PROVISIONER_FINALIZER },
      ],
    });
  });

  it('Released + Delete, disk already gone -> success: delete PV and drop the finalizer, no DeleteVolume', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, released());
    expect(result.outcome).toBe('done');
    expect(result.writes.map((w) => w.op)).toEqual(['deletePersistentVolume', 'removeFinalizer']);
    expect(ec2.mutations).toEqual([]);
  });

  it('Released + Delete while a VolumeAttachment names it -> requeue, Warning VolumeFailedDelete, zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const result = await reconcileOne(ctx, released({ volumeAttachments: ['csi-abc'] }));
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 10 });
    expect(result.writes).toEqual([
      {
        op: 'createEvent',
        involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name: PV_NAME, uid: 'pv-uid-1' },
        type: 'Warning',
        reason: 'VolumeFailedDelete',
        message: `persistentvolume ${PV_NAME} is still attached: VolumeAttachment csi-abc still names it`,
      },
    ]);
    expect(ec2.calls).toEqual([]);
  });

  it('Released + Delete, volume of another cluster -> failed NotOwned, no DeleteVolume, PV kept', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: { 'kubernetes.io/cluster/beta': 'owned', CSIVolumeName: PV_NAME } });
    const result = await reconcileOne(ctx, released());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned', message: `volume ${VOL} is not owned by cluster "${CLUSTER}"; not deleting it` });
    expect(result.writes.map((w) => w.op)).toEqual(['createEvent']);
    expect(ec2.mutations).toEqual([]);
  });

  it('Released + Delete, disk still attached in EC2 -> requeue, no DeleteVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, state: 'in-use', tags: ownedTags(), attachments: [{ instanceId: 'i-0aaaaaaaaaaaaaaa1', device: '/dev/xvdaa', state: 'attached' }] });
    const result = await reconcileOne(ctx, released());
    expect(result.outcome).toBe('requeue');
    expect(result.writes.some((w) => w.op === 'deletePersistentVolume')).toBe(false);
    expect(ec2.mutations).toEqual([]);
  });

  it('DeleteVolume answers VolumeInUse -> requeue with a Warning, PV kept', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    ec2.fail('deleteDisk', ec2Error('inUse', 'VolumeInUse'));
    const result = await reconcileOne(ctx, released());
    expect(result.outcome).toBe('requeue');
    expect(result.writes.map((w) => (w.op === 'createEvent' ? w.reason : w.op))).toEqual(['VolumeFailedDelete']);
  });

  it('DeleteVolume unauthorized -> failed naming ec2:DeleteVolume, PV kept', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    ec2.fail('deleteDisk', ec2Error('unauthorized', 'UnauthorizedOperation'));
    const result = await reconcileOne(ctx, released());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'UnauthorizedOperation' });
    expect(result.outcome === 'failed' && result.message).toContain('ec2:DeleteVolume');
    expect(result.writes.some((w) => w.op === 'deletePersistentVolume')).toBe(false);
  });

  it.each([
    ['Retain', { pv: { spec: { persistentVolumeReclaimPolicy: 'Retain' }, status: { phase: 'Released' } } }],
    ['Bound', { pv: { status: { phase: 'Bound' } } }],
    ['Bound and being deleted', { pv: { metadata: { deletionTimestamp: '2025-03-01T11:00:00Z' }, status: { phase: 'Bound' } } }],
    ['Available', { pv: { status: { phase: 'Available' } } }],
    ['Failed', { pv: { status: { phase: 'Failed' } } }],
  ])('%s PV -> never DeleteVolume, never delete the PV, zero EC2 calls', async (_name, override) => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const result = await reconcileOne(ctx, pvItem(override));
    expect(result.outcome).toBe('done');
    expect(result.writes.some((w) => w.op === 'deletePersistentVolume')).toBe(false);
    expect(ec2.calls).toEqual([]);
  });

  it.each(['getDisk', 'deleteDisk'] as const)('%s throttled -> requeue, never failed, PV kept', async (verb) => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    ec2.fail(verb, throttled());
    const result = await reconcileOne(ctx, released());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 5, writes: [] });
  });
});
