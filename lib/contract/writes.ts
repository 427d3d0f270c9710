/**
 * The closed set of Kubernetes writes the backend may ask for. Each one is idempotent:
 * applying it twice leaves the cluster as applying it once, so a replayed response is safe.
 */
import { z } from 'zod';
import { NewInTreePersistentVolumeSchema, NewPersistentVolumeSchema, VolumeAttachmentStatusSchema } from './kube-objects.js';

/** The kinds a write may name. VolumeSnapshotContent is `snapshot.storage.k8s.io/v1`, cluster-scoped. */
export const WriteKindSchema = z.enum(['PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment', 'VolumeSnapshotContent']);
export type WriteKind = z.infer<typeof WriteKindSchema>;

export const ObjectRefSchema = z.object({
  kind: WriteKindSchema,
  name: z.string().min(1),
  namespace: z.string().optional(),
  /** When set, the write applies only to the object with this uid (never to a namesake). */
  uid: z.string().optional(),
});
export type ObjectRef = z.infer<typeof ObjectRefSchema>;

export const CreatePersistentVolumeWriteSchema = z.object({
  op: z.literal('createPersistentVolume'),
  pv: z.union([NewPersistentVolumeSchema, NewInTreePersistentVolumeSchema]),
});

export const DeletePersistentVolumeWriteSchema = z.object({
  op: z.literal('deletePersistentVolume'),
  name: z.string().min(1),
  /** Precondition: delete only this incarnation of the PV. */
  uid: z.string().min(1),
});

export const AddFinalizerWriteSchema = z.object({
  op: z.literal('addFinalizer'),
  target: ObjectRefSchema,
  finalizer: z.string().min(1),
});

export const RemoveFinalizerWriteSchema = z.object({
  op: z.literal('removeFinalizer'),
  target: ObjectRefSchema,
  finalizer: z.string().min(1),
});

export const UpdateVolumeAttachmentStatusWriteSchema = z.object({
  op: z.literal('updateVolumeAttachmentStatus'),
  name: z.string().min(1),
  uid: z.string().optional(),
  status: VolumeAttachmentStatusSchema,
});

export const RemovePvcAnnotationWriteSchema = z.object({
  op: z.literal('removePvcAnnotation'),
  namespace: z.string().min(1),
  name: z.string().min(1),
  uid: z.string().optional(),
  annotation: z.string().min(1),
});

/** Sets one annotation, on this incarnation of the object only (uid-guarded). */
export const SetAnnotationWriteSchema = z.object({
  op: z.literal('setAnnotation'),
  target: ObjectRefSchema.extend({ uid: z.string().min(1) }),
  key: z.string().min(1),
  value: z.string(),
});

/** Removes one annotation, from this incarnation of the object only (uid-guarded); absent is done. */
export const RemoveAnnotationWriteSchema = z.object({
  op: z.literal('removeAnnotation'),
  target: ObjectRefSchema.extend({ uid: z.string().min(1) }),
  key: z.string().min(1),
});

/**
 * The status of a VolumeSnapshotContent, as the csi-snapshotter sidecar writes it (merge patch
 * of the status subresource; a null clears a field). A `snapshotHandle` is written only where
 * the content has none or the same: the first snapshot recorded is the content's for good.
 */
export const UpdateVolumeSnapshotContentStatusWriteSchema = z.object({
  op: z.literal('updateVolumeSnapshotContentStatus'),
  name: z.string().min(1),
  uid: z.string().min(1),
  status: z.object({
    snapshotHandle: z.string().min(1).nullish(),
    creationTime: z.number().refine(Number.isInteger, 'an integer').nullish(),
    restoreSize: z.number().int().nonnegative().nullish(),
    readyToUse: z.boolean().nullish(),
    error: z.object({ time: z.string(), message: z.string() }).nullish(),
  }),
});

export const EventInvolvedObjectSchema = z.object({
  kind: WriteKindSchema,
  apiVersion: z.string(),
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
});

export type EventInvolvedObject = z.infer<typeof EventInvolvedObjectSchema>;

export const CreateEventWriteSchema = z.object({
  op: z.literal('createEvent'),
  involvedObject: EventInvolvedObjectSchema,
  type: z.enum(['Normal', 'Warning']),
  reason: z.string().min(1),
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
