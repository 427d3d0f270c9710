/**
 * The parts of Kubernetes objects that cross the forwarder → backend boundary. Each schema
 * names the fields volhook reads and lets every other field through untouched (loose
 * objects), so a newer cluster's extra fields never make a request invalid.
 */
import { z } from 'zod';

const StringMap = z.record(z.string(), z.string());

/**
 * The shape of the uids the API server assigns (RFC 4122 UUIDs). A claim's uid becomes an EBS
 * tag value and a ClientToken input, so one that is not of this shape is refused — for its
 * own item only — before it reaches EC2.
 */
export const KUBERNETES_UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().min(1),
  resourceVersion: z.string().optional(),
  labels: StringMap.optional(),
  annotations: StringMap.optional(),
  finalizers: z.array(z.string()).optional(),
  deletionTimestamp: z.string().optional(),
});

export const LabelSelectorSchema = z.looseObject({
  matchLabels: StringMap.optional(),
  matchExpressions: z
    .array(z.looseObject({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() }))
    .optional(),
});

/** A claim's condition (`Resizing`, `FileSystemResizePending`, `ModifyingVolume`…). */
export const PersistentVolumeClaimConditionSchema = z.looseObject({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastProbeTime: z.string().nullish(),
  lastTransitionTime: z.string().nullish(),
});
export type PersistentVolumeClaimCondition = z.infer<typeof PersistentVolumeClaimConditionSchema>;

/** `status.modifyVolumeStatus`: the VolumeAttributesClass change under way (KEP-3751). */
export const ModifyVolumeStatusSchema = z.looseObject({
  targetVolumeAttributesClassName: z.string().optional(),
  status: z.enum(['Pending', 'InProgress', 'Infeasible']),
});
export type ModifyVolumeStatus = z.infer<typeof ModifyVolumeStatusSchema>;

/**
 * A claim's status, with the fields of resizing (KEP-1790: `allocatedResources`,
 * `allocatedResourceStatuses`) and of VolumeAttributesClass changes (KEP-3751).
 */
export const PersistentVolumeClaimStatusSchema = z.looseObject({
  phase: z.string().optional(),
  capacity: StringMap.nullish(),
  allocatedResources: StringMap.nullish(),
  allocatedResourceStatuses: StringMap.nullish(),
  conditions: z.array(PersistentVolumeClaimConditionSchema).nullish(),
  modifyVolumeStatus: ModifyVolumeStatusSchema.nullish(),
  currentVolumeAttributesClassName: z.string().nullish(),
});
export type PersistentVolumeClaimStatus = z.infer<typeof PersistentVolumeClaimStatusSchema>;

/** `storage.k8s.io/v1` VolumeAttributesClass: mutable parameters of a volume, for one driver. */
export const VolumeAttributesClassSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string().min(1) }),
  driverName: z.string().min(1),
  parameters: StringMap.optional(),
});
export type VolumeAttributesClass = z.infer<typeof VolumeAttributesClassSchema>;

export const AccessModeSchema = z.enum(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']);
export const VolumeModeSchema = z.enum(['Filesystem', 'Block']);
export const ReclaimPolicySchema = z.enum(['Delete', 'Retain', 'Recycle']);

export const PersistentVolumeClaimSchema = z.looseObject({
  metadata: ObjectMetaSchema.extend({ namespace: z.string().min(1) }),
  spec: z.looseObject({
    accessModes: z.array(AccessModeSchema).default([]),
    resources: z.looseObject({
      requests: z.looseObject({ storage: z.string() }),
    }),
    storageClassName: z.string().nullish(),
    volumeMode: VolumeModeSchema.nullish(),
    volumeName: z.string().nullish(),
    selector: LabelSelectorSchema.nullish(),
    /** Where the volume's content comes from (a VolumeSnapshot, a claim to clone); legacy form of `dataSourceRef`. */
    dataSource: z.looseObject({ kind: z.string(), name: z.string(), apiGroup: z.string().nullish() }).nullish(),
    /** The same for any object, possibly in another namespace (AnyVolumeDataSource). */
    dataSourceRef: z
      .looseObject({ kind: z.string(), name: z.string(), apiGroup: z.string().nullish(), namespace: z.string().nullish() })
      .nullish(),
    /** The VolumeAttributesClass the claim asks for (KEP-3751): its parameters override the class's. */
    volumeAttributesClassName: z.string().nullish(),
  }),
  status: PersistentVolumeClaimStatusSchema.optional(),
});
export type PersistentVolumeClaim = z.infer<typeof PersistentVolumeClaimSchema>;

export const TopologySelectorTermSchema = z.looseObject({
  matchLabelExpressions: z.array(z.object({ key: z.string(), values: z.array(z.string()) })).default([]),
});

export const StorageClassSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string().min(1), annotations: StringMap.optional() }),
  provisioner: z.string(),
  parameters: StringMap.optional(),
  reclaimPolicy: ReclaimPolicySchema.optional(),
  volumeBindingMode: z.enum(['Immediate', 'WaitForFirstConsumer']).optional(),
  allowedTopologies: z.array(TopologySelectorTermSchema).optional(),
  mountOptions: z.array(z.string()).optional(),
  allowVolumeExpansion: z.boolean().optional(),
});
export type StorageClass = z.infer<typeof StorageClassSchema>;

export const NodeSelectorRequirementSchema = z.object({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: z.array(z.string()).optional(),
});
export const NodeAffinitySchema = z.object({
  required: z.object({
    nodeSelectorTerms: z.array(z.object({ matchExpressions: z.array(NodeSelectorRequirementSchema).optional() })),
  }),
});

export const ClaimRefSchema = z.looseObject({
  kind: z.string().optional(),
  apiVersion: z.string().optional(),
  namespace: z.string(),
  name: z.string(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
});

export const CsiPersistentVolumeSourceSchema = z.looseObject({
  driver: z.string(),
  volumeHandle: z.string(),
  fsType: z.string().optional(),
  volumeAttributes: StringMap.optional(),
});

/**
 * The in-tree EBS source (`awsElasticBlockStore`): on PVs the in-tree plugin made before CSI
 * migration, and on those external-provisioner (and volhook) write for migrated in-tree
 * classes. `volumeID` is `vol-…`, `aws:///vol-…` or `aws://<zone>/vol-…`.
 */
export const AwsElasticBlockStoreSourceSchema = z.looseObject({
  volumeID: z.string(),
  fsType: z.string().optional(),
  partition: z.number().int().optional(),
  readOnly: z.boolean().optional(),
});

export const PersistentVolumeSpecSchema = z.looseObject({
  capacity: z.looseObject({ storage: z.string() }),
  accessModes: z.array(AccessModeSchema),
  volumeMode: VolumeModeSchema.optional(),
  persistentVolumeReclaimPolicy: ReclaimPolicySchema.optional(),
  storageClassName: z.string().optional(),
  mountOptions: z.array(z.string()).optional(),
  claimRef: ClaimRefSchema.nullish(),
  csi: CsiPersistentVolumeSourceSchema.optional(),
  awsElasticBlockStore: AwsElasticBlockStoreSourceSchema.optional(),
  nodeAffinity: NodeAffinitySchema.optional(),
  /** The VolumeAttributesClass the volume was created with or last modified to. */
  volumeAttributesClassName: z.string().optional(),
});

/** A PV as read from a cluster (it has a uid) — what items carry. */
export const PersistentVolumeSchema = z.looseObject({
  metadata: ObjectMetaSchema,
  spec: PersistentVolumeSpecSchema,
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type PersistentVolume = z.infer<typeof PersistentVolumeSchema>;

const NewPersistentVolumeMetaSchema = z.object({
  name: z.string().min(1),
  annotations: StringMap,
  labels: StringMap.optional(),
  finalizers: z.array(z.string()).optional(),
});

const NewPersistentVolumeSpecSchema = PersistentVolumeSpecSchema.extend({
  claimRef: ClaimRefSchema,
  volumeMode: VolumeModeSchema,
  persistentVolumeReclaimPolicy: ReclaimPolicySchema,
});

/** A PV the backend asks to create: no uid yet, exactly the fields a provisioner sets. */
export const NewPersistentVolumeSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('PersistentVolume'),
  metadata: NewPersistentVolumeMetaSchema,
  spec: NewPersistentVolumeSpecSchema.extend({
    csi: CsiPersistentVolumeSourceSchema,
    awsElasticBlockStore: z.undefined().optional(),
  }),
});
export type NewPersistentVolume = z.infer<typeof NewPersistentVolumeSchema>;

/**
 * The PV for a claim of a migrated in-tree class: the in-tree source instead of `csi`, as
 * external-provisioner writes it for a migrated plugin (CSI PV translated back to in-tree).
 */
export const NewInTreePersistentVolumeSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('PersistentVolume'),
  metadata: NewPersistentVolumeMetaSchema,
  spec: NewPersistentVolumeSpecSchema.extend({
    awsElasticBlockStore: AwsElasticBlockStoreSourceSchema,
    csi: z.undefined().optional(),
  }),
});
export type NewInTreePersistentVolume = z.infer<typeof NewInTreePersistentVolumeSchema>;

export const VolumeErrorSchema = z.object({ time: z.string(), message: z.string() });

export const VolumeAttachmentStatusSchema = z.object({
  attached: z.boolean(),
  attachmentMetadata: StringMap.nullish(),
  attachError: VolumeErrorSchema.nullish(),
  detachError: VolumeErrorSchema.nullish(),
});
export type VolumeAttachmentStatus = z.infer<typeof VolumeAttachmentStatusSchema>;

export const VolumeAttachmentSchema = z.looseObject({
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    attacher: z.string(),
    nodeName: z.string(),
    source: z.looseObject({ persistentVolumeName: z.string().nullish() }),
  }),
  status: VolumeAttachmentStatusSchema.partial().optional(),
});
export type VolumeAttachment = z.infer<typeof VolumeAttachmentSchema>;

/** The Node facts the backend needs: its zone labels and how to find its EC2 instance. */
export const NodeInfoSchema = z.object({
  name: z.string().min(1),
  labels: StringMap.default({}),
  providerID: z.string().optional(),
  /** CSINode `drivers[name=<driver>]`, absent when the node has no such entry. */
  csiNode: z
    .object({
      nodeID: z.string().min(1),
      topologyKeys: z.array(z.string()).optional(),
      allocatableCount: z.number().int().nonnegative().optional(),
    })
    .optional(),
});
export type NodeInfo = z.infer<typeof NodeInfoSchema>;
