/**
 * The CSI group snapshot objects (`groupsnapshot.storage.k8s.io`, v1 as external-snapshotter
 * v8.6 stores them; v1beta1 and v1beta2 are served too) as volhook reads them, and the names
 * the snapshot controllers fix: volhook takes the csi-snapshotter sidecar's part for its
 * driver, so its annotations, finalizer and status fields are the sidecar's
 * (`pkg/sidecar-controller/groupsnapshot_helper.go`, `pkg/utils`).
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import { ObjectMetaSchema } from './kube-objects.js';
import { SnapshotDeletionPolicySchema, VolumeSnapshotErrorSchema } from './snapshots.js';

export const GROUP_SNAPSHOT_API_GROUP = 'groupsnapshot.storage.k8s.io';
export const GROUP_SNAPSHOT_API_VERSION = 'v1';

export const GroupSnapshotAnnotations = {
  /**
   * Set on a group content before the storage is asked for the group and removed once it
   * answered (success or a final error): while it is there the content is not deleted — the
   * group's snapshots may still land.
   */
  beingCreated: 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-being-created',
  /** Set by the common controller on a group content whose VolumeGroupSnapshot is being deleted. */
  beingDeleted: 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-being-deleted',
} as const;

export const GroupSnapshotFinalizers = {
  /** On a group content while it is bound; the sidecar removes it once the snapshots are dealt with. */
  contentBound: 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshotcontent-bound-protection',
} as const;

/** One member of a group content's status: a volume and the snapshot taken of it. */
export const VolumeSnapshotInfoSchema = deferred(() => z.looseObject({
  volumeHandle: z.nullish(z.string()),
  snapshotHandle: z.nullish(z.string()),
  /** Nanoseconds since the epoch, as the sidecar writes it. */
  creationTime: z.nullish(z.number().check(z.refine(Number.isInteger, 'an integer'))),
  readyToUse: z.nullish(z.boolean()),
  /** Bytes. */
  restoreSize: z.nullish(z.int().check(z.nonnegative())),
}));
export type VolumeSnapshotInfo = z.infer<typeof VolumeSnapshotInfoSchema>;

export const VolumeGroupSnapshotContentStatusSchema = deferred(() => z.looseObject({
  volumeGroupSnapshotHandle: z.nullish(z.string()),
  /** A metav1.Time (RFC 3339), unlike a VolumeSnapshotContent's nanoseconds. */
  creationTime: z.nullish(z.string()),
  readyToUse: z.nullish(z.boolean()),
  error: z.nullish(VolumeSnapshotErrorSchema),
  volumeSnapshotInfoList: z.nullish(z.array(VolumeSnapshotInfoSchema)),
}));
export type VolumeGroupSnapshotContentStatus = z.infer<typeof VolumeGroupSnapshotContentStatusSchema>;

export const VolumeGroupSnapshotContentSchema = deferred(() => z.looseObject({
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    driver: z.string(),
    deletionPolicy: SnapshotDeletionPolicySchema,
    volumeGroupSnapshotClassName: z.nullish(z.string()),
    volumeGroupSnapshotRef: z.looseObject({ namespace: z.nullish(z.string()), name: z.nullish(z.string()), uid: z.nullish(z.string()) }),
    /** Exactly one: the volumes to snapshot (dynamic), or an existing group (pre-provisioned). */
    source: z.looseObject({
      volumeHandles: z.nullish(z.array(z.string())),
      groupSnapshotHandles: z.nullish(z.looseObject({ volumeGroupSnapshotHandle: z.string(), volumeSnapshotHandles: z.array(z.string()) })),
    }),
  }),
  status: z.nullish(VolumeGroupSnapshotContentStatusSchema),
}));
export type VolumeGroupSnapshotContent = z.infer<typeof VolumeGroupSnapshotContentSchema>;

export const VolumeGroupSnapshotClassSchema = deferred(() => z.looseObject({
  metadata: z.looseObject({ name: z.string().check(z.minLength(1)) }),
  driver: z.string(),
  deletionPolicy: SnapshotDeletionPolicySchema,
  parameters: z.nullish(z.record(z.string(), z.string())),
}));
export type VolumeGroupSnapshotClass = z.infer<typeof VolumeGroupSnapshotClassSchema>;

/**
 * The group content's snapshots are being deleted, as the sidecar decides it
 * (`shouldDeleteGroupSnapshotContent`): a deletion timestamp, and either an unbound
 * pre-provisioned content or the common controller's being-deleted mark — never while the
 * group may still land.
 */
export function isGroupContentBeingDeleted(content: VolumeGroupSnapshotContent): boolean {
  const { metadata, spec } = content;
  if (!metadata.deletionTimestamp) return false;
  if (spec.source.groupSnapshotHandles && !spec.volumeGroupSnapshotRef.uid) return true;
  const annotations = metadata.annotations ?? {};
  if (GroupSnapshotAnnotations.beingCreated in annotations) return false;
  return GroupSnapshotAnnotations.beingDeleted in annotations;
}
