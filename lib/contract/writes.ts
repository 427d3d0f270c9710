/**
 * The closed set of Kubernetes writes the backend may ask for. Each one is idempotent:
 * applying it twice leaves the cluster as applying it once, so a replayed response is safe.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import {
  ModifyVolumeStatusSchema,
  NewInTreePersistentVolumeSchema,
  NewPersistentVolumeSchema,
  PersistentVolumeClaimConditionSchema,
  VolumeAttachmentStatusSchema,
} from './kube-objects.js';

const StringMap = deferred(() => z.record(z.string(), z.string()));

/**
 * The kinds a write may name. VolumeSnapshotContent is `snapshot.storage.k8s.io/v1`, cluster-scoped;
 * VolumeSnapshot is `snapshot.storage.k8s.io/v1`, namespaced (only its finalizers are written:
 * the source protection of a restore, lib/contract/source-protection.ts). VolumeGroupSnapshotContent
 * is `groupsnapshot.storage.k8s.io/v1`, cluster-scoped; only the replies to its items name it.
 */
export const WriteKindSchema = deferred(() => z.enum(['PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment', 'VolumeSnapshotContent', 'VolumeSnapshot', 'VolumeGroupSnapshotContent']));
export type WriteKind = z.infer<typeof WriteKindSchema>;

export const ObjectRefSchema = deferred(() => z.object({
  kind: WriteKindSchema,
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  /** When set, the write applies only to the object with this uid (never to a namesake). */
  uid: z.optional(z.string()),
}));
export type ObjectRef = z.infer<typeof ObjectRefSchema>;

export const CreatePersistentVolumeWriteSchema = deferred(() => z.object({
  op: z.literal('createPersistentVolume'),
  pv: z.union([NewPersistentVolumeSchema, NewInTreePersistentVolumeSchema]),
}));

export const DeletePersistentVolumeWriteSchema = deferred(() => z.object({
  op: z.literal('deletePersistentVolume'),
  name: z.string().check(z.minLength(1)),
  /** Precondition: delete only this incarnation of the PV. */
  uid: z.string().check(z.minLength(1)),
}));

export const AddFinalizerWriteSchema = deferred(() => z.object({
  op: z.literal('addFinalizer'),
  target: ObjectRefSchema,
  finalizer: z.string().check(z.minLength(1)),
}));

export const RemoveFinalizerWriteSchema = deferred(() => z.object({
  op: z.literal('removeFinalizer'),
  target: ObjectRefSchema,
  finalizer: z.string().check(z.minLength(1)),
}));

export const UpdateVolumeAttachmentStatusWriteSchema = deferred(() => z.object({
  op: z.literal('updateVolumeAttachmentStatus'),
  name: z.string().check(z.minLength(1)),
  uid: z.optional(z.string()),
  status: VolumeAttachmentStatusSchema,
}));

export const RemovePvcAnnotationWriteSchema = deferred(() => z.object({
  op: z.literal('removePvcAnnotation'),
  namespace: z.string().check(z.minLength(1)),
  name: z.string().check(z.minLength(1)),
  uid: z.optional(z.string()),
  annotation: z.string().check(z.minLength(1)),
}));

/** Sets one annotation, on this incarnation of the object only (uid-guarded). */
export const SetAnnotationWriteSchema = deferred(() => z.object({
  op: z.literal('setAnnotation'),
  target: z.extend(ObjectRefSchema, { uid: z.string().check(z.minLength(1)) }),
  key: z.string().check(z.minLength(1)),
  value: z.string(),
}));

/** Removes one annotation, from this incarnation of the object only (uid-guarded); absent is done. */
export const RemoveAnnotationWriteSchema = deferred(() => z.object({
  op: z.literal('removeAnnotation'),
  target: z.extend(ObjectRefSchema, { uid: z.string().check(z.minLength(1)) }),
  key: z.string().check(z.minLength(1)),
}));

/**
 * The status of a VolumeSnapshotContent, as the csi-snapshotter sidecar writes it (merge patch
 * of the status subresource; a null clears a field). A `snapshotHandle` is written only where
 * the content has none or the same: the first snapshot recorded is the content's for good.
 */
export const UpdateVolumeSnapshotContentStatusWriteSchema = deferred(() => z.object({
  op: z.literal('updateVolumeSnapshotContentStatus'),
  name: z.string().check(z.minLength(1)),
  uid: z.string().check(z.minLength(1)),
  status: z.object({
    snapshotHandle: z.nullish(z.string().check(z.minLength(1))),
    creationTime: z.nullish(z.number().check(z.refine(Number.isInteger, 'an integer'))),
    restoreSize: z.nullish(z.int().check(z.nonnegative())),
    readyToUse: z.nullish(z.boolean()),
    error: z.nullish(z.object({ time: z.string(), message: z.string() })),
  }),
}));

/**
 * The status of a VolumeGroupSnapshotContent, as the csi-snapshotter sidecar writes it (merge
 * patch of the status subresource; a null clears a field). `creationTime` is a metav1.Time
 * (RFC 3339), unlike a VolumeSnapshotContent's nanoseconds; each member's is nanoseconds.
 */
export const UpdateVolumeGroupSnapshotContentStatusWriteSchema = deferred(() => z.object({
  op: z.literal('updateVolumeGroupSnapshotContentStatus'),
  name: z.string().check(z.minLength(1)),
  uid: z.string().check(z.minLength(1)),
  status: z.object({
    volumeGroupSnapshotHandle: z.nullish(z.string().check(z.minLength(1))),
    creationTime: z.nullish(z.string().check(z.minLength(1))),
    readyToUse: z.nullish(z.boolean()),
    error: z.nullish(z.object({ time: z.string(), message: z.string() })),
    volumeSnapshotInfoList: z.nullish(z.array(z.object({
      volumeHandle: z.string().check(z.minLength(1)),
      snapshotHandle: z.string().check(z.minLength(1)),
      creationTime: z.number().check(z.refine(Number.isInteger, 'an integer')),
      readyToUse: z.boolean(),
      restoreSize: z.int().check(z.nonnegative()),
    }))),
  }),
}));

/**
 * What external-resizer changes on a PV: `spec.capacity.storage` once the disk has grown (only
 * ever up: a smaller value than the PV has is not applied), and `spec.volumeAttributesClassName`
 * once a VolumeAttributesClass change is done. On this incarnation of the PV only (uid), by a
 * patch guarded by the resourceVersion it was computed from.
 */
export const PatchPersistentVolumeWriteSchema = deferred(() => z.object({
  op: z.literal('patchPersistentVolume'),
  name: z.string().check(z.minLength(1)),
  uid: z.string().check(z.minLength(1)),
  capacity: z.optional(z.string().check(z.minLength(1))),
  volumeAttributesClassName: z.optional(z.string().check(z.minLength(1))),
}));

/**
 * A claim's status fields, as external-resizer patches them through the `/status` subresource:
 * each field given replaces the claim's, `null` removes it. Applied only to the version of the
 * claim the backend decided from (`uid` and `resourceVersion` tested in the patch): a claim
 * that changed since is left as it is — the change brings it back to the backend, which
 * decides again from what it is now.
 */
export const PatchPersistentVolumeClaimStatusWriteSchema = deferred(() => z.object({
  op: z.literal('patchPersistentVolumeClaimStatus'),
  namespace: z.string().check(z.minLength(1)),
  name: z.string().check(z.minLength(1)),
  uid: z.string().check(z.minLength(1)),
  resourceVersion: z.string().check(z.minLength(1)),
  status: z.strictObject({
    capacity: z.optional(StringMap),
    allocatedResources: z.optional(z.nullable(StringMap)),
    allocatedResourceStatuses: z.optional(z.nullable(StringMap)),
    conditions: z.optional(z.nullable(z.array(PersistentVolumeClaimConditionSchema))),
    modifyVolumeStatus: z.optional(z.nullable(ModifyVolumeStatusSchema)),
    currentVolumeAttributesClassName: z.optional(z.nullable(z.string())),
  }),
}));
export type PersistentVolumeClaimStatusPatch = z.infer<typeof PatchPersistentVolumeClaimStatusWriteSchema>['status'];

export const EventInvolvedObjectSchema = deferred(() => z.object({
  kind: WriteKindSchema,
  apiVersion: z.string(),
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  uid: z.optional(z.string()),
}));

export type EventInvolvedObject = z.infer<typeof EventInvolvedObjectSchema>;

export const CreateEventWriteSchema = deferred(() => z.object({
  op: z.literal('createEvent'),
  involvedObject: EventInvolvedObjectSchema,
  type: z.enum(['Normal', 'Warning']),
  reason: z.string().check(z.minLength(1)),
  message: z.string(),
}));

export const WriteSchema = deferred(() => z.discriminatedUnion('op', [
  CreatePersistentVolumeWriteSchema,
  DeletePersistentVolumeWriteSchema,
  AddFinalizerWriteSchema,
  RemoveFinalizerWriteSchema,
  UpdateVolumeAttachmentStatusWriteSchema,
  RemovePvcAnnotationWriteSchema,
  SetAnnotationWriteSchema,
  RemoveAnnotationWriteSchema,
  UpdateVolumeSnapshotContentStatusWriteSchema,
  UpdateVolumeGroupSnapshotContentStatusWriteSchema,
  PatchPersistentVolumeWriteSchema,
  PatchPersistentVolumeClaimStatusWriteSchema,
  CreateEventWriteSchema,
]));
export type Write = z.infer<typeof WriteSchema>;
export type CreateEventWrite = z.infer<typeof CreateEventWriteSchema>;
