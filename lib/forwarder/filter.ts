/**
 * Which objects are ours. Only these are watched into the queue and posted; everything else
 * in the cluster (other provisioners' claims, in-tree volumes) is left alone.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment } from '@kubernetes/client-node';
import { claimTagsUnrecorded, claimWantsVolumeChange, Finalizers, isClaimFor, isProtectedClaim, reclaimPolicy, type Ownership } from '../contract/index.js';

export type { Ownership };

/**
 * A claim that is ours (the contract's `isClaimFor`: our provisioner's annotation, or migrated
 * to our driver), and either not bound yet, or still carrying volhook's provisioning
 * protection (which only the backend may take off), or bound and asking its volume to grow or
 * change class (`pvOf` finds its PV in the cache).
 */
export function isOurClaim(pvc: V1PersistentVolumeClaim, ownership: Ownership, pvOf?: (name: string) => V1PersistentVolume | undefined): boolean {
  if (!isClaimFor(pvc, ownership.provisioner)) return false;
  const volumeName = pvc.spec?.volumeName;
  if (!volumeName || isProtectedClaim(pvc)) return true;
  // Bound: only when it asks something of its volume (a resize, another VolumeAttributesClass,
  // tags its annotations ask for that the backend has not handled).
  const capacity = pvOf?.(volumeName)?.spec?.capacity?.storage;
  return claimWantsVolumeChange(pvc, capacity === undefined ? undefined : String(capacity)) || claimTagsUnrecorded(pvc);
}

/** A volume we provisioned, or one naming our driver (statically provisioned): the contract's rule. */
export { isOurVolume } from '../contract/index.js';

export function isOurAttachment(va: V1VolumeAttachment, ownership: Ownership): boolean {
  return va.spec?.attacher === ownership.driver;
}

/**
 * A PV with nothing left to do until something changes: Bound, not being deleted, and
 * holding the provisioner finalizer when its policy is Delete. Resync skips these; any event
 * on them still offers them.
 */
export function isSettledVolume(pv: V1PersistentVolume): boolean {
  if (pv.metadata?.deletionTimestamp) return false;
  if (pv.status?.phase !== 'Bound') return false;
  return reclaimPolicy(pv) !== 'Delete' || (pv.metadata?.finalizers ?? []).includes(Finalizers.provisioner);
}

/** An attachment that is attached, not being deleted, and holds our finalizer. */
export function isSettledAttachment(va: V1VolumeAttachment, ownership: Ownership): boolean {
  if (va.metadata?.deletionTimestamp) return false;
  if (va.status?.attached !== true) return false;
  return (va.metadata?.finalizers ?? []).includes(Finalizers.attacher(ownership.driver));
}
