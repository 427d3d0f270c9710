/**
 * VolumeAttachments of inline volumes: the attach/detach controller writes the CSI translation
 * of a pod's inline `awsElasticBlockStore` volume in `spec.source.inlineVolumeSpec` and names
 * no PV. They are attached and detached by `inlineVolumeSpec.csi.volumeHandle`, with the same
 * checks at the disk as any other.
 */
import { describe, expect, it } from 'vitest';
import type { Result } from '../../lib/contract/index.js';
import { deviceFor } from '../../lib/reconcile/device-names.js';
import type { FakeGateway } from './fake-gateway.js';
import { ATTACHER_FINALIZER, CLUSTER, VA_NAME, ownedTags, reconcileOne, setup, vaItem } from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const INSTANCE = 'i-0aaaaaaaaaaaaaaa1';
const DEVICE = deviceFor(VOL, ['/dev/xvda'])!;
const vaTarget = { kind: 'VolumeAttachment', name: VA_NAME, uid: 'va-uid-1' };

/** What the real controller writes for `awsElasticBlockStore: {volumeID: aws://us-east-1a/<VOL>, fsType: ext4}`. */
const inlineSpec = (csi: Record<string, unknown> = {}) => ({
  csi: { driver: 'ebs.csi.aws.com', volumeHandle: VOL, fsType: 'ext4', volumeAttributes: { partition: '0' }, ...csi },
  accessModes: ['ReadWriteOnce'],
});

function inlineItem(source: Record<string, unknown> = { inlineVolumeSpec: inlineSpec() }, metadata: Record<string, unknown> = {}, status?: Record<string, unknown>) {
  // `undefined` drops the fixture's PV name in the merge.
  return vaItem({ volumeAttachment: { metadata, spec: { source: { persistentVolumeName: undefined, ...source } }, ...(status && { status }) }, pv: null });
}

function cloud(ec2: FakeGateway, tags: Record<string, string> = ownedTags()) {
  ec2.addVolume({ volumeId: VOL, tags });
  ec2.addInstance({ instanceId: INSTANCE });
}

function attachError(result: Result) {
  const write = result.writes.find((w) => w.op === 'updateVolumeAttachmentStatus');
  return write?.op === 'updateVolumeAttachmentStatus' ? (write.status.attachError ?? undefined) : undefined;
}

describe('attach of an inline volume', () => {
  it('nothing recorded yet -> the record on the VolumeAttachment only (there is no PV), no AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const item = inlineItem();
    delete item.volumeAttachment.metadata.annotations;
    delete item.volumeAttachment.metadata.finalizers;
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0 });
    expect(result.writes).toEqual([
      { op: 'addFinalizer', target: vaTarget, finalizer: ATTACHER_FINALIZER },
      { op: 'setAnnotation', target: vaTarget, key: 'csi.alpha.kubernetes.io/node-id', value: INSTANCE },
    ]);
    expect(ec2.mutations).toEqual([]);
  });

  it('recorded, disk and instance ours -> AttachVolume of the inline handle, status attached with devicePath', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.attachState = 'attached';
    const result = await reconcileOne(ctx, inlineItem());
    expect(ec2.mutations).toEqual([{ verb: 'attachDisk', args: [VOL, INSTANCE, DEVICE] }]);
    expect(result).toMatchObject({ key: `VolumeAttachment/${VA_NAME}`, outcome: 'done' });
    expect(result.writes).toEqual([
      { op: 'updateVolumeAttachmentStatus', name: VA_NAME, uid: 'va-uid-1', status: { attached: true, attachmentMetadata: { devicePath: DEVICE }, attachError: null } },
    ]);
  });

  it.each([
    ['a disk of another cluster', { 'kubernetes.io/cluster/beta': 'owned' }, 'NotOwned', `volume ${VOL} is not owned by cluster "${CLUSTER}"`],
    ['a disk of the cluster not adopted', (() => { const { 'ebs.csi.aws.com/cluster': _a, ...rest } = ownedTags(); return rest; })(), 'NotAdopted', 'adopt'],
  ])('naming %s -> failed, attachError, no AttachVolume (checked at the disk as for a PV)', async (_name, tags, reason, message) => {
    const { ec2, ctx } = setup();
    cloud(ec2, tags);
    const result = await reconcileOne(ctx, inlineItem());
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(attachError(result)?.message).toContain(message);
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['of another driver', { inlineVolumeSpec: inlineSpec({ driver: 'pd.csi.storage.gke.io' }) }, 'NoVolumeHandle', 'of driver "pd.csi.storage.gke.io"'],
    ['without a csi source (untranslated in-tree)', { inlineVolumeSpec: { awsElasticBlockStore: { volumeID: VOL } } }, 'NoVolumeHandle', 'untranslated in-tree inlineVolumeSpec is not supported'],
    ['with an empty handle', { inlineVolumeSpec: inlineSpec({ volumeHandle: '' }) }, 'NoVolumeHandle', 'no ebs.csi.aws.com volumeHandle'],
    ['naming neither a PV nor an inline spec', {}, 'NoVolumeSource', 'neither a PersistentVolume nor an inlineVolumeSpec'],
  ])('an inline spec %s -> refused with attachError naming it, zero gateway calls', async (_name, source, reason, message) => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const result = await reconcileOne(ctx, inlineItem(source));
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(attachError(result)?.message).toContain(message);
    expect(ec2.calls).toEqual([]);
  });
});

describe('detach of an inline volume', () => {
  const deleting = () => inlineItem(undefined, { deletionTimestamp: '2025-03-01T11:59:00Z', finalizers: [ATTACHER_FINALIZER] }, { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } });

  it('attached -> DetachVolume of the inline handle from the recorded instance, finalizer kept', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, state: 'in-use', tags: ownedTags(), attachments: [{ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attached' }] });
    ec2.addInstance({ instanceId: INSTANCE, devicesInUse: ['/dev/xvda', '/dev/xvdaa'] });
    const result = await reconcileOne(ctx, deleting());
    expect(ec2.mutations).toEqual([{ verb: 'detachDisk', args: [VOL, INSTANCE] }]);
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
  });

  it('detached -> status attached false and the finalizer goes; no DetachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const result = await reconcileOne(ctx, deleting());
    expect(result).toMatchObject({ outcome: 'done' });
    expect(result.writes).toEqual([
      { op: 'updateVolumeAttachmentStatus', name: VA_NAME, uid: 'va-uid-1', status: { attached: false, attachmentMetadata: null, detachError: null } },
      { op: 'removeFinalizer', target: vaTarget, finalizer: ATTACHER_FINALIZER },
    ]);
    expect(ec2.mutations).toEqual([]);
  });

  it('attached to a disk of another cluster -> not detached: detachError NotOwned, finalizer kept', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, state: 'in-use', tags: { 'kubernetes.io/cluster/beta': 'owned' }, attachments: [{ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attached' }] });
    ec2.addInstance({ instanceId: INSTANCE });
    const result = await reconcileOne(ctx, deleting());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect(ec2.mutations).toEqual([]);
  });
});
