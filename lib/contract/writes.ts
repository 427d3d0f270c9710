/**
 * The closed set of Kubernetes writes the backend may ask for. Each one is idempotent:
 * applying it twice leaves the cluster as applying it once, so a replayed response is safe.
 */
import * as z from 'zod/mini';
import { NewInTreePersistentVolumeSchema, NewPersistentVolumeSchema, VolumeAttachmentStatusSchema } from './kube-objects.js';

/** The kinds a write may name. VolumeSnapshotContent is `snapshot.storage.k8s.io/v1`, cluster-scoped. */
export const WriteKindSchema = z.enum(['PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment', 'VolumeSnapshotContent']);
export type WriteKind = z.infer<typeof WriteKindSchema>;

export const ObjectRefSchema = z.object({
  kind: WriteKindSchema,
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  /** When set, the write applies only to the object with this uid (never to a namesake). */
  uid: z.optional(z.string()),
});
export type ObjectRef = z.infer<typeof ObjectRefSchema>;

export const CreatePersistentVolumeWriteSchema = z.object({
  op: z.literal('createPersistentVolume'),
  pv: z.union([NewPersistentVolumeSchema, NewInTreePersistentVolumeSchema]),
});

export const DeletePersistentVolumeWriteSchema = z.object({
  op: z.literal('deletePersistentVolume'),
  name: z.string().check(z.minLength(1)),
  /** Precondition: delete only this incarnation of the PV. */
  uid: z.string().check(z.minLength(1)),
});

export const AddFinalizerWriteSchema = z.object({
  op: z.literal('addFinalizer'),
  target: ObjectRefSchema,
  finalizer: z.string().check(z.minLength(1)),
});

export const RemoveFinalizerWriteSchema = z.object({
  op: z.literal('removeFinalizer'),
  target: ObjectRefSchema,
  finalizer: z.string().check(z.minLength(1)),
});

export const UpdateVolumeAttachmentStatusWriteSchema = z.object({
  op: z.literal('updateVolumeAttachmentStatus'),
  name: z.string().check(z.minLength(1)),
  uid: z.optional(z.string()),
  status: VolumeAttachmentStatusSchema,
});

export const RemovePvcAnnotationWriteSchema = z.object({
  op: z.literal('removePvcAnnotation'),
  namespace: z.string().check(z.minLength(1)),
  name: z.string().check(z.minLength(1)),
  uid: z.optional(z.string()),
  annotation: z.string().check(z.minLength(1)),
});

/** Sets one annotation, on this incarnation of the object only (uid-guarded). */
export const SetAnnotationWriteSchema = z.object({
  op: z.literal('setAnnotation'),
  target: z.extend(ObjectRefSchema, { uid: z.string().check(z.minLength(1)) }),
  key: z.string().check(z.minLength(1)),
  value: z.string(),
});

/** Removes one annotation, from this incarnation of the object only (uid-guarded); absent is done. */
export const RemoveAnnotationWriteSchema = z.object({
  op: z.literal('removeAnnotation'),
  target: z.extend(ObjectRefSchema, { uid: z.string().check(z.minLength(1)) }),
  key: z.string().check(z.minLength(1)),
});

/**
 * The status of a VolumeSnapshotContent, as the csi-snapshotter sidecar writes it (merge patch
 * of the status subresource; a null clears a field). A `snapshotHandle` is written only where
 * the content has none or the same: the first snapshot recorded is the content's for good.
 */
export const UpdateVolumeSnapshotContentStatusWriteSchema = z.object({
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
});

export const EventInvolvedObjectSchema = z.object({
  kind: WriteKindSchema,
  apiVersion: z.string(),
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  uid: z.optional(z.string()),
});

export type EventInvolvedObject = z.infer<typeof EventInvolvedObjectSchema>;

export const CreateEventWriteSchema = z.object({
  op: z.literal('createEvent'),
  involvedObject: EventInvolvedObjectSchema,
  type: z.enum(['Normal', 'Warning']),
  reason: z.string().check(z.minLength(1)),
  message: z.string(),
});

export const WriteSchema = z.discriminatedUnion('op', [
  CreatePersistentVolumeWriteSchema,
  DeletePersistentVolumeWriteSchema,
  AddFinalizerWriteSchema,
  RemoveFinalizerWriteSchema,
  UpdateVolumeAttachmentStatusWriteSchema,
  RemovePvcAnnotationWriteSchema,
  SetAnnotationWriteSchema,
  RemoveAnnotationWriteSchema,
  UpdateVolumeSnapshotContentStatusWriteSchema,
  CreateEventWriteSchema,
]);
export type Write = z.infer<typeof WriteSchema>;
export type CreateEventWrite = z.infer<typeof CreateEventWriteSchema>;
