/**
 * CSI migration of in-tree `kubernetes.io/aws-ebs` classes and PVs, over the reconcilers:
 * claims of an in-tree class handed to ebs.csi.aws.com are provisioned with the translated
 * class and get the PV external-provisioner writes for a migrated plugin; in-tree PVs
 * (`aws://zone/vol-…` IDs included) are reclaimed, attached and detached under their EBS ID.
 */
import { describe, expect, it } from 'vitest';
import { deviceFor } from '../../lib/reconcile/device-names.js';
import type { Result, Write } from '../../lib/contract/index.js';
import {
  ATTACHER_FINALIZER,
  CLAIM_PROTECTION,
  CLAIM_UID,
  INSTANCE_ID,
  NOW,
  PROVISIONER_FINALIZER,
  PV_NAME,
  VA_NAME,
  claimItem,
  merge,
  node,
  ownedTags,
  persistentVolume,
  pvItem,
  reconcileOne,
  setup,
  vaItem,
  volumeAttachment,
} from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const NODE = 'ip-10-0-1-23.ec2.internal';
const pvTarget = { kind: 'PersistentVolume', name: PV_NAME, uid: 'pv-uid-1' };
const vaTarget = { kind: 'VolumeAttachment', name: VA_NAME, uid: 'va-uid-1' };

/** EKS's gp2 class. */
const GP2 = {
  metadata: { name: 'gp2' },
  provisioner: 'kubernetes.io/aws-ebs',
  parameters: { fsType: 'ext4', type: 'gp2' },
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
};

/** A claim of an in-tree class as the PV controller hands it over: annotated ebs.csi.aws.com, node selected. */
const inTreeClaim = (classOverride: Record<string, unknown> = {}, claimOverride: Record<string, unknown> = {}) =>
  claimItem({
    storageClass: { ...GP2, ...classOverride },
    pvc: {
      metadata: { annotations: { 'volume.beta.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com', 'volume.kubernetes.io/selected-node': NODE } },
      spec: { storageClassName: 'gp2' },
      ...claimOverride,
    },
    selectedNode: node(),
  });

async function provision(item: ReturnType<typeof claimItem>) {
  const { ec2, ctx } = setup({ allowedVolumeTypes: ['gp3', 'gp2', 'io1'] });
  ec2.createdState = 'available';
  const result = await reconcileOne(ctx, item);
  const write = result.writes.find((w): w is Extract<Write, { op: 'createPersistentVolume' }> => w.op === 'createPersistentVolume');
  return { ec2, result, pv: write?.pv, request: ec2.callsOf('createDisk')[0]?.args[0] as Record<string, unknown> | undefined };
}

const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [`${w.type} ${w.reason}: ${w.message}`] : []));

describe('provisioning a claim of an in-tree class (CSI migration)', () => {
  it('EKS gp2 class, node selected -> gp2 disk in the node zone; PV exactly as external-provisioner writes it for a migrated plugin', async () => {
    const { ec2, result, pv, request } = await provision(inTreeClaim());
    const [volumeId] = ec2.volumes.keys();
    expect(result.outcome).toBe('done');
    expect(request).toMatchObject({ name: PV_NAME, zone: 'us-east-1a', sizeGiB: 20, type: 'gp2', encrypted: false });
    expect(pv).toStrictEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: PV_NAME,
        annotations: {
          'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs',
          'volume.kubernetes.io/provisioner-deletion-secret-name': '',
          'volume.kubernetes.io/provisioner-deletion-secret-namespace': '',
        },
        labels: { 'topology.kubernetes.io/zone': 'us-east-1a', 'topology.kubernetes.io/region': 'us-east-1' },
        finalizers: [PROVISIONER_FINALIZER],
      },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp2',
        claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'shop', name: 'data', uid: CLAIM_UID, resourceVersion: '4711' },
        awsElasticBlockStore: { volumeID: volumeId, fsType: 'ext4' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] },
                  { key: 'topology.kubernetes.io/region', operator: 'In', values: ['us-east-1'] },
                ],
              },
            ],
          },
        },
      },
    });
    expect(volumeId).toMatch(/^vol-/);
    expect(events(result)).toEqual([
      'Normal Provisioning: External provisioner is provisioning volume for claim "shop/data"',
      `Normal ProvisioningSucceeded: Successfully provisioned volume ${PV_NAME}`,
    ]);
    expect(result.writes).toContainEqual({
      op: 'removeFinalizer',
      target: { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'shop', uid: CLAIM_UID },
      finalizer: CLAIM_PROTECTION,
    });
  });

  it.each([
    ['no type -> gp2, the in-tree default (upstream migration would make gp3)', { parameters: { fsType: 'ext4', type: undefined } }, { type: 'gp2' }],
    ['type gp3 -> gp3', { parameters: { type: 'gp3' } }, { type: 'gp3' }],
    [
      'io1 with iopsPerGB 2 on 20 GiB -> 40 IOPS raised to io1\'s 100 (allowautoiopspergbincrease added), as in-tree',
      { parameters: { type: 'io1', iopsPerGB: '2' } },
      { type: 'io1', iops: 100 },
    ],
    ['io1 with iopsPerGB 10 on 20 GiB -> 200 IOPS', { parameters: { type: 'io1', iopsPerGB: '10' } }, { type: 'io1', iops: 200 }],
    [
      'encrypted and kmsKeyId -> an encrypted disk under that key',
      { parameters: { type: 'gp2', encrypted: 'true', kmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/k' } },
      { type: 'gp2', encrypted: true, kmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/k' },
    ],
    [
      'zones us-east-1b,us-east-1c on an Immediate class -> a disk in one of them',
      { parameters: { type: 'gp2', zones: 'us-east-1b,us-east-1c' }, volumeBindingMode: 'Immediate' },
      { zone: expect.stringMatching(/^us-east-1[bc]$/) },
    ],
    [
      'zone us-east-1c on an Immediate class -> a disk in us-east-1c',
      { parameters: { zone: 'us-east-1c', type: undefined }, volumeBindingMode: 'Immediate' },
      { zone: 'us-east-1c', type: 'gp2' },
    ],
    [
      'allowedTopologies on the beta zone key, Immediate -> a disk in that zone',
      { volumeBindingMode: 'Immediate', allowedTopologies: [{ matchLabelExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', values: ['us-east-1b'] }] }] },
      { zone: 'us-east-1b' },
    ],
  ])('%s', async (_name, classOverride, expected) => {
    const item = inTreeClaim(classOverride);
    item.clusterZones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
    const { result, request } = await provision(item);
    expect(result.outcome, JSON.stringify(result)).toBe('done');
    expect(request).toMatchObject(expected);
  });

  it('fsType xfs -> the PV\'s awsElasticBlockStore.fsType xfs; Block claim -> none', async () => {
    expect((await provision(inTreeClaim({ parameters: { fsType: 'xfs', type: 'gp2' } }))).pv?.spec.awsElasticBlockStore).toMatchObject({ fsType: 'xfs' });
    const block = await provision(inTreeClaim({}, { spec: { storageClassName: 'gp2', volumeMode: 'Block' } }));
    expect(block.pv?.spec.awsElasticBlockStore).toStrictEqual({ volumeID: expect.stringMatching(/^vol-/) });
    expect(block.pv?.spec.volumeMode).toBe('Block');
  });

  it('Retain class -> Retain PV without the provisioner finalizer, still in-tree', async () => {
    const { pv } = await provision(inTreeClaim({ reclaimPolicy: 'Retain' }));
    expect(pv?.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv?.metadata.finalizers).toBeUndefined();
    expect(pv?.spec.awsElasticBlockStore).toBeDefined();
  });

  it('zone and allowedTopologies on the class -> Warning ProvisioningFailed "failed to translate storage class", zero EC2 calls', async () => {
    const item = inTreeClaim({
      parameters: { zone: 'us-east-1a' },
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['us-east-1a'] }] }],
    });
    const { ec2, result } = await provision(item);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'InvalidStorageClass' });
    expect(events(result)).toEqual([
      'Normal Provisioning: External provisioner is provisioning volume for claim "shop/data"',
      'Warning ProvisioningFailed: failed to provision volume with StorageClass "gp2": failed to translate storage class: cannot simultaneously set allowed topologies and zone/zones parameters',
    ]);
    expect(ec2.calls).toEqual([]);
  });

  it('WaitForFirstConsumer, no node selected yet -> nothing, even for a class that does not translate', async () => {
    const item = inTreeClaim({ parameters: { zone: 'a', zones: 'b' } }, { metadata: { annotations: { 'volume.kubernetes.io/selected-node': undefined } } });
    const { ec2, result } = await provision(item);
    expect(result).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it.each([
    ['annotated kubernetes.io/aws-ebs and migrated-to ebs.csi.aws.com -> provisioned', { 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' }, 1],
    ['annotated kubernetes.io/aws-ebs, not migrated -> ignored', {}, 0],
  ])('claim %s', async (_name, extra, creates) => {
    const item = inTreeClaim({}, {
      metadata: {
        annotations: {
          'volume.beta.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs',
          'volume.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs',
          'volume.kubernetes.io/selected-node': NODE,
          ...extra,
        },
      },
    });
    const { ec2 } = await provision(item);
    expect(ec2.callsOf('createDisk')).toHaveLength(creates);
  });
});

/**
 * An in-tree PV: the in-tree source with an `aws://zone/vol-…` ID, no CSI source. Its
 * `spec.csi` is an explicit undefined, so that pvItem and vaItem, which lay it over their
 * default CSI PV, drop the default's source.
 */
const inTreePv = (override: Record<string, unknown> = {}) =>
  withoutCsi(
    merge(
    persistentVolume({
      metadata: { annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' } },
      spec: {
        csi: undefined,
        storageClassName: 'gp2',
        awsElasticBlockStore: { volumeID: `aws://us-east-1a/${VOL}`, fsType: 'ext4' },
        nodeAffinity: {
          required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }] },
        },
      },
    }),
    override,
    ),
  );

function withoutCsi<T extends { spec: object }>(pv: T): T {
  return { ...pv, spec: { ...pv.spec, csi: undefined } };
}

describe('reclaiming in-tree PVs', () => {
  it('PV the in-tree plugin made, migrated, Released + Delete -> DeleteVolume of the vol- ID, then the PV and its finalizer go', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const result = await reconcileOne(ctx, pvItem({ pv: inTreePv({ status: { phase: 'Released' } }) }));
    expect(ec2.mutations).toEqual([{ verb: 'deleteDisk', args: [VOL] }]);
    expect(result).toMatchObject({ outcome: 'done' });
    expect(result.writes).toEqual([
      { op: 'deletePersistentVolume', name: PV_NAME, uid: 'pv-uid-1' },
      { op: 'removeFinalizer', target: pvTarget, finalizer: PROVISIONER_FINALIZER },
    ]);
  });

  it('PV volhook wrote for a migrated class (bare vol- ID, no migrated-to yet), Released + Delete -> DeleteVolume', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const pv = inTreePv({
      metadata: { annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' } },
      spec: { awsElasticBlockStore: { volumeID: VOL, fsType: 'ext4' } },
      status: { phase: 'Released' },
    });
    await reconcileOne(ctx, pvItem({ pv }));
    expect(ec2.mutations).toEqual([{ verb: 'deleteDisk', args: [VOL] }]);
  });

  it('Released + Retain -> the provisioner finalizer goes, disk and PV stay, zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const result = await reconcileOne(ctx, pvItem({ pv: inTreePv({ spec: { persistentVolumeReclaimPolicy: 'Retain' }, status: { phase: 'Released' } }) }));
    expect(result).toMatchObject({ outcome: 'done', writes: [{ op: 'removeFinalizer', target: pvTarget, finalizer: PROVISIONER_FINALIZER }] });
    expect(ec2.calls).toEqual([]);
  });

  it('Bound + Delete PV of the in-tree plugin without the provisioner finalizer -> it is added (as handleProtectionFinalizer does)', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, pvItem({ pv: inTreePv({ metadata: { finalizers: ['kubernetes.io/pv-protection'] } }) }));
    expect(result.writes).toEqual([{ op: 'addFinalizer', target: pvTarget, finalizer: PROVISIONER_FINALIZER }]);
    expect(ec2.calls).toEqual([]);
  });

  it('statically created in-tree PV, Released + Delete -> never deleted: zero EC2 calls; its attacher finalizer still goes', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    const item = pvItem({ pv: inTreePv({ metadata: { finalizers: ['kubernetes.io/pv-protection', ATTACHER_FINALIZER] }, status: { phase: 'Released' } }) });
    delete item.pv.metadata.annotations; // no provisioned-by: created by hand
    const result = await reconcileOne(ctx, item);
    expect(result).toMatchObject({ outcome: 'done', writes: [{ op: 'removeFinalizer', target: pvTarget, finalizer: ATTACHER_FINALIZER }] });
    expect(ec2.calls).toEqual([]);
  });

  it('malformed aws:// ID, Released + Delete -> Warning VolumeFailedDelete with the translation error, zero EC2 calls', async () => {
    const { ec2, ctx } = setup();
    const pv = inTreePv({ spec: { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/0123' } }, status: { phase: 'Released' } });
    const result = await reconcileOne(ctx, pvItem({ pv }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NoVolumeHandle' });
    expect(events(result)).toEqual([
      `Warning VolumeFailedDelete: PersistentVolume "${PV_NAME}": failed to translate in tree pv to CSI: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://us-east-1a/0123); cannot delete its volume`,
    ]);
    expect(ec2.calls).toEqual([]);
  });
});

describe('attaching and detaching in-tree PVs', () => {
  const cloud = () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, tags: ownedTags() });
    ec2.addInstance({ instanceId: INSTANCE_ID });
    return { ec2, ctx };
  };

  it('VolumeAttachment of an aws://us-east-1a/vol- PV, nothing recorded -> attacher finalizer on the in-tree PV and the VA first, no AttachVolume', async () => {
    const { ec2, ctx } = cloud();
    const item = vaItem({ pv: inTreePv() });
    delete item.volumeAttachment.metadata.annotations;
    delete item.volumeAttachment.metadata.finalizers;
    const result = await reconcileOne(ctx, item);
    expect(result.writes).toEqual([
      { op: 'addFinalizer', target: pvTarget, finalizer: ATTACHER_FINALIZER },
      { op: 'addFinalizer', target: vaTarget, finalizer: ATTACHER_FINALIZER },
      { op: 'setAnnotation', target: vaTarget, key: 'csi.alpha.kubernetes.io/node-id', value: INSTANCE_ID },
    ]);
    expect(ec2.mutations).toEqual([]);
  });

  it.each([`aws://us-east-1a/${VOL}`, `aws:///${VOL}`, VOL])('recorded, volume ID %s -> AttachVolume of its vol- ID, status attached', async (volumeID) => {
    const { ec2, ctx } = cloud();
    ec2.attachState = 'attached';
    const pv = inTreePv({ metadata: { finalizers: ['kubernetes.io/pv-protection', PROVISIONER_FINALIZER, ATTACHER_FINALIZER] }, spec: { awsElasticBlockStore: { volumeID } } });
    const result = await reconcileOne(ctx, vaItem({ pv }));
    const device = deviceFor(VOL, ['/dev/xvda']);
    expect(ec2.mutations).toEqual([{ verb: 'attachDisk', args: [VOL, INSTANCE_ID, device] }]);
    expect(result).toMatchObject({
      outcome: 'done',
      writes: [{ op: 'updateVolumeAttachmentStatus', status: { attached: true, attachmentMetadata: { devicePath: device }, attachError: null } }],
    });
  });

  it('VolumeAttachment being deleted, in-tree PV aws://us-east-1a/vol- -> DetachVolume of the vol- ID', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: VOL, state: 'in-use', tags: ownedTags(), attachments: [{ instanceId: INSTANCE_ID, device: '/dev/xvdaa', state: 'attached' }] });
    ec2.addInstance({ instanceId: INSTANCE_ID, devicesInUse: ['/dev/xvda', '/dev/xvdaa'] });
    const item = vaItem({
      volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: '2025-03-01T11:59:00Z' }, status: { attached: true } }),
      pv: inTreePv({ metadata: { finalizers: ['kubernetes.io/pv-protection', ATTACHER_FINALIZER] } }),
    });
    const result = await reconcileOne(ctx, item);
    expect(ec2.mutations).toEqual([{ verb: 'detachDisk', args: [VOL, INSTANCE_ID] }]);
    expect(result).toMatchObject({ outcome: 'requeue' });
  });

  it('in-tree PV with a malformed aws:// ID -> attachError with the translation error, zero EC2 calls', async () => {
    const { ec2, ctx } = cloud();
    const result = await reconcileOne(ctx, vaItem({ pv: inTreePv({ spec: { awsElasticBlockStore: { volumeID: 'aws://vol-0123' } } }) }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NoVolumeHandle' });
    expect(result.writes).toEqual([
      {
        op: 'updateVolumeAttachmentStatus',
        name: VA_NAME,
        uid: 'va-uid-1',
        status: {
          attached: false,
          attachError: {
            time: NOW.toISOString().replace(/\.\d+Z$/, 'Z'),
            message: `PersistentVolume "${PV_NAME}": failed to translate in tree pv to CSI: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://vol-0123)`,
            errorCode: 3,
          },
        },
      },
    ]);
    expect(ec2.calls).toEqual([]);
  });
});
