import { describe, expect, it } from 'vitest';
import { ec2Error, throttled, type FakeGateway } from './fake-gateway.js';
import { ATTACHER_FINALIZER, CLUSTER, VA_NAME, ownedTags, reconcileOne, setup, vaItem, volumeAttachment } from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const INSTANCE = 'i-0aaaaaaaaaaaaaaa1';
const vaTarget = { kind: 'VolumeAttachment', name: VA_NAME, uid: 'va-uid-1' };

/** A VolumeAttachment being deleted, with our finalizer, shown as attached. */
const deleting = (override: Record<string, unknown> = {}) =>
  vaItem({
    volumeAttachment: volumeAttachment({
      metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', finalizers: [ATTACHER_FINALIZER] },
      status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } },
    }),
    ...override,
  });

const detachedWrites = [
  {
    op: 'updateVolumeAttachmentStatus',
    name: VA_NAME,
    uid: 'va-uid-1',
    status: { attached: false, attachmentMetadata: null, detachError: null },
  },
  { op: 'removeFinalizer', target: vaTarget, finalizer: ATTACHER_FINALIZER },
];

function attached(ec2: FakeGateway, state: 'attached' | 'detaching' = 'attached') {
  ec2.addVolume({ volumeId: VOL, state: 'in-use', tags: ownedTags(), attachments: [{ instanceId: INSTANCE, device: '/dev/xvdaa', state }] });
  ec2.addInstance({ instanceId: INSTANCE, devicesInUse: ['/dev/xvda', '/dev/xvdaa'] });
}

describe('detach', () => {
  it('attached -> DetachVolume, requeue while it detaches, finalizer kept', async () => {
    const { ec2, ctx } = setup();
    attached(ec2);
    const result = await reconcileOne(ctx, deleting());
    expect(ec2.mutations).toEqual([{ verb: 'detachDisk', args: [VOL, INSTANCE] }]);
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 2, writes: [] });
  });

  it('still detaching -> requeue, no second DetachVolume', async () => {
    const { ec2, ctx } = setup();
    attached(ec2, 'detaching');
    expect(await reconcileOne(ctx, deleting())).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(ec2.mutations).toEqual([]);
  });

  it('detached -> status attached false, then the finalizer goes (by uid); no DetachVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    ec2.addInstance({ instanceId: INSTANCE });
    const result = await reconcileOne(ctx, deleting());
    expect(result).toEqual({ key: `VolumeAttachment/${VA_NAME}`, outcome: 'done', writes: detachedWrites });
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['volume gone', (ec2: FakeGateway) => ec2.addInstance({ instanceId: INSTANCE }), {}],
    ['instance gone', (ec2: FakeGateway) => ec2.addVolume({ volumeId: VOL, tags: ownedTags() }), {}],
    ['node gone', () => {}, { node: null }],
    ['PV gone', () => {}, { pv: null }],
  ])('%s -> counts as detached: status and finalizer, no DetachVolume', async (_name, arrange, override) => {
    const { ec2, ctx } = setup();
    arrange(ec2);
    const result = await reconcileOne(ctx, deleting(override));
    expect(result).toMatchObject({ outcome: 'done', writes: detachedWrites });
    expect(ec2.mutations).toEqual([]);
  });

  it('being deleted without our finalizer -> done, nothing, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const item = vaItem({ volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', finalizers: [] } }) });
    expect(await reconcileOne(ctx, item)).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it('Node deleted while its instance runs and the disk is attached -> DetachVolume on the instance the annotation recorded', async () => {
    const { ec2, ctx } = setup();
    attached(ec2);
    const result = await reconcileOne(ctx, deleting({ node: null }));
    expect(ec2.mutations).toEqual([{ verb: 'detachDisk', args: [VOL, INSTANCE] }]);
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
  });

  it('annotation and Node both name an instance -> the annotation wins (it is where the disk was attached)', async () => {
    const { ec2, ctx } = setup();
    attached(ec2);
    ec2.addInstance({ instanceId: 'i-0bbbbbbbbbbbbbbb2' });
    await reconcileOne(ctx, deleting({ node: { name: 'ip-10-0-1-23.ec2.internal', labels: {}, csiNode: { nodeID: 'i-0bbbbbbbbbbbbbbb2' } } }));
    expect(ec2.mutations).toEqual([{ verb: 'detachDisk', args: [VOL, INSTANCE] }]);
  });

  it('neither annotation nor Node, disk attached somewhere -> failed InstanceUnknown with detachError, no DetachVolume, finalizer kept', async () => {
    const { ec2, ctx } = setup();
    attached(ec2);
    const item = deleting({ node: null });
    delete item.volumeAttachment.metadata.annotations;
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'InstanceUnknown', message: expect.stringContaining(INSTANCE) });
    expect(result.writes.some((w) => w.op === 'removeFinalizer')).toBe(false);
    expect(result.writes).toContainEqual(expect.objectContaining({ op: 'updateVolumeAttachmentStatus', status: expect.objectContaining({ detachError: expect.anything() }) }));
    expect(ec2.mutations).toEqual([]);
  });

  it('neither annotation nor Node, EC2 shows the disk attached nowhere -> detached: status and finalizer', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const item = deleting({ node: null });
    delete item.volumeAttachment.metadata.annotations;
    expect(await reconcileOne(ctx, item)).toMatchObject({ outcome: 'done', writes: detachedWrites });
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['volume of another cluster', (ec2: FakeGateway) => {
      ec2.addVolume({ volumeId: VOL, tags: { 'kubernetes.io/cluster/beta': 'owned' }, attachments: [{ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attached' }] });
      ec2.addInstance({ instanceId: INSTANCE });
    }, `volume ${VOL} is not owned by cluster "${CLUSTER}"`],
    ['instance of another cluster', (ec2: FakeGateway) => {
      ec2.addVolume({ volumeId: VOL, tags: ownedTags(), attachments: [{ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attached' }] });
      ec2.addInstance({ instanceId: INSTANCE, tags: {} });
    }, `instance ${INSTANCE} does not belong to cluster "${CLUSTER}"`],
  ])('%s -> failed with detachError, no DetachVolume, finalizer kept', async (_name, arrange, message) => {
    const { ec2, ctx } = setup();
    arrange(ec2);
    const result = await reconcileOne(ctx, deleting());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned', message });
    expect(result.writes).toEqual([
      {
        op: 'updateVolumeAttachmentStatus',
        name: VA_NAME,
        uid: 'va-uid-1',
        status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' }, detachError: { time: '2025-03-01T12:00:00Z', message } },
      },
    ]);
    expect(ec2.mutations).toEqual([]);
  });

  it('DetachVolume unauthorized -> failed, detachError names ec2:DetachVolume', async () => {
    const { ec2, ctx } = setup();
    attached(ec2);
    ec2.fail('detachDisk', ec2Error('unauthorized', 'UnauthorizedOperation'));
    const result = await reconcileOne(ctx, deleting());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'UnauthorizedOperation' });
    const write = result.writes[0];
    expect(write?.op === 'updateVolumeAttachmentStatus' && write.status.detachError?.message).toContain('ec2:DetachVolume');
    expect(result.writes.some((w) => w.op === 'removeFinalizer')).toBe(false);
  });

  it.each(['getDisk', 'getInstance', 'detachDisk'] as const)('%s throttled -> requeue, never failed, finalizer kept', async (verb) => {
    const { ec2, ctx } = setup();
    attached(ec2);
    ec2.fail(verb, throttled());
    expect(await reconcileOne(ctx, deleting())).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 5, writes: [] });
  });
});
