import { describe, expect, it } from 'vitest';
import type { Result } from '../../lib/contract/index.js';
import { MAX_DEVICE_ATTEMPTS } from '../../lib/reconcile/attach.js';
import { deviceFor } from '../../lib/reconcile/device-names.js';
import { ec2Error, throttled, type FakeGateway } from './fake-gateway.js';
import {
  ATTACHER_FINALIZER,
  CLUSTER,
  NOW,
  PV_NAME,
  VA_NAME,
  attachedVolume,
  ownedTags,
  persistentVolume,
  reconcile,
  reconcileOne,
  setup,
  vaItem,
  volumeAttachment,
} from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const INSTANCE = 'i-0aaaaaaaaaaaaaaa1';
/** The name the attach of VOL asks for on an instance that uses only its root device. */
const DEVICE = deviceFor(VOL, ['/dev/xvda'])!;
const TIME = '2025-03-01T12:00:00Z';
const vaTarget = { kind: 'VolumeAttachment', name: VA_NAME, uid: 'va-uid-1' };
const pvTarget = { kind: 'PersistentVolume', name: PV_NAME, uid: 'pv-uid-1' };

function cloud(ec2: FakeGateway) {
  ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
  ec2.addInstance({ instanceId: INSTANCE });
}

/** The item once both finalizers are in place (what the cluster shows after our first response). */
const withFinalizers = (override: Record<string, unknown> = {}) =>
  vaItem({
    volumeAttachment: volumeAttachment({ metadata: { finalizers: [ATTACHER_FINALIZER] } }),
    pv: persistentVolume({ metadata: { finalizers: ['kubernetes.io/pv-protection', ATTACHER_FINALIZER] } }),
    ...override,
  });

function attachError(result: Result) {
  const write = result.writes.find((w) => w.op === 'updateVolumeAttachmentStatus');
  return write?.op === 'updateVolumeAttachmentStatus' ? (write.status.attachError ?? undefined) : undefined;
}

describe('attach', () => {
  it('nothing recorded yet -> only the record: attacher finalizer on PV and VA, node-id annotation; requeue at once, no AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const item = vaItem({ pv: persistentVolume() });
    delete item.volumeAttachment.metadata.annotations;
    delete item.volumeAttachment.metadata.finalizers;
    const result = await reconcileOne(ctx, item);
    expect(result).toEqual({
      key: `VolumeAttachment/${VA_NAME}`,
      outcome: 'requeue',
      requeueAfterSeconds: 0,
      message: expect.stringContaining('before attaching'),
      writes: [
        { op: 'addFinalizer', target: pvTarget, finalizer: ATTACHER_FINALIZER },
        { op: 'addFinalizer', target: vaTarget, finalizer: ATTACHER_FINALIZER },
        { op: 'setAnnotation', target: vaTarget, key: 'csi.alpha.kubernetes.io/node-id', value: INSTANCE },
      ],
    });
    // Write before act: a VolumeAttachment deleted now, or this answer lost, leaves no disk
    // attached that no finalizer would ever detach.
    expect(ec2.mutations).toEqual([]);
  });

  it('only the annotation missing (or naming another instance) -> it is written first, no AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const item = vaItem({ volumeAttachment: volumeAttachment({ metadata: { annotations: { 'csi.alpha.kubernetes.io/node-id': 'i-0ffffffffffffffff' } } }) });
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0 });
    expect(result.writes).toEqual([{ op: 'setAnnotation', target: vaTarget, key: 'csi.alpha.kubernetes.io/node-id', value: INSTANCE }]);
    expect(ec2.mutations).toEqual([]);
  });

  it('recorded, volume and instance ours, EC2 attaches at once -> status attached with devicePath', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.attachState = 'attached';
    const result = await reconcileOne(ctx, vaItem());
    expect(ec2.mutations).toEqual([{ verb: 'attachDisk', args: [VOL, INSTANCE, DEVICE] }]);
    expect(result).toEqual({
      key: `VolumeAttachment/${VA_NAME}`,
      outcome: 'done',
      writes: [
        {
          op: 'updateVolumeAttachmentStatus',
          name: VA_NAME,
          uid: 'va-uid-1',
          status: { attached: true, attachmentMetadata: { devicePath: DEVICE }, attachError: null },
        },
      ],
    });
  });

  it('EC2 says attaching -> look again when EC2 may be done (2.5 s); next reconcile sees attached -> status', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const first = await reconcileOne(ctx, vaItem());
    expect(first).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 2.5, writes: [] });

    ec2.volumes.get(VOL)!.attachments[0]!.state = 'attached';
    const second = await reconcileOne(ctx, withFinalizers());
    expect(second.outcome).toBe('done');
    expect(second.writes).toEqual([
      {
        op: 'updateVolumeAttachmentStatus',
        name: VA_NAME,
        uid: 'va-uid-1',
        status: { attached: true, attachmentMetadata: { devicePath: DEVICE }, attachError: null },
      },
    ]);
    expect(ec2.callsOf('attachDisk')).toHaveLength(1);
  });

  it('already attached and recorded -> done, no writes, no AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.volumes.get(VOL)!.attachments.push({ instanceId: INSTANCE, device: '/dev/xvdac', state: 'attached' });
    const item = withFinalizers({
      volumeAttachment: volumeAttachment({
        metadata: { finalizers: [ATTACHER_FINALIZER] },
        status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdac' } },
      }),
    });
    expect(await reconcileOne(ctx, item)).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.mutations).toEqual([]);
  });

  it('instance with used device names -> a free name, picked by the volume ID', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const used = ['/dev/xvda', '/dev/xvdaa', '/dev/xvdab', '/dev/xvdad', DEVICE];
    ec2.addInstance({ instanceId: INSTANCE, devicesInUse: [...used] });
    await reconcileOne(ctx, vaItem());
    const device = ec2.callsOf('attachDisk')[0]!.args[2];
    expect(used).not.toContain(device);
    expect(device).toBe(deviceFor(VOL, used));
  });

  it('two attaches to one instance in the same request -> different device names', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.addVolume({ volumeId: 'vol-0000000000000000b', tags: ownedTags({ CSIVolumeName: 'pvc-b' }) });
    const other = vaItem({
      volumeAttachment: volumeAttachment({ metadata: { name: 'csi-b', uid: 'va-uid-b' }, spec: { source: { persistentVolumeName: 'pvc-b' } } }),
      pv: attachedVolume({ metadata: { name: 'pvc-b', uid: 'pv-uid-b' }, spec: { csi: { volumeHandle: 'vol-0000000000000000b' } } }),
    });
    // The fake only learns of a device when AttachVolume runs; the allocator must not wait for it.
    ec2.instances.get(INSTANCE)!.devicesInUse = ['/dev/xvda'];
    const results = await reconcile(ctx, vaItem(), other);
    expect(results.map((r) => r.outcome)).toEqual(['requeue', 'requeue']);
    const devices = ec2.callsOf('attachDisk').map((c) => c.args[2]);
    expect(new Set(devices).size).toBe(2);
  });

  it('EC2 refuses the device name as in use -> the next name, same request', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.fail('attachDisk', ec2Error('deviceInUse', 'InvalidParameterValue', `Attachment point ${DEVICE} is already in use`));
    const result = await reconcileOne(ctx, vaItem());
    expect(ec2.callsOf('attachDisk').map((c) => c.args[2])).toEqual([DEVICE, deviceFor(VOL, ['/dev/xvda', DEVICE])]);
    expect(result.outcome).toBe('requeue');
  });

  it('every name tried refused as in use -> requeue after a bounded number of tries, not failed', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.fail('attachDisk', ec2Error('deviceInUse', 'InvalidParameterValue'), 10);
    const result = await reconcileOne(ctx, vaItem());
    expect(ec2.callsOf('attachDisk')).toHaveLength(MAX_DEVICE_ATTEMPTS);
    expect(result.outcome).toBe('requeue');
  });

  it('AttachmentLimitExceeded -> failed, attachError says the node has no free slot, errorCode 8 (ResourceExhausted: Kubernetes refreshes the node\'s attach limit)', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.fail('attachDisk', ec2Error('attachmentLimit', 'AttachmentLimitExceeded'));
    const result = await reconcileOne(ctx, vaItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'AttachmentLimitExceeded' });
    expect(attachError(result)).toEqual({
      time: TIME,
      message: expect.stringContaining('node "ip-10-0-1-23.ec2.internal" has no free attachment slot (AttachmentLimitExceeded)'),
      errorCode: 8,
    });
  });

  it.each([
    ['VolumeInUse (attached to another instance, by EC2)', ec2Error('inUse', 'VolumeInUse'), 'VolumeInUse', 9],
    ['InvalidVolume.NotFound', ec2Error('notFound', 'InvalidVolume.NotFound'), 'NotFound', 5],
    ['UnauthorizedOperation', ec2Error('unauthorized', 'UnauthorizedOperation'), 'UnauthorizedOperation', 13],
    ['an error volhook has no name for', ec2Error('other', 'SomethingNew'), 'SomethingNew', 13],
  ])('AttachVolume refused with %s -> attachError errorCode %s as the driver would answer', async (_name, error, reason, errorCode) => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.fail('attachDisk', error);
    const result = await reconcileOne(ctx, vaItem());
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(attachError(result)?.errorCode).toBe(errorCode);
  });

  it('volume attached to another instance -> failed with attachError naming it, no AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.volumes.get(VOL)!.attachments.push({ instanceId: 'i-0ccccccccccccccc3', device: '/dev/xvdaa', state: 'attached' });
    const result = await reconcileOne(ctx, vaItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'AttachedElsewhere' });
    expect(attachError(result)).toMatchObject({ message: `volume ${VOL} is attached to instance i-0ccccccccccccccc3`, errorCode: 9 });
    expect(ec2.mutations).toEqual([]);
  });

  it('volume still detaching from another instance -> requeue, no attachError, no AttachVolume', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.volumes.get(VOL)!.attachments.push({ instanceId: 'i-0ccccccccccccccc3', device: '/dev/xvdaa', state: 'detaching' });
    const result = await reconcileOne(ctx, vaItem());
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(ec2.mutations).toEqual([]);
  });

  it('multi-attach volume attached elsewhere -> attached here too', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const disk = ec2.volumes.get(VOL)!;
    disk.multiAttach = true;
    disk.attachments.push({ instanceId: 'i-0ccccccccccccccc3', device: '/dev/xvdaa', state: 'attached' });
    ec2.attachState = 'attached';
    const result = await reconcileOne(ctx, vaItem());
    expect(ec2.callsOf('attachDisk').map((c) => c.args.slice(0, 2))).toEqual([[VOL, INSTANCE]]);
    expect(result.outcome).toBe('done');
    expect(attachError(result)).toBeUndefined();
    expect(result.writes).toContainEqual(
      expect.objectContaining({ op: 'updateVolumeAttachmentStatus', status: expect.objectContaining({ attached: true, attachError: null }) }),
    );
  });

  it.each([
    ['volume of another cluster', (ec2: FakeGateway) => {
      ec2.addVolume({ volumeId: VOL, tags: { 'kubernetes.io/cluster/beta': 'owned' } });
      ec2.addInstance({ instanceId: INSTANCE });
    }, 'NotOwned', `volume ${VOL} is not owned by cluster "${CLUSTER}"`],
    ['volume tagged shared, not owned', (ec2: FakeGateway) => {
      ec2.addVolume({ volumeId: VOL, tags: { [`kubernetes.io/cluster/${CLUSTER}`]: 'shared' } });
      ec2.addInstance({ instanceId: INSTANCE });
    }, 'NotOwned', 'not owned'],
    ['instance of another cluster', (ec2: FakeGateway) => {
      ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
      ec2.addInstance({ instanceId: INSTANCE, tags: { 'kubernetes.io/cluster/beta': 'owned' } });
    }, 'NotOwned', `instance ${INSTANCE} does not belong to cluster "${CLUSTER}"`],
    ['volume not found', (ec2: FakeGateway) => ec2.addInstance({ instanceId: INSTANCE }), 'VolumeNotFound', `volume ${VOL} not found`],
    ['instance not found', (ec2: FakeGateway) => ec2.addVolume({ volumeId: VOL, tags: ownedTags() }), 'InstanceNotFound', INSTANCE],
    ['volume in another zone', (ec2: FakeGateway) => {
      ec2.addVolume({ volumeId: VOL, zone: 'us-east-1b', tags: ownedTags() });
      ec2.addInstance({ instanceId: INSTANCE });
    }, 'ZoneMismatch', 'us-east-1b'],
  ])('%s -> failed, attachError, no finalizers, no AttachVolume', async (_name, arrange, reason, message) => {
    const { ec2, ctx } = setup();
    arrange(ec2);
    const result = await reconcileOne(ctx, vaItem());
    expect(result).toMatchObject({ outcome: 'failed', reason });
    expect(attachError(result)?.message).toContain(message);
    expect(result.writes.map((w) => w.op)).toEqual(['updateVolumeAttachmentStatus']);
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['PV gone', { pv: null }, `PersistentVolume "${PV_NAME}" not found`, 5],
    ['PV being deleted', { pv: persistentVolume({ metadata: { deletionTimestamp: '2025-03-01T11:00:00Z' } }) }, 'is being deleted', 9],
    ['node gone', { node: null }, 'node "ip-10-0-1-23.ec2.internal" not found', 5],
    ['node without instance ID', { node: { csiNode: undefined, providerID: undefined } }, 'no EC2 instance ID', 3],
  ])('%s -> failed with attachError and its gRPC errorCode, zero gateway calls', async (_name, override, message, errorCode) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, vaItem(override));
    expect(result.outcome).toBe('failed');
    expect(attachError(result)).toEqual({ time: TIME, message: expect.stringContaining(message), errorCode });
    expect(ec2.calls).toEqual([]);
  });

  it.each([
    ['CSINode nodeID', { csiNode: { nodeID: INSTANCE }, providerID: 'aws:///us-east-1a/i-0fffffffffffffff9' }],
    ['providerID, no CSINode entry', { csiNode: undefined, providerID: `aws:///us-east-1a/${INSTANCE}` }],
  ])('node with %s -> attached to that instance', async (_name, nodeOverride) => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    await reconcileOne(ctx, vaItem({ node: nodeOverride }));
    expect(ec2.callsOf('attachDisk')[0]!.args[1]).toBe(INSTANCE);
  });

  it('VolumeAttachment of another attacher -> done, nothing', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, vaItem({ volumeAttachment: volumeAttachment({ spec: { attacher: 'nfs.csi.k8s.io' } }) }));
    expect(result).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it('attaching for more than 90 s -> DetachVolume to retry, requeue', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const since = new Date(NOW.getTime() - 91_000).toISOString();
    ec2.volumes.get(VOL)!.attachments.push({ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attaching', attachTime: since });
    const result = await reconcileOne(ctx, withFinalizers());
    expect(ec2.mutations).toEqual([{ verb: 'detachDisk', args: [VOL, INSTANCE] }]);
    expect(result.outcome).toBe('requeue');
  });

  it('attaching for less than 90 s, past the usual 2.5 s -> look again soon (0.25 s), no EC2 mutation', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    const since = new Date(NOW.getTime() - 30_000).toISOString();
    ec2.volumes.get(VOL)!.attachments.push({ instanceId: INSTANCE, device: '/dev/xvdaa', state: 'attaching', attachTime: since });
    expect(await reconcileOne(ctx, withFinalizers())).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0.25, writes: [] });
    expect(ec2.mutations).toEqual([]);
  });

  it('AttachVolume IncorrectState -> requeue, no attachError', async () => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.fail('attachDisk', ec2Error('incorrectState', 'IncorrectState'));
    const result = await reconcileOne(ctx, vaItem());
    expect(result.outcome).toBe('requeue');
    expect(result.writes).toEqual([]);
  });

  it.each(['getDisk', 'getInstance', 'attachDisk'] as const)('%s throttled -> requeue with backoff, never failed, no attachError', async (verb) => {
    const { ec2, ctx } = setup();
    cloud(ec2);
    ec2.fail(verb, throttled());
    const result = await reconcileOne(ctx, vaItem());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 5 });
    expect(attachError(result)).toBeUndefined();
  });
});
