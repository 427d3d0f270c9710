/**
 * The closed set of Kubernetes writes the backend may ask for. Each one is idempotent:
 * applying it twice leaves the cluster as applying it once, so a replayed response is safe.
 */
import { z } from 'zod';
import {
  ModifyVolumeStatusSchema,
  NewInTreePersistentVolumeSchema,
  NewPersistentVolumeSchema,
  PersistentVolumeClaimConditionSchema,
  VolumeAttachmentStatusSchema,
} from './kube-objects.js';

const StringMap = z.record(z.string(), z.string());

export const ObjectRefSchema = z.object({
  kind: z.enum(['PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment']),
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

/**
 * What external-resizer changes on a PV: `spec.capacity.storage` once the disk has grown (only
 * ever up: a smaller value than the PV has is not applied), and `spec.volumeAttributesClassName`
 * once a VolumeAttributesClass change is done. On this incarnation of the PV only (uid), by a
 * patch guarded by the resourceVersion it was computed from.
 */
export const PatchPersistentVolumeWriteSchema = z.object({
  op: z.literal('patchPersistentVolume'),
  name: z.string().min(1),
  uid: z.string().min(1),
  capacity: z.string().min(1).optional(),
  volumeAttributesClassName: z.string().min(1).optional(),
});

/**
 * A claim's status fields, as external-resizer patches them through the `/status` subresource:
 * each field given replaces the claim's, `null` removes it. Applied only to the version of the
 * claim the backend decided from (`uid` and `resourceVersion` tested in the patch): a claim
 * that changed since is left as it is — the change brings it back to the backend, which
 * decides again from what it is now.
 */
export const PatchPersistentVolumeClaimStatusWriteSchema = z.object({
  op: z.literal('patchPersistentVolumeClaimStatus'),
  namespace: z.string().min(1),
  name: z.string().min(1),
  uid: z.string().min(1),
  resourceVersion: z.string().min(1),
  status: z.strictObject({
    capacity: StringMap.optional(),
    allocatedResources: StringMap.nullable().optional(),
    allocatedResourceStatuses: StringMap.nullable().optional(),
    conditions: z.array(PersistentVolumeClaimConditionSchema).nullable().optional(),
    modifyVolumeStatus: ModifyVolumeStatusSchema.nullable().optional(),
    currentVolumeAttributesClassName: z.string().nullable().optional(),
  }),
});
export type PersistentVolumeClaimStatusPatch = z.infer<typeof PatchPersistentVolumeClaimStatusWriteSchema>['status'];

export const EventInvolvedObjectSchema = z.object({
  kind: z.enum(['PersistentVolumeClaim', 'PersistentVolume', 'VolumeAttachment']),
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
  PatchPersistentVolumeWriteSchema,
  PatchPersistentVolumeClaimStatusWriteSchema,
  CreateEventWriteSchema,
]);
export type Write = z.infer<typeof WriteSchema>;
export type CreateEventWrite = z.infer<typeof CreateEventWriteSchema>;
