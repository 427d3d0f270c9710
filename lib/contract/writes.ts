/**
 * The closed set of Kubernetes writes the backend may ask for. Each one is idempotent:
 * applying it twice leaves the cluster as applying it once, so a replayed response is safe.
 */
import * as z from 'zod/mini';
import { NewInTreePersistentVolumeSchema, NewPersistentVolumeSchema, VolumeAttachmentStatusSchema } from './kube-objects.js';

export const ObjectRefSchema = z.object({
  kind: z.enum(['PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment']),
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

export const EventInvolvedObjectSchema = z.object({
  kind: z.enum(['PersistentVolumeClaim', 'PersistentVolume', 'VolumeAttachment']),
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
  CreateEventWriteSchema,
]);
export type Write = z.infer<typeof WriteSchema>;
export type CreateEventWrite = z.infer<typeof CreateEventWriteSchema>;
