/**
 * Builders of the contract's writes. Every write names the object's uid, so that a write
 * computed for one incarnation of an object never lands on a namesake created since.
 */
import type {
  NewInTreePersistentVolume,
  NewPersistentVolume,
  ObjectRef,
  PersistentVolume,
  PersistentVolumeClaim,
  VolumeAttachment,
  VolumeAttachmentStatus,
  Write,
} from '../contract/index.js';

interface HasMetadata {
  metadata: { name: string; namespace?: string; uid: string; finalizers?: string[]; annotations?: Record<string, string> };
}

export const pvRef = (pv: HasMetadata): ObjectRef => ({ kind: 'PersistentVolume', name: pv.metadata.name, uid: pv.metadata.uid });

export const vaRef = (va: HasMetadata): ObjectRef => ({ kind: 'VolumeAttachment', name: va.metadata.name, uid: va.metadata.uid });

export const contentRef = (content: HasMetadata): ObjectRef => ({ kind: 'VolumeSnapshotContent', name: content.metadata.name, uid: content.metadata.uid });

export const pvcRef = (pvc: HasMetadata): ObjectRef => ({
  kind: 'PersistentVolumeClaim',
  name: pvc.metadata.name,
  namespace: pvc.metadata.namespace,
  uid: pvc.metadata.uid,
});

export function hasFinalizer(object: HasMetadata, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) ?? false;
}

export const addFinalizer = (target: ObjectRef, finalizer: string): Write => ({ op: 'addFinalizer', target, finalizer });

export const removeFinalizer = (target: ObjectRef, finalizer: string): Write => ({ op: 'removeFinalizer', target, finalizer });

/** addFinalizer when `object` lacks it, else nothing. */
export function ensureFinalizer(object: HasMetadata, target: ObjectRef, finalizer: string): Write[] {
  return hasFinalizer(object, finalizer) ? [] : [addFinalizer(target, finalizer)];
}

/** removeFinalizer when `object` has it, else nothing. */
export function dropFinalizer(object: HasMetadata, target: ObjectRef, finalizer: string): Write[] {
  return hasFinalizer(object, finalizer) ? [removeFinalizer(target, finalizer)] : [];
}

export const createPersistentVolume = (pv: NewPersistentVolume | NewInTreePersistentVolume): Write => ({ op: 'createPersistentVolume', pv });

export const deletePersistentVolume = (pv: PersistentVolume): Write => ({
  op: 'deletePersistentVolume',
  name: pv.metadata.name,
  uid: pv.metadata.uid,
});

export const removePvcAnnotation = (pvc: PersistentVolumeClaim, annotation: string): Write => ({
  op: 'removePvcAnnotation',
  namespace: pvc.metadata.namespace,
  name: pvc.metadata.name,
  uid: pvc.metadata.uid,
  annotation,
});

/** setAnnotation when `object` does not already carry `key` = `value`, else nothing. */
export function ensureAnnotation(object: HasMetadata, target: ObjectRef, key: string, value: string): Write[] {
  if (object.metadata.annotations?.[key] === value) return [];
  return [{ op: 'setAnnotation', target: { ...target, uid: object.metadata.uid }, key, value }];
}

/** removeAnnotation when `object` carries `key`, else nothing. */
export function dropAnnotation(object: HasMetadata, target: ObjectRef, key: string): Write[] {
  if (!(key in (object.metadata.annotations ?? {}))) return [];
  return [{ op: 'removeAnnotation', target: { ...target, uid: object.metadata.uid }, key }];
}

/**
 * The VolumeAttachment's status with `change` applied, as a write — or no write when that is
 * already its status, so a converged attachment is not written again (every write is a watch
 * event, and so another reconcile).
 */
export function vaStatusWrites(va: VolumeAttachment, change: Partial<VolumeAttachmentStatus>): Write[] {
  const current = va.status ?? {};
  const status: VolumeAttachmentStatus = { ...current, attached: current.attached ?? false, ...change };
  const unchanged = (Object.keys(status) as (keyof VolumeAttachmentStatus)[]).every((field) =>
    sameValue(current[field], status[field]),
  );
  return unchanged ? [] : [{ op: 'updateVolumeAttachmentStatus', name: va.metadata.name, uid: va.metadata.uid, status }];
}

/** Deep equality where an absent field and null are the same (both mean "not set"). */
function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** RFC 3339 to the second, as Kubernetes writes `metav1.Time`. */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}
