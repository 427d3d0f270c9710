import { describe, expect, it } from 'vitest';
import type { NewPersistentVolume, Result, Write } from '../../lib/contract/index.js';
import { stableIndex } from '../../lib/reconcile/zone.js';
import type { ClusterRegistrationInput } from '../../lib/registry/registration.js';
import { ec2Error, throttled } from './fake-gateway.js';
import { CREATE_HORIZON_SECONDS } from '../../lib/reconcile/claim-deleted.js';
import { FRESH_REQUEST_SECONDS } from '../../lib/reconcile/freshness.js';
import {
  CLAIM_PROTECTION,
  CLAIM_UID,
  DRIVER,
  NOW,
  merge,
  PROVISIONER_FINALIZER,
  PV_NAME,
  claim,
  claimItem,
  node,
  ownedTags,
  reconcileOne,
  setup,
  storageClass,
} from './fixtures.js';

/** The CSI PV a claim of a CSI class gets (in-tree PVs are tested in migration.test.ts). */
const pvOf = (result: Result): NewPersistentVolume | undefined =>
  result.writes.find((w): w is Extract<Write, { op: 'createPersistentVolume' }> => w.op === 'createPersistentVolume')?.pv as NewPersistentVolume | undefined;

const events = (result: Result) =>
  result.writes.flatMap((w) => (w.op === 'createEvent' ? [{ type: w.type, reason: w.reason, message: w.message }] : []));

const claimRef = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'data', namespace: 'shop', uid: CLAIM_UID };
const claimTarget = { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'shop', uid: CLAIM_UID };

/** Provisions `item` with volumes that are available at once; returns the result and the PV. */
async function provision(item = claimItem(), registration = {}) {
  const { ec2, ctx } = setup(registration);
  ec2.createdState = 'available';
  const result = await reconcileOne(ctx, item);
  return { ec2, result, pv: pvOf(result) };
}

describe('provision: the PV', () => {
  it('available disk -> PV exactly as external-provisioner writes it, between Provisioning and ProvisioningSucceeded', async () => {
    const { ec2, result, pv } = await provision();
    const [volumeId] = ec2.volumes.keys();
    expect(result.outcome).toBe('done');
    expect(pv).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: PV_NAME,
        annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER },
        finalizers: [PROVISIONER_FINALIZER],
      },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        claimRef: { ...claimRef, resourceVersion: '4711' },
        csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }],
          },
        },
      },
    });
    // The claim's protection goes only after the PV: from then on the PV's reclaim owns the disk.
    expect(result.writes.map((w) => (w.op === 'createEvent' ? w.reason : w.op))).toEqual([
      'Provisioning',
      'createPersistentVolume',
      'removeFinalizer',
      'ProvisioningSucceeded',
    ]);
    expect(result.writes[2]).toEqual({ op: 'removeFinalizer', target: claimTarget, finalizer: CLAIM_PROTECTION });
    expect(events(result)).toEqual([
      { type: 'Normal', reason: 'Provisioning', message: 'External provisioner is provisioning volume for claim "shop/data"' },
      { type: 'Normal', reason: 'ProvisioningSucceeded', message: `Successfully provisioned volume ${PV_NAME}` },
    ]);
    const event = result.writes.find((w) => w.op === 'createEvent');
    expect(event).toMatchObject({ involvedObject: { ...claimRef } });
  });

  it.each([
    ['Retain class -> policy Retain and no provisioner finalizer', { storageClass: { reclaimPolicy: 'Retain' } },
      (pv: NewPersistentVolume) => {
        expect(pv.spec.persistentVolumeReclaimPolicy).toBe('Retain');
        expect(pv.metadata.finalizers).toBeUndefined();
      }],
    ['class without reclaimPolicy -> Delete with the finalizer', { storageClass: { reclaimPolicy: undefined } },
      (pv: NewPersistentVolume) => {
        expect(pv.spec.persistentVolumeReclaimPolicy).toBe('Delete');
        expect(pv.metadata.finalizers).toEqual([PROVISIONER_FINALIZER]);
      }],
    ['class mountOptions -> copied', { storageClass: { mountOptions: ['noatime', 'nodiratime'] } },
      (pv: NewPersistentVolume) => expect(pv.spec.mountOptions).toEqual(['noatime', 'nodiratime'])],
    ['no mountOptions -> none', {}, (pv: NewPersistentVolume) => expect(pv.spec.mountOptions).toBeUndefined()],
    ['Block claim -> volumeMode Block and no fsType', { pvc: { spec: { volumeMode: 'Block' } } },
      (pv: NewPersistentVolume) => {
        expect(pv.spec.volumeMode).toBe('Block');
        expect(pv.spec.csi).not.toHaveProperty('fsType');
      }],
    ['fstype xfs -> csi.fsType xfs', { storageClass: { parameters: { 'csi.storage.k8s.io/fstype': 'xfs' } } },
      (pv: NewPersistentVolume) => expect(pv.spec.csi.fsType).toBe('xfs')],
    ['blockSize parameter -> csi.volumeAttributes', { storageClass: { parameters: { blockSize: '4096' } } },
      (pv: NewPersistentVolume) => expect(pv.spec.csi.volumeAttributes).toEqual({ blocksize: '4096' })],
    ['ReadWriteOncePod claim -> access modes copied', { pvc: { spec: { accessModes: ['ReadWriteOncePod'] } } },
      (pv: NewPersistentVolume) => expect(pv.spec.accessModes).toEqual(['ReadWriteOncePod'])],
    ['beta class annotation -> wins over spec.storageClassName',
      { pvc: { metadata: { annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } } }, storageClass: { metadata: { name: 'fast' } } },
      (pv: NewPersistentVolume) => expect(pv.spec.storageClassName).toBe('fast')],
    ['claim request 1Gi + 1 byte -> 2Gi', { pvc: { spec: { resources: { requests: { storage: '1073741825' } } } } },
      (pv: NewPersistentVolume) => expect(pv.spec.capacity.storage).toBe('2Gi')],
  ])('%s', async (_name, override, check) => {
    const { pv } = await provision(claimItem(override));
    expect(pv).toBeDefined();
    check(pv!);
  });

  it('disk found with another size -> capacity is the size EC2 reports, not the request', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000abcd', sizeGiB: 25, zone: 'us-east-1a', tags: ownedTags() });
    const result = await reconcileOne(ctx, claimItem());
    expect(pvOf(result)?.spec.capacity.storage).toBe('25Gi');
    expect(pvOf(result)?.spec.csi.volumeHandle).toBe('vol-0000000000000abcd');
    expect(ec2.callsOf('createDisk')).toHaveLength(0);
  });

  it('beta provisioner annotation alone -> provisioned', async () => {
    const item = claimItem({
      pvc: { metadata: { annotations: { 'volume.kubernetes.io/storage-provisioner': undefined, 'volume.beta.kubernetes.io/storage-provisioner': DRIVER } } },
    });
    const { ec2, result, pv } = await provision(item);
    expect(result.outcome).toBe('done');
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
    expect(pv?.metadata.name).toBe(PV_NAME);
    expect(pv?.spec.csi.volumeHandle).toBe([...ec2.volumes.keys()][0]);
  });
});

describe('provision: waiting and idempotency', () => {
  it('disk still creating -> requeue in seconds, Provisioning event, no PV', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 2 });
    expect(pvOf(result)).toBeUndefined();
    expect(events(result).map((e) => e.reason)).toEqual(['Provisioning']);
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
  });

  it('same item twice -> one CreateVolume; the second finds the disk by name and writes the PV, no second Provisioning', async () => {
    const { ec2, ctx } = setup();
    await reconcileOne(ctx, claimItem());
    for (const disk of ec2.volumes.values()) disk.state = 'available';
    const second = await reconcileOne(ctx, claimItem());
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
    expect(ec2.volumes.size).toBe(1);
    expect(second.outcome).toBe('done');
    expect(pvOf(second)?.metadata.name).toBe(PV_NAME);
    expect(events(second).map((e) => e.reason)).toEqual(['ProvisioningSucceeded']);
  });

  it('response lost after CreateVolume -> the replay finds the disk and answers the same PV', async () => {
    const { ec2, result: lost } = await provision();
    const { ctx } = setup();
    const replay = await reconcileOne({ ...ctx, ec2 }, claimItem());
    expect(pvOf(replay)).toEqual(pvOf(lost));
    expect(ec2.callsOf('createDisk')).toHaveLength(1);
  });

  it('CreateVolume request -> tags: ours, the class\'s, the registration\'s; reserved keys only ours', async () => {
    const item = claimItem({ storageClass: { parameters: { tagSpecification_1: 'team={{ .PVCNamespace }}' } } });
    const { ec2 } = await provision(item, {
      extraTags: {
        costcenter: '42',
        CSIVolumeName: 'forged',
        'kubernetes.io/cluster/alpha': 'shared',
        'kubernetes.io/cluster/other': 'owned',
        'ebs.csi.aws.com/cluster': 'false',
      },
    });
    const [request] = ec2.callsOf('createDisk')[0]!.args as [{ tags: Record<string, string> }];
    expect(request.tags).toEqual({
      ...ownedTags(),
      // The EBS CSI driver's cluster-scoped policy fences by it: a cluster handed back keeps the disk.
      'ebs.csi.aws.com/cluster-name': 'alpha',
      team: 'shop',
      costcenter: '42',
    });
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ name: PV_NAME, zone: 'us-east-1a', sizeGiB: 20, type: 'gp3', encrypted: false, multiAttach: false });
  });
});

describe('provision: refused before any EC2 call', () => {
  it.each([
    ['claim with a selector', { pvc: { spec: { selector: { matchLabels: { app: 'db' } } } } }, 'SelectorNotSupported', 'claim Selector is not supported'],
    ['restore from a VolumeSnapshot that does not exist', { pvc: { spec: { dataSource: { kind: 'VolumeSnapshot', name: 'snap-1', apiGroup: 'snapshot.storage.k8s.io' } } }, source: { kind: 'VolumeSnapshot', snapshot: null, content: null } },
      'SnapshotNotFound', 'snapshot.storage.k8s.io/VolumeSnapshot "snap-1" does not exist in namespace shop'],
    ['clone of a claim that does not exist', { pvc: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'source' } } }, source: { kind: 'PersistentVolumeClaim', claim: null, pv: null } },
      'SourceNotFound', 'PersistentVolumeClaim "source" does not exist in namespace shop'],
    ['a VolumeSnapshot of another API group', { pvc: { spec: { dataSource: { kind: 'VolumeSnapshot', name: 'snap-1', apiGroup: 'example.com' } } } },
      'DataSourceNotSupported', 'example.com/VolumeSnapshot "snap-1"'],
    ['dataSourceRef to a VolumeSnapshot in another namespace', { pvc: { spec: { dataSourceRef: { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io', namespace: 'backups' } } } },
      'DataSourceNotSupported', 'snapshot.storage.k8s.io/VolumeSnapshot "backups/nightly"'],
    ['dataSourceRef to a populator (any other kind)', { pvc: { spec: { dataSourceRef: { kind: 'VolumePopulator', name: 'seed', apiGroup: 'example.com' } } } },
      'DataSourceNotSupported', 'example.com/VolumePopulator "seed"'],
    ['both dataSource and dataSourceRef (as the API server mirrors them): the ref decides',
      { pvc: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'source' }, dataSourceRef: { kind: 'Widget', name: 'source', apiGroup: 'example.com' } } } },
      'DataSourceNotSupported', 'example.com/Widget "source"'],
    ['iops not a number', { storageClass: { parameters: { iops: 'lots' } } }, 'InvalidParameter', 'iops'],
    ['unknown parameter', { storageClass: { parameters: { colour: 'blue' } } }, 'InvalidParameter', 'colour'],
    ['ReadWriteMany on gp3', { pvc: { spec: { accessModes: ['ReadWriteMany'] } } }, 'InvalidParameter', 'ReadWriteMany'],
  ])('%s -> failed naming the cause, Warning ProvisioningFailed, zero gateway calls', async (_name, override, reason, named) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem(override));
    expect(result).toMatchObject({ outcome: 'failed', reason });
    if (result.outcome !== 'failed') return;
    expect(result.message).toContain(named);
    expect(result.requeueAfterSeconds).toBeGreaterThanOrEqual(60);
    // As external-provisioner records a Provision call that failed: Provisioning, then the Warning.
    expect(events(result)).toEqual([
      { type: 'Normal', reason: 'Provisioning', message: 'External provisioner is provisioning volume for claim "shop/data"' },
      { type: 'Warning', reason: 'ProvisioningFailed', message: `failed to provision volume with StorageClass "gp3": ${result.message}` },
    ]);
    expect(result.writes.map((w) => w.op)).toEqual(['createEvent', 'createEvent']);
    expect(ec2.calls).toEqual([]);
  });

  it('a new clone claim whose item carries no source facts, not yet protected -> requeue, no protection finalizer, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const fresh = claimItem({
      pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] }, spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'source' } } },
    });
    const result = await reconcileOne(ctx, fresh);
    expect(result).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('PersistentVolumeClaim "source"') });
    expect(result.writes.some((w) => w.op === 'addFinalizer')).toBe(false);
    expect(ec2.calls).toEqual([]);
  });

  it.each<[string, object, Partial<ClusterRegistrationInput>, string]>([
    ['type not allowed', {}, { allowedVolumeTypes: ['gp2'] }, 'volume type gp3 is not allowed'],
    ['size over maxSizeGiB', {}, { maxSizeGiB: 10 }, 'maxSizeGiB 10'],
    ['zone not allowed', {}, { allowedZones: ['us-east-1b'] }, 'us-east-1a'],
    ['no zone known', { clusterZones: [] }, {}, 'no zone'],
  ])('registration limit: %s -> failed naming it, zero gateway calls', async (_name, override, registration, named) => {
    const { ec2, ctx } = setup(registration);
    const result = await reconcileOne(ctx, claimItem(override));
    expect(result.outcome).toBe('failed');
    expect(result.outcome === 'failed' && result.message).toContain(named);
    expect(events(result).map((e) => e.reason)).toEqual(['Provisioning', 'ProvisioningFailed']);
    expect(ec2.calls).toEqual([]);
  });

  it.each([
    ['another provisioner', { pvc: { metadata: { annotations: { 'volume.kubernetes.io/storage-provisioner': 'example.com/nfs' } } } }, 'example.com/nfs'],
    ['no provisioner annotation', { pvc: { metadata: { annotations: { 'volume.kubernetes.io/storage-provisioner': undefined } } } }, '"none"'],
  ])('%s -> failed OtherProvisioner naming both provisioners, no writes on the claim, zero gateway calls', async (_name, override, named) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem(merge({ pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } } }, override)));
    expect(result).toMatchObject({ key: 'PersistentVolumeClaim/shop/data', outcome: 'failed', reason: 'OtherProvisioner', writes: [] });
    expect(result.outcome === 'failed' && result.message).toContain(named);
    expect(result.outcome === 'failed' && result.message).toContain('registered for "ebs.csi.aws.com"');
    expect(ec2.calls).toEqual([]);
  });

  it.each([
    ['already bound (spec.volumeName)', { pvc: { spec: { volumeName: 'pv-static' } } }],
    ['claim being deleted', { pvc: { metadata: { deletionTimestamp: '2025-03-01T11:00:00Z' } } }],
    ['PV pvc-<uid> exists', { pvExists: true }],
    ['WaitForFirstConsumer, no node selected yet', { storageClass: { volumeBindingMode: 'WaitForFirstConsumer' } }],
  ])('%s -> done, no writes, zero gateway calls', async (_name, override) => {
    const { ec2, ctx } = setup();
    const unprotected = claimItem(merge({ pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } } }, override));
    const result = await reconcileOne(ctx, unprotected);
    expect(result).toEqual({ key: 'PersistentVolumeClaim/shop/data', outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it('StorageClass missing -> requeue, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem({ storageClass: null }));
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(ec2.calls).toEqual([]);
  });
});

describe('provision: zones', () => {
  const wffc = (selectedNode: unknown, classOverride: unknown = {}) =>
    claimItem({
      pvc: { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'ip-10-0-1-23.ec2.internal' } } },
      storageClass: { volumeBindingMode: 'WaitForFirstConsumer', ...(classOverride as object) },
      selectedNode,
      clusterZones: [],
    });

  it.each([
    ['well-known zone label', node({ labels: { 'topology.kubernetes.io/zone': 'us-east-1c' } }), 'us-east-1c'],
    ['EBS CSI zone label only', node({ labels: { 'topology.kubernetes.io/zone': undefined, 'topology.ebs.csi.aws.com/zone': 'us-east-1b' } }), 'us-east-1b'],
    ['providerID only', node({ labels: { 'topology.kubernetes.io/zone': undefined }, providerID: 'aws:///us-east-1d/i-0bbbbbbbbbbbbbbb2' }), 'us-east-1d'],
  ])('WaitForFirstConsumer, node with %s -> volume and nodeAffinity in the node\'s zone', async (_name, selected, zone) => {
    const { ec2, pv } = await provision(wffc(selected));
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ zone });
    expect(pv?.spec.nodeAffinity?.required.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([zone]);
  });

  it('WaitForFirstConsumer, selected node gone -> selected-node annotation removed (by uid), Warning, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, wffc(null));
    expect(result.outcome).toBe('failed');
    expect(result.writes).toContainEqual({
      op: 'removePvcAnnotation',
      namespace: 'shop',
      name: 'data',
      uid: CLAIM_UID,
      annotation: 'volume.kubernetes.io/selected-node',
    });
    expect(events(result).map((e) => `${e.type} ${e.reason}`)).toEqual(['Normal Provisioning', 'Warning ProvisioningFailed']);
    expect(ec2.calls).toEqual([]);
  });

  it('WaitForFirstConsumer, item without the selected node\'s facts -> requeue, no Warning, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, wffc(undefined));
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it('WaitForFirstConsumer, node zone outside allowedTopologies -> failed, no CreateVolume', async () => {
    const { ec2, ctx } = setup();
    const allowed = { allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['us-east-1b'] }] }] };
    const result = await reconcileOne(ctx, wffc(node(), allowed));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NoZone' });
    expect(ec2.calls).toEqual([]);
  });

  it('Immediate with allowedTopologies under both keys -> a zone among them, the same on every retry', async () => {
    const item = claimItem({
      clusterZones: ['us-east-1a', 'us-east-1b', 'us-east-1c'],
      storageClass: {
        allowedTopologies: [
          { matchLabelExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', values: ['us-east-1b'] }] },
          { matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['us-east-1c', 'us-east-1d'] }] },
        ],
      },
    });
    const zones = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const { ec2 } = await provision(item);
      zones.add((ec2.callsOf('createDisk')[0]!.args[0] as { zone: string }).zone);
    }
    expect(zones.size).toBe(1);
    const expected = ['us-east-1b', 'us-east-1c', 'us-east-1d'][stableIndex(CLAIM_UID, 3)];
    expect([...zones]).toEqual([expected]);
  });

  it('Immediate, many claims -> spread over the cluster\'s zones, within registration.allowedZones', async () => {
    const { ec2, ctx } = setup({ allowedZones: ['us-east-1a', 'us-east-1b'] });
    ec2.createdState = 'available';
    for (let i = 0; i < 24; i++) {
      const uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      await reconcileOne(ctx, claimItem({ pvc: claim({ metadata: { uid } }), clusterZones: ['us-east-1c', 'us-east-1b', 'us-east-1a'] }));
    }
    const zones = new Set(ec2.callsOf('createDisk').map((c) => (c.args[0] as { zone: string }).zone));
    expect([...zones].sort()).toEqual(['us-east-1a', 'us-east-1b']);
  });
});

describe('provision: EC2 says no', () => {
  it('InsufficientVolumeCapacity with WaitForFirstConsumer -> failed, Warning, selected-node annotation removed', async () => {
    const { ec2, ctx } = setup();
    ec2.fail('createDisk', ec2Error('capacity', 'InsufficientVolumeCapacity', 'There is not enough capacity'));
    const item = claimItem({
      pvc: { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'ip-10-0-1-23.ec2.internal' } } },
      storageClass: { volumeBindingMode: 'WaitForFirstConsumer' },
      selectedNode: node(),
    });
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'InsufficientVolumeCapacity' });
    expect(events(result).map((e) => `${e.type} ${e.reason}`)).toEqual(['Normal Provisioning', 'Warning ProvisioningFailed']);
    expect(result.writes.filter((w) => w.op === 'removePvcAnnotation')).toEqual([
      { op: 'removePvcAnnotation', namespace: 'shop', name: 'data', uid: CLAIM_UID, annotation: 'volume.kubernetes.io/selected-node' },
    ]);
  });

  it('InsufficientVolumeCapacity with Immediate -> failed, no annotation to remove', async () => {
    const { ec2, ctx } = setup();
    ec2.fail('createDisk', ec2Error('capacity', 'InsufficientVolumeCapacity'));
    const result = await reconcileOne(ctx, claimItem());
    expect(result.outcome).toBe('failed');
    expect(result.writes.some((w) => w.op === 'removePvcAnnotation')).toBe(false);
  });

  it('InvalidParameterValue from EC2 -> failed InvalidParameter, Warning with what EC2 said', async () => {
    const { ec2, ctx } = setup();
    ec2.fail('createDisk', ec2Error('invalidParameter', 'InvalidParameterValue', 'The parameter iops is not supported for gp2'));
    const result = await reconcileOne(ctx, claimItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'InvalidParameter', requeueAfterSeconds: 300 });
    expect(events(result).at(-1)?.message).toContain('The parameter iops is not supported for gp2');
  });

  it('UnauthorizedOperation -> failed, message names ec2:CreateVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.fail('createDisk', ec2Error('unauthorized', 'UnauthorizedOperation', 'You are not authorized'));
    const result = await reconcileOne(ctx, claimItem());
    expect(result).toMatchObject({ outcome: 'failed', reason: 'UnauthorizedOperation' });
    expect(result.outcome === 'failed' && result.message).toContain('ec2:CreateVolume');
  });

  it('disk found in state error -> deleted (it is ours), failed with a Warning; the next reconcile creates its replacement', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000e770', state: 'error', tags: ownedTags() });
    const result = await reconcileOne(ctx, claimItem());
    expect(ec2.mutations.map((c) => [c.verb, ...c.args])).toEqual([['deleteDisk', 'vol-0000000000000e770']]);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'VolumeCreationFailed', requeueAfterSeconds: 60 });
    expect(events(result)).toEqual([
      { type: 'Warning', reason: 'ProvisioningFailed', message: expect.stringContaining('vol-0000000000000e770 failed to create (state error') },
    ]);
    expect(pvOf(result)).toBeUndefined();

    const next = await reconcileOne(ctx, claimItem());
    expect(ec2.mutations.map((c) => c.verb)).toEqual(['deleteDisk', 'createDisk']);
    expect(next).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 2 });
  });

  it('volume vanished right after CreateVolume -> failed create, not success', async () => {
    const { ec2, ctx } = setup();
    ec2.fail('createDisk', ec2Error('notFound', 'InvalidVolume.NotFound'));
    const result = await reconcileOne(ctx, claimItem());
    expect(result.outcome).toBe('failed');
    expect(result.outcome === 'failed' && result.message).toContain('vanished');
    expect(pvOf(result)).toBeUndefined();
  });

  it.each(['findDiskByName', 'createDisk'] as const)('%s throttled -> requeue with backoff, never failed, no Warning', async (verb) => {
    const { ec2, ctx } = setup();
    ec2.fail(verb, throttled());
    const result = await reconcileOne(ctx, claimItem());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 5 });
    expect(events(result).filter((e) => e.type === 'Warning')).toEqual([]);
  });
});

describe('provision: the claim protected before its first CreateVolume (write before act)', () => {
  const unprotected = (override: unknown = {}) =>
    claimItem(merge({ pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } } }, override));
  /** A protected claim being deleted at `deletedAt`; pvExists as the forwarder read it live. */
  const deleting = (deletedAt: string, override: unknown = {}) =>
    claimItem(merge({ pvc: { metadata: { deletionTimestamp: deletedAt } }, pvCheckedLive: true }, override));

  it('claim ready to provision, not yet protected -> only the protection, requeue at once, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, unprotected());
    expect(result).toEqual({
      key: 'PersistentVolumeClaim/shop/data',
      outcome: 'requeue',
      requeueAfterSeconds: 0,
      message: expect.stringContaining('before creating its volume'),
      writes: [{ op: 'addFinalizer', target: claimTarget, finalizer: CLAIM_PROTECTION }],
    });
    expect(ec2.calls).toEqual([]);
  });

  it('protected claim in a request signed more than a minute ago -> requeue, zero gateway calls (a stale request never creates)', async () => {
    const { ec2, ctx } = setup();
    const stale = { ...ctx, signedAt: new Date(NOW.getTime() - (FRESH_REQUEST_SECONDS + 1) * 1000) };
    const result = await reconcileOne(stale, claimItem());
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 0, message: expect.stringContaining('signed 61 s ago'), writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it('claim not ready (bad parameter) -> refused without the protection: nothing will be created', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, unprotected({ storageClass: { parameters: { bogus: '1' } } }));
    expect(result.outcome).toBe('failed');
    expect(result.writes.some((w) => w.op === 'addFinalizer')).toBe(false);
    expect(ec2.calls).toEqual([]);
  });

  it.each([
    ['bound to its own PV', { pvc: { spec: { volumeName: PV_NAME } } }],
    ['its PV exists', { pvExists: true }],
  ])('protected, %s -> the protection goes, zero gateway calls', async (_name, override) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem(override));
    expect(result).toEqual({ key: 'PersistentVolumeClaim/shop/data', outcome: 'done', writes: [{ op: 'removeFinalizer', target: claimTarget, finalizer: CLAIM_PROTECTION }] });
    expect(ec2.calls).toEqual([]);
  });

  it('protected claim deleted while its disk is available, no PV (read live) -> DeleteVolume, Event saying why; protection kept until no create can land', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const result = await reconcileOne(ctx, deleting('2025-03-01T11:59:00Z'));
    expect(ec2.mutations).toEqual([{ verb: 'deleteDisk', args: ['vol-0000000000000000a'] }]);
    expect(events(result)).toEqual([{ type: 'Normal', reason: 'VolumeDeleted', message: expect.stringContaining('deleted volume vol-0000000000000000a of claim shop/data') }]);
    expect(result).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: CREATE_HORIZON_SECONDS - 60 });
    expect(result.writes.some((w) => w.op === 'removeFinalizer')).toBe(false);
  });

  it('protected claim deleted long enough ago, no disk left -> the protection goes', async () => {
    const { ec2, ctx } = setup();
    const longAgo = new Date(NOW.getTime() - (CREATE_HORIZON_SECONDS + 1) * 1000).toISOString();
    const result = await reconcileOne(ctx, deleting(longAgo));
    expect(result).toMatchObject({ outcome: 'done', writes: [{ op: 'removeFinalizer', target: claimTarget, finalizer: CLAIM_PROTECTION }] });
    expect(ec2.mutations).toEqual([]);
  });

  it('protected claim deleted, disk still creating -> requeue, no DeleteVolume yet, protection kept', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', state: 'creating', tags: ownedTags() });
    const result = await reconcileOne(ctx, deleting('2025-03-01T11:00:00Z'));
    expect(result).toMatchObject({ outcome: 'requeue', writes: [] });
    expect(ec2.mutations).toEqual([]);
  });

  it('protected Retain claim deleted, pvExists false from a stale cache (not a live read) -> no DeleteVolume, zero gateway calls', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const item = deleting('2025-03-01T11:00:00Z', { pvCheckedLive: false, storageClass: { reclaimPolicy: 'Retain' } });
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'requeue', message: expect.stringContaining('not read live') });
    expect(ec2.calls).toEqual([]);
  });

  it('protected claim deleted, its PV exists -> the protection goes, the disk stays for the PV\'s reclaim', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const result = await reconcileOne(ctx, deleting('2025-03-01T11:00:00Z', { pvExists: true }));
    expect(result).toMatchObject({ outcome: 'done', writes: [{ op: 'removeFinalizer', target: claimTarget, finalizer: CLAIM_PROTECTION }] });
    expect(ec2.calls).toEqual([]);
  });

  it('protected claim bound to another (static) PV -> its own disk, unused, is deleted', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0000000000000000a', tags: ownedTags() });
    const result = await reconcileOne(ctx, claimItem({ pvc: { spec: { volumeName: 'pv-static' } }, pvCheckedLive: true }));
    expect(ec2.mutations).toEqual([{ verb: 'deleteDisk', args: ['vol-0000000000000000a'] }]);
    expect(result).toMatchObject({ outcome: 'done' });
    expect(result.writes).toContainEqual({ op: 'removeFinalizer', target: claimTarget, finalizer: CLAIM_PROTECTION });
  });
});

describe('provision: topology keys, zone IDs and Outposts', () => {
  const ZONE_ID = 'topology.k8s.aws/zone-id';
  const topologies = (...expressions: Array<[string, string[]]>) => ({
    allowedTopologies: [{ matchLabelExpressions: expressions.map(([key, values]) => ({ key, values })) }],
  });

  it('Immediate class on zone ID use1-az4 -> the Region\'s zones read once, the disk in us-east-1d (the zone with that ID), PV nodeAffinity on its name', async () => {
    const { ec2, result, pv } = await provision(claimItem({ clusterZones: ['us-east-1a', 'us-east-1b'], storageClass: topologies([ZONE_ID, ['use1-az4']]) }));
    expect(result.outcome).toBe('done');
    expect(ec2.calls.map((c) => c.verb)).toEqual(['zones', 'findDiskByName', 'createDisk']);
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ zone: 'us-east-1d' });
    expect(pv?.spec.nodeAffinity).toEqual({
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1d'] }] }] },
    });
  });

  it('WaitForFirstConsumer class on a zone ID, node in that zone -> the node\'s zone', async () => {
    const { ec2, pv } = await provision(
      claimItem({
        pvc: { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'ip-10-0-1-23.ec2.internal' } } },
        storageClass: { volumeBindingMode: 'WaitForFirstConsumer', ...topologies([ZONE_ID, ['use1-az6']]) },
        selectedNode: node(),
      }),
    );
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ zone: 'us-east-1a' });
    expect(pv?.spec.nodeAffinity?.required.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] },
    ]);
  });

  it('WaitForFirstConsumer, node labelled only failure-domain.beta.kubernetes.io/zone -> that zone, no zone look-up', async () => {
    const { ec2 } = await provision(
      claimItem({
        pvc: { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'ip-10-0-1-23.ec2.internal' } } },
        storageClass: { volumeBindingMode: 'WaitForFirstConsumer' },
        selectedNode: node({ labels: { 'topology.kubernetes.io/zone': undefined, 'failure-domain.beta.kubernetes.io/zone': 'us-east-1c' }, providerID: undefined }),
      }),
    );
    expect(ec2.callsOf('createDisk')[0]!.args[0]).toMatchObject({ zone: 'us-east-1c' });
    expect(ec2.callsOf('zones')).toEqual([]);
  });

  it('a zone ID the Region does not have -> failed NoZone naming the ID, Warning, no CreateVolume', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem({ storageClass: topologies([ZONE_ID, ['use1-az3']]) }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NoZone', message: expect.stringContaining('use1-az3') });
    expect(events(result).map((e) => `${e.type} ${e.reason}`)).toEqual(['Normal Provisioning', 'Warning ProvisioningFailed']);
    expect(ec2.calls.map((c) => c.verb)).toEqual(['zones']);
  });

  it('the zones cannot be read (throttled) -> requeue, no CreateVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.fail('zones', throttled());
    const result = await reconcileOne(ctx, claimItem({ storageClass: topologies([ZONE_ID, ['use1-az4']]) }));
    expect(result).toMatchObject({ outcome: 'requeue' });
    expect(ec2.mutations).toEqual([]);
  });

  it.each([
    ['an unknown key', topologies(['kubernetes.io/hostname', ['ip-10-0-1-23.ec2.internal']]), 'UnsupportedTopologyKey', '"kubernetes.io/hostname"'],
    ['an unknown key beside a zone ID', topologies([ZONE_ID, ['use1-az6']], ['topology.kubernetes.io/region', ['us-east-1']]), 'UnsupportedTopologyKey', '"topology.kubernetes.io/region"'],
    ['the Outpost key', topologies(['topology.ebs.csi.aws.com/outpost-id', ['op-0123456789abcdef0']]), 'OutpostNotSupported', '"topology.ebs.csi.aws.com/outpost-id"'],
    ['the outpostArn parameter', { parameters: { type: 'gp2', outpostArn: 'arn:aws:outposts:us-east-1:123456789012:outpost/op-0123456789abcdef0' } }, 'OutpostNotSupported', 'parameter "outpostArn"'],
  ])('a class with %s -> failed naming it, Warning ProvisioningFailed, zero gateway calls', async (_name, classOverride, reason, named) => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, claimItem({ storageClass: classOverride }));
    expect(result).toMatchObject({ outcome: 'failed', reason, message: expect.stringContaining(named) });
    expect(events(result)).toEqual([
      { type: 'Normal', reason: 'Provisioning', message: 'External provisioner is provisioning volume for claim "shop/data"' },
      { type: 'Warning', reason: 'ProvisioningFailed', message: expect.stringContaining(named) },
    ]);
    expect(ec2.calls).toEqual([]);
  });

  it('a clone claim on a zone-ID class whose source is gone -> refused naming it, zero gateway calls (not even the zones)', async () => {
    const { ec2, ctx } = setup();
    const item = claimItem({
      pvc: { spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'source' } } },
      source: { kind: 'PersistentVolumeClaim', claim: null, pv: null },
      storageClass: topologies([ZONE_ID, ['use1-az4']]),
    });
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'SourceNotFound' });
    expect(ec2.calls).toEqual([]);
  });
});
