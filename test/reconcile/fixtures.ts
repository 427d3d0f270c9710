/** Plain objects for the reconciler tests: a cluster, a class, a claim, PVs, VolumeAttachments. */
import {
  ItemSchema,
  ResultSchema,
  type ItemInput,
  type NodeInfo,
  type PersistentVolumeClaimItem,
  type PersistentVolumeItem,
  type Result,
  type VolumeAttachmentItem,
} from '../../lib/contract/index.js';
import { ClusterRegistrationSchema, type ClusterRegistrationInput } from '../../lib/registry/registration.js';
import { reconcileItems, type ReconcileContext } from '../../lib/reconcile/index.js';
import { FakeGateway } from './fake-gateway.js';

export const CLUSTER = 'alpha';
export const DRIVER = 'ebs.csi.aws.com';
export const NOW = new Date('2025-03-01T12:00:00.000Z');
export const CLAIM_UID = '6f1c2b9e-3d4a-4c5b-9e8f-0a1b2c3d4e5f';
export const PV_NAME = `pvc-${CLAIM_UID}`;

type Json = Record<string, unknown>;

/**
 * `base` with `override` laid over it, recursively for plain objects; arrays and null replace;
 * a key set to undefined is removed.
 */
export function merge<T>(base: T, override: unknown): T {
  if (!isPlain(base) || !isPlain(override)) return (override === undefined ? base : override) as T;
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) delete out[key];
    else out[key] = merge(out[key], value);
  }
  return out as T;
}
const isPlain = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function setup(registration: Partial<ClusterRegistrationInput> = {}) {
  const ec2 = new FakeGateway(CLUSTER);
  const ctx: ReconcileContext = {
    clusterId: CLUSTER,
    registration: ClusterRegistrationSchema.parse({
      clusterId: CLUSTER,
      secrets: ['a-secret-of-at-least-24-bytes'],
      region: 'us-east-1',
      ...registration,
    }),
    ec2,
    driverName: DRIVER,
    provisionerName: DRIVER,
    now: () => NOW,
    signedAt: NOW,
  };
  return { ec2, ctx };
}

/** Reconciles items and checks every result against the contract's schema. */
export async function reconcile(ctx: ReconcileContext, ...items: ItemInput[]): Promise<Result[]> {
  const results = await reconcileItems(items.map((i) => ItemSchema.parse(i)), ctx);
  return results.map((r) => ResultSchema.parse(r));
}

export async function reconcileOne(ctx: ReconcileContext, item: ItemInput): Promise<Result> {
  const [result] = await reconcile(ctx, item);
  return result!;
}

export const storageClass = (override: unknown = {}) =>
  merge(
    {
      metadata: { name: 'gp3' },
      provisioner: DRIVER,
      parameters: { type: 'gp3' },
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    },
    override,
  );

export const CLAIM_PROTECTION = 'volhook.io/provisioning-protection';

/** A claim of ours as the backend sees it once protected (the first reconcile's write). */
export const claim = (override: unknown = {}) =>
  merge(
    {
      metadata: {
        name: 'data',
        namespace: 'shop',
        uid: CLAIM_UID,
        resourceVersion: '4711',
        annotations: { 'volume.kubernetes.io/storage-provisioner': DRIVER },
        finalizers: ['kubernetes.io/pvc-protection', CLAIM_PROTECTION],
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } }, storageClassName: 'gp3' },
    },
    override,
  );

export const claimItem = (override: unknown = {}): PersistentVolumeClaimItem =>
  ItemSchema.parse(
    merge({ kind: 'PersistentVolumeClaim', pvc: claim(), storageClass: storageClass(), clusterZones: ['us-east-1a'], pvExists: false }, override),
  ) as PersistentVolumeClaimItem;

export const node = (override: unknown = {}): NodeInfo =>
  merge(
    {
      name: 'ip-10-0-1-23.ec2.internal',
      labels: { 'topology.kubernetes.io/zone': 'us-east-1a' },
      providerID: 'aws:///us-east-1a/i-0aaaaaaaaaaaaaaa1',
      csiNode: { nodeID: 'i-0aaaaaaaaaaaaaaa1' },
    },
    override,
  );

export const persistentVolume = (override: unknown = {}) =>
  merge(
    {
      metadata: {
        name: PV_NAME,
        uid: 'pv-uid-1',
        annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER },
        finalizers: ['kubernetes.io/pv-protection', 'external-provisioner.volume.kubernetes.io/finalizer'],
      },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'shop', name: 'data', uid: CLAIM_UID },
        csi: { driver: DRIVER, volumeHandle: 'vol-0123456789abcdef0', fsType: 'ext4' },
      },
      status: { phase: 'Bound' },
    },
    override,
  );

export const pvItem = (override: unknown = {}): PersistentVolumeItem =>
  ItemSchema.parse(merge({ kind: 'PersistentVolume', pv: persistentVolume(), volumeAttachments: [] }, override)) as PersistentVolumeItem;

/** The PV of an attachment: it holds the attacher finalizer as well. */
export const attachedVolume = (override: unknown = {}) =>
  persistentVolume(
    merge(
      { metadata: { finalizers: ['kubernetes.io/pv-protection', 'external-provisioner.volume.kubernetes.io/finalizer', 'external-attacher/ebs-csi-aws-com'] } },
      override,
    ),
  );

export const VA_NAME = 'csi-880af19cc88681d68f80a4a11ffa3d31efb3ee865ea742d7701040e168882925';

export const INSTANCE_ID = 'i-0aaaaaaaaaaaaaaa1';

/** A VolumeAttachment whose attachment is recorded: the attacher finalizer and the node-id annotation. */
export const volumeAttachment = (override: unknown = {}) =>
  merge(
    {
      metadata: {
        name: VA_NAME,
        uid: 'va-uid-1',
        annotations: { 'csi.alpha.kubernetes.io/node-id': INSTANCE_ID },
        finalizers: ['external-attacher/ebs-csi-aws-com'],
      },
      spec: { attacher: DRIVER, nodeName: 'ip-10-0-1-23.ec2.internal', source: { persistentVolumeName: PV_NAME } },
    },
    override,
  );

export const vaItem = (override: unknown = {}): VolumeAttachmentItem =>
  ItemSchema.parse(
    merge({ kind: 'VolumeAttachment', volumeAttachment: volumeAttachment(), pv: attachedVolume(), node: node() }, override),
  ) as VolumeAttachmentItem;

export const ATTACHER_FINALIZER = 'external-attacher/ebs-csi-aws-com';
export const PROVISIONER_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';

/** Tags of a volume this cluster created for the default claim. */
export const ownedTags = (extra: Record<string, string> = {}) => ({
  CSIVolumeName: PV_NAME,
  'ebs.csi.aws.com/cluster': 'true',
  [`kubernetes.io/cluster/${CLUSTER}`]: 'owned',
  'volhook.io/cluster': CLUSTER,
  'kubernetes.io/created-for/pvc/name': 'data',
  'kubernetes.io/created-for/pvc/namespace': 'shop',
  'kubernetes.io/created-for/pv/name': PV_NAME,
  ...extra,
});
