/**
 * Which objects are ours. Only these are watched into the queue and posted; everything else
 * in the cluster (other provisioners' claims, in-tree volumes) is left alone.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment } from '@kubernetes/client-node';
import {
  claimTagsUnrecorded,
  claimWantsVolumeChange,
  Finalizers,
  isClaimFor,
  isOurContent,
  isOurVolume as isOurVolumeByContract,
  isProtectedClaim,
  isProvisionedBy,
  reclaimPolicy,
  type Ownership as ContractOwnership,
} from '../contract/index.js';

/**
 * Who volhook is in this cluster, as the forwarder sees it. `canary`: volhook runs beside the
 * EBS CSI controller (external-provisioner, -attacher, -resizer, -snapshotter), which keeps
 * everything keyed by the driver name both share in their PVs — attach and detach, resize and
 * modify, snapshots, PVs it did not write. volhook then provisions and reclaims only what its own
 * provisioner name makes its: claims not yet bound, and the PVs it wrote (`provisioned-by`).
 * Why attach stays with the controller: docs/deploy.md, "A canary beside the EBS CSI controller".
 */
export interface Ownership extends ContractOwnership {
  canary?: boolean;
}

/**
 * A claim that is ours (the contract's `isClaimFor`: our provisioner's annotation, or migrated
 * to our driver), and either not bound yet, or still carrying volhook's provisioning
 * protection (which only the backend may take off), or made from a source whose protection
 * is to go (`sourceAwaitsRelease`), or bound and asking its volume to grow or change class
 * (`pvOf` finds its PV in the cache).
 */
export function isOurClaim(
  pvc: V1PersistentVolumeClaim,
  ownership: Ownership,
  pvOf?: (name: string) => V1PersistentVolume | undefined,
  sourceAwaitsRelease?: (pvc: V1PersistentVolumeClaim) => boolean,
): boolean {
  if (!isClaimFor(pvc, ownership.provisioner)) return false;
  const volumeName = pvc.spec?.volumeName;
  if (!volumeName || isProtectedClaim(pvc)) return true;
  // Its source still carries the protection volhook put on it, and no claim needs it now: the
  // claim goes (a canary's too: it provisioned the claim) so that the backend lets it go.
  if (sourceAwaitsRelease?.(pvc)) return true;
  // A canary leaves resizes and class changes to the controller's external-resizer, which
  // serves every PV of the driver: both would modify the same disk.
  if (ownership.canary) return false;
  // Bound: only when it asks something of its volume (a resize, another VolumeAttributesClass,
  // tags its annotations ask for that the backend has not handled).
  const capacity = pvOf?.(volumeName)?.spec?.capacity?.storage;
  return claimWantsVolumeChange(pvc, capacity === undefined ? undefined : String(capacity)) || claimTagsUnrecorded(pvc);
}

/**
 * A volume we provisioned, or one naming our driver (statically provisioned): the contract's
 * rule. A canary's: only one it provisioned, under its own provisioner name.
 */
export function isOurVolume(pv: V1PersistentVolume, ownership: Ownership): boolean {
  return ownership.canary ? isProvisionedBy(pv, ownership.provisioner) : isOurVolumeByContract(pv, ownership);
}

/** An attachment by our driver; none for a canary (the controller's external-attacher attaches them all). */
export function isOurAttachment(va: V1VolumeAttachment, ownership: Ownership): boolean {
  return !ownership.canary && va.spec?.attacher === ownership.driver;
}

/** A snapshot content of our driver; none for a canary (the controller's external-snapshotter serves them all). */
export function isOurSnapshotContent(content: Parameters<typeof isOurContent>[0], ownership: Ownership): boolean {
  return !ownership.canary && isOurContent(content, ownership.driver);
}

/** A group content of our driver (none for a canary, as for snapshot contents). */
export function isOurGroupSnapshotContent(content: { spec?: { driver?: string } }, ownership: Ownership): boolean {
  return !ownership.canary && content.spec?.driver === ownership.driver;
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
