/**
 * The parts of Kubernetes objects that cross the forwarder → backend boundary. Each schema
 * names the fields volhook reads and lets every other field through untouched (loose
 * objects), so a newer cluster's extra fields never make a request invalid.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import './zod-messages.js';

const StringMap = deferred(() => z.record(z.string(), z.string()));

/**
 * The shape of the uids the API server assigns (RFC 4122 UUIDs). A claim's uid becomes an EBS
 * tag value and a ClientToken input, so one that is not of this shape is refused — for its
 * own item only — before it reaches EC2.
 */
export const KUBERNETES_UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const ObjectMetaSchema = deferred(() => z.looseObject({
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  uid: z.string().check(z.minLength(1)),
  resourceVersion: z.optional(z.string()),
  labels: z.optional(StringMap),
  annotations: z.optional(StringMap),
  finalizers: z.optional(z.array(z.string())),
  deletionTimestamp: z.optional(z.string()),
}));

export const LabelSelectorSchema = deferred(() => z.looseObject({
  matchLabels: z.optional(StringMap),
  matchExpressions: z.optional(z.array(z.looseObject({ key: z.string(), operator: z.string(), values: z.optional(z.array(z.string())) }))),
}));

/** A claim's condition (`Resizing`, `FileSystemResizePending`, `ModifyingVolume`…). */
export const PersistentVolumeClaimConditionSchema = deferred(() => z.looseObject({
  type: z.string().check(z.minLength(1)),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.optional(z.string()),
  message: z.optional(z.string()),
  lastProbeTime: z.nullish(z.string()),
  lastTransitionTime: z.nullish(z.string()),
}));
export type PersistentVolumeClaimCondition = z.infer<typeof PersistentVolumeClaimConditionSchema>;

/** `status.modifyVolumeStatus`: the VolumeAttributesClass change under way (KEP-3751). */
export const ModifyVolumeStatusSchema = deferred(() => z.looseObject({
  targetVolumeAttributesClassName: z.optional(z.string()),
  status: z.enum(['Pending', 'InProgress', 'Infeasible']),
}));
export type ModifyVolumeStatus = z.infer<typeof ModifyVolumeStatusSchema>;

/**
 * A claim's status, with the fields of resizing (KEP-1790: `allocatedResources`,
 * `allocatedResourceStatuses`) and of VolumeAttributesClass changes (KEP-3751).
 */
export const PersistentVolumeClaimStatusSchema = deferred(() => z.looseObject({
  phase: z.optional(z.string()),
  capacity: z.nullish(StringMap),
  allocatedResources: z.nullish(StringMap),
  allocatedResourceStatuses: z.nullish(StringMap),
  conditions: z.nullish(z.array(PersistentVolumeClaimConditionSchema)),
  modifyVolumeStatus: z.nullish(ModifyVolumeStatusSchema),
  currentVolumeAttributesClassName: z.nullish(z.string()),
}));
export type PersistentVolumeClaimStatus = z.infer<typeof PersistentVolumeClaimStatusSchema>;

/** `storage.k8s.io/v1` VolumeAttributesClass: mutable parameters of a volume, for one driver. */
export const VolumeAttributesClassSchema = deferred(() => z.looseObject({
  metadata: z.looseObject({ name: z.string().check(z.minLength(1)) }),
  driverName: z.string().check(z.minLength(1)),
  parameters: z.optional(StringMap),
}));
export type VolumeAttributesClass = z.infer<typeof VolumeAttributesClassSchema>;

export const AccessModeSchema = deferred(() => z.enum(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']));
export const VolumeModeSchema = deferred(() => z.enum(['Filesystem', 'Block']));
export const ReclaimPolicySchema = deferred(() => z.enum(['Delete', 'Retain', 'Recycle']));

export const PersistentVolumeClaimSchema = deferred(() => z.looseObject({
  metadata: z.extend(ObjectMetaSchema, { namespace: z.string().check(z.minLength(1)) }),
  spec: z.looseObject({
    accessModes: z._default(z.array(AccessModeSchema), []),
    resources: z.looseObject({
      requests: z.looseObject({ storage: z.string() }),
    }),
    storageClassName: z.nullish(z.string()),
    volumeMode: z.nullish(VolumeModeSchema),
    volumeName: z.nullish(z.string()),
    selector: z.nullish(LabelSelectorSchema),
    /** Where the volume's content comes from (a VolumeSnapshot, a claim to clone); legacy form of `dataSourceRef`. */
    dataSource: z.nullish(z.looseObject({ kind: z.string(), name: z.string(), apiGroup: z.nullish(z.string()) })),
    /** The same for any object, possibly in another namespace (AnyVolumeDataSource). */
    dataSourceRef: z.nullish(
      z.looseObject({ kind: z.string(), name: z.string(), apiGroup: z.nullish(z.string()), namespace: z.nullish(z.string()) }),
    ),
    /** The VolumeAttributesClass the claim asks for (KEP-3751): its parameters override the class's. */
    volumeAttributesClassName: z.nullish(z.string()),
  }),
  status: z.optional(PersistentVolumeClaimStatusSchema),
}));
export type PersistentVolumeClaim = z.infer<typeof PersistentVolumeClaimSchema>;

export const TopologySelectorTermSchema = deferred(() => z.looseObject({
  matchLabelExpressions: z._default(z.array(z.object({ key: z.string(), values: z.array(z.string()) })), []),
}));

export const StorageClassSchema = deferred(() => z.looseObject({
  metadata: z.looseObject({ name: z.string().check(z.minLength(1)), annotations: z.optional(StringMap) }),
  provisioner: z.string(),
  parameters: z.optional(StringMap),
  reclaimPolicy: z.optional(ReclaimPolicySchema),
  volumeBindingMode: z.optional(z.enum(['Immediate', 'WaitForFirstConsumer'])),
  allowedTopologies: z.optional(z.array(TopologySelectorTermSchema)),
  mountOptions: z.optional(z.array(z.string())),
  allowVolumeExpansion: z.optional(z.boolean()),
}));
export type StorageClass = z.infer<typeof StorageClassSchema>;

export const NodeSelectorRequirementSchema = deferred(() => z.object({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: z.optional(z.array(z.string())),
}));
export const NodeAffinitySchema = deferred(() => z.object({
  required: z.object({
    nodeSelectorTerms: z.array(z.object({ matchExpressions: z.optional(z.array(NodeSelectorRequirementSchema)) })),
  }),
}));

export const ClaimRefSchema = deferred(() => z.looseObject({
  kind: z.optional(z.string()),
  apiVersion: z.optional(z.string()),
  namespace: z.string(),
  name: z.string(),
  uid: z.optional(z.string()),
  resourceVersion: z.optional(z.string()),
}));

export const CsiPersistentVolumeSourceSchema = deferred(() => z.looseObject({
  driver: z.string(),
  volumeHandle: z.string(),
  fsType: z.optional(z.string()),
  volumeAttributes: z.optional(StringMap),
}));

/**
 * The in-tree EBS source (`awsElasticBlockStore`): on PVs the in-tree plugin made before CSI
 * migration, and on those external-provisioner (and volhook) write for migrated in-tree
 * classes. `volumeID` is `vol-…`, `aws:///vol-…` or `aws://<zone>/vol-…`.
 */
export const AwsElasticBlockStoreSourceSchema = deferred(() => z.looseObject({
  volumeID: z.string(),
  fsType: z.optional(z.string()),
  partition: z.optional(z.int()),
  readOnly: z.optional(z.boolean()),
}));

export const PersistentVolumeSpecSchema = deferred(() => z.looseObject({
  capacity: z.looseObject({ storage: z.string() }),
  accessModes: z.array(AccessModeSchema),
  volumeMode: z.optional(VolumeModeSchema),
  persistentVolumeReclaimPolicy: z.optional(ReclaimPolicySchema),
  storageClassName: z.optional(z.string()),
  mountOptions: z.optional(z.array(z.string())),
  claimRef: z.nullish(ClaimRefSchema),
  csi: z.optional(CsiPersistentVolumeSourceSchema),
  awsElasticBlockStore: z.optional(AwsElasticBlockStoreSourceSchema),
  nodeAffinity: z.optional(NodeAffinitySchema),
  /** The VolumeAttributesClass the volume was created with or last modified to. */
  volumeAttributesClassName: z.optional(z.string()),
}));

/** A PV as read from a cluster (it has a uid) — what items carry. */
export const PersistentVolumeSchema = deferred(() => z.looseObject({
  metadata: ObjectMetaSchema,
  spec: PersistentVolumeSpecSchema,
  status: z.optional(z.looseObject({ phase: z.optional(z.string()) })),
}));
export type PersistentVolume = z.infer<typeof PersistentVolumeSchema>;

const NewPersistentVolumeMetaSchema = deferred(() => z.object({
  name: z.string().check(z.minLength(1)),
  annotations: StringMap,
  labels: z.optional(StringMap),
  finalizers: z.optional(z.array(z.string())),
}));

const NewPersistentVolumeSpecSchema = deferred(() => z.extend(PersistentVolumeSpecSchema, {
  claimRef: ClaimRefSchema,
  volumeMode: VolumeModeSchema,
  persistentVolumeReclaimPolicy: ReclaimPolicySchema,
}));

/** A PV the backend asks to create: no uid yet, exactly the fields a provisioner sets. */
export const NewPersistentVolumeSchema = deferred(() => z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('PersistentVolume'),
  metadata: NewPersistentVolumeMetaSchema,
  spec: z.extend(NewPersistentVolumeSpecSchema, {
    csi: CsiPersistentVolumeSourceSchema,
    awsElasticBlockStore: z.optional(z.undefined()),
  }),
}));
export type NewPersistentVolume = z.infer<typeof NewPersistentVolumeSchema>;

/**
 * The PV for a claim of a migrated in-tree class: the in-tree source instead of `csi`, as
 * external-provisioner writes it for a migrated plugin (CSI PV translated back to in-tree).
 */
export const NewInTreePersistentVolumeSchema = deferred(() => z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('PersistentVolume'),
  metadata: NewPersistentVolumeMetaSchema,
  spec: z.extend(NewPersistentVolumeSpecSchema, {
    awsElasticBlockStore: AwsElasticBlockStoreSourceSchema,
    csi: z.optional(z.undefined()),
  }),
}));
export type NewInTreePersistentVolume = z.infer<typeof NewInTreePersistentVolumeSchema>;

/** `errorCode`: the numeric gRPC code of the failure (Kubernetes 1.34+, MutableCSINodeAllocatableCount). */
export const VolumeErrorSchema = deferred(() => z.object({ time: z.string(), message: z.string(), errorCode: z.optional(z.int32()) }));

export const VolumeAttachmentStatusSchema = deferred(() => z.object({
  attached: z.boolean(),
  attachmentMetadata: z.nullish(StringMap),
  attachError: z.nullish(VolumeErrorSchema),
  detachError: z.nullish(VolumeErrorSchema),
}));
export type VolumeAttachmentStatus = z.infer<typeof VolumeAttachmentStatusSchema>;

export const VolumeAttachmentSchema = deferred(() => z.looseObject({
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    attacher: z.string(),
    nodeName: z.string(),
    source: z.looseObject({
      persistentVolumeName: z.nullish(z.string()),
      /**
       * An inline volume's spec, in place of a PV name: the attach/detach controller writes the
       * CSI translation of a pod's inline in-tree volume here (`csi.volumeHandle` is the disk).
       */
      inlineVolumeSpec: z.nullish(z.looseObject({ csi: z.nullish(CsiPersistentVolumeSourceSchema) })),
    }),
  }),
  status: z.optional(z.partial(VolumeAttachmentStatusSchema)),
}));
export type VolumeAttachment = z.infer<typeof VolumeAttachmentSchema>;

/** The Node facts the backend needs: its zone labels and how to find its EC2 instance. */
export const NodeInfoSchema = deferred(() => z.object({
  name: z.string().check(z.minLength(1)),
  labels: z._default(StringMap, {}),
  providerID: z.optional(z.string()),
  /** CSINode `drivers[name=<driver>]`, absent when the node has no such entry. */
  csiNode: z.optional(
    z.object({
      nodeID: z.string().check(z.minLength(1)),
      topologyKeys: z.optional(z.array(z.string())),
      allocatableCount: z.optional(z.int().check(z.nonnegative())),
    }),
  ),
}));
export type NodeInfo = z.infer<typeof NodeInfoSchema>;
