/**
 * The CSI snapshot objects (`snapshot.storage.k8s.io/v1`) as they cross the forwarder →
 * backend boundary, and the names the snapshot controllers fix: volhook takes the
 * csi-snapshotter sidecar's part for its driver, so its annotations, finalizer and status
 * fields are the sidecar's, field for field.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import { ObjectMetaSchema } from './kube-objects.js';
import { isSnapshotCopySettled } from './snapshot-copy.js';

export const SNAPSHOT_API_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_API_VERSION = 'v1';

/** The snapshot controllers' annotations and finalizers (external-snapshotter `pkg/utils`). */
export const SnapshotAnnotations = {
  /**
   * Set on a content before CreateSnapshot is sent and removed once the storage answered
   * (success or a final error): while it is there, the content is not deleted — a snapshot
   * may still land for it.
   */
  beingCreated: 'snapshot.storage.kubernetes.io/volumesnapshot-being-created',
  /** Set by the common controller on a content whose VolumeSnapshot is being deleted (Delete policy). */
  beingDeleted: 'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted',
  /**
   * Set by the common controller on each member content of a dynamic group snapshot (its value
   * the group's handle): the snapshot was cut with the group, so the sidecar never creates one
   * for it; the controller records the member's `status.snapshotHandle` and the sidecar keeps its
   * status up to date from there.
   */
  groupSnapshotHandle: 'groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle',
} as const;

export const SnapshotFinalizers = {
  /** On a content while it is bound; the sidecar removes it once the snapshot is dealt with. */
  contentBound: 'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection',
} as const;

export const SnapshotDeletionPolicySchema = deferred(() => z.enum(['Delete', 'Retain']));

export const VolumeSnapshotErrorSchema = deferred(() => z.looseObject({ time: z.nullish(z.string()), message: z.nullish(z.string()) }));

export const VolumeSnapshotContentStatusSchema = deferred(() => z.looseObject({
  snapshotHandle: z.nullish(z.string()),
  /** Nanoseconds since the epoch, as the sidecar writes it. */
  creationTime: z.nullish(z.number().check(z.refine(Number.isInteger, 'an integer'))),
  /** Bytes. */
  restoreSize: z.nullish(z.int().check(z.nonnegative())),
  readyToUse: z.nullish(z.boolean()),
  error: z.nullish(VolumeSnapshotErrorSchema),
}));
export type VolumeSnapshotContentStatus = z.infer<typeof VolumeSnapshotContentStatusSchema>;

export const VolumeSnapshotContentSchema = deferred(() => z.looseObject({
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    driver: z.string(),
    deletionPolicy: SnapshotDeletionPolicySchema,
    /** Exactly one: a volume to snapshot (dynamic), or an existing snapshot (pre-provisioned). */
    source: z.looseObject({ volumeHandle: z.nullish(z.string()), snapshotHandle: z.nullish(z.string()) }),
    volumeSnapshotClassName: z.nullish(z.string()),
    volumeSnapshotRef: z.looseObject({ namespace: z.nullish(z.string()), name: z.nullish(z.string()), uid: z.nullish(z.string()) }),
    sourceVolumeMode: z.nullish(z.string()),
  }),
  status: z.nullish(VolumeSnapshotContentStatusSchema),
}));
export type VolumeSnapshotContent = z.infer<typeof VolumeSnapshotContentSchema>;

export const VolumeSnapshotClassSchema = deferred(() => z.looseObject({
  metadata: z.looseObject({ name: z.string().check(z.minLength(1)) }),
  driver: z.string(),
  deletionPolicy: SnapshotDeletionPolicySchema,
  parameters: z.nullish(z.record(z.string(), z.string())),
}));
export type VolumeSnapshotClass = z.infer<typeof VolumeSnapshotClassSchema>;

/** A VolumeSnapshot, as far as a restore needs it. */
export const VolumeSnapshotSchema = deferred(() => z.looseObject({
  metadata: z.extend(ObjectMetaSchema, { namespace: z.string().check(z.minLength(1)) }),
  spec: z.looseObject({
    source: z.looseObject({ persistentVolumeClaimName: z.nullish(z.string()), volumeSnapshotContentName: z.nullish(z.string()) }),
    volumeSnapshotClassName: z.nullish(z.string()),
  }),
  status: z.nullish(
    z.looseObject({
      boundVolumeSnapshotContentName: z.nullish(z.string()),
      readyToUse: z.nullish(z.boolean()),
      restoreSize: z.nullish(z.string()),
      error: z.nullish(VolumeSnapshotErrorSchema),
    }),
  ),
}));
export type VolumeSnapshot = z.infer<typeof VolumeSnapshotSchema>;

/**
 * The content's snapshot is being deleted, as the sidecar decides it (`shouldDelete`): a
 * deletion timestamp, and either an unbound pre-provisioned content or the common
 * controller's being-deleted mark — never while a CreateSnapshot may still land.
 */
export function isContentBeingDeleted(content: VolumeSnapshotContent): boolean {
  const { metadata, spec } = content;
  if (!metadata.deletionTimestamp) return false;
  if (spec.source.snapshotHandle && !spec.volumeSnapshotRef.uid) return true;
  const annotations = metadata.annotations ?? {};
  if (SnapshotAnnotations.beingCreated in annotations) return false;
  return SnapshotAnnotations.beingDeleted in annotations;
}

/** The content's snapshot is what volhook's driver makes and deletes. */
export function isOurContent(content: { spec?: { driver?: string } }, driver: string): boolean {
  return content.spec?.driver === driver;
}

/**
 * A content with nothing left for the sidecar to do: ready and not being deleted (the
 * sidecar skips a ready content; see `syncContent`), and no cross-Region copy under way.
 */
export function isSettledContent(content: {
  metadata?: { deletionTimestamp?: unknown; annotations?: Record<string, string> | null };
  status?: { readyToUse?: boolean | null; error?: unknown } | null;
}): boolean {
  if (content.metadata?.deletionTimestamp) return false;
  return content.status?.readyToUse === true && isSnapshotCopySettled(content);
}
