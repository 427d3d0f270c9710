/**
 * Rules about claims that the forwarder (over client-node objects) and the backend (over the
 * contract's zod types) must apply alike. They take the narrowest shape both satisfy.
 */
import { Annotations, Finalizers, pvNameForClaim } from './wellknown.js';

export interface ClaimLike {
  metadata?: {
    uid?: string;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: unknown;
  };
  spec?: { volumeName?: string | null; storageClassName?: string | null };
}

/** The claim's StorageClass name: the old beta annotation wins over `spec.storageClassName`. */
export function claimClassName(pvc: ClaimLike): string | undefined {
  return pvc.metadata?.annotations?.[Annotations.betaStorageClass] ?? pvc.spec?.storageClassName ?? undefined;
}

/** The provisioner the PV controller assigned to a claim; the GA annotation wins over the beta one. */
export function claimProvisioner(pvc: ClaimLike): string | undefined {
  const annotations = pvc.metadata?.annotations ?? {};
  return annotations[Annotations.storageProvisioner] ?? annotations[Annotations.betaStorageProvisioner];
}

/**
 * The claim is for `provisioner`, as external-provisioner decides it: the PV controller
 * assigned it (the storage-provisioner annotation), or marked it migrated to it
 * (`pv.kubernetes.io/migrated-to`, on claims assigned to the in-tree `kubernetes.io/aws-ebs`
 * plugin before CSI migration).
 */
export function isClaimFor(pvc: ClaimLike, provisioner: string): boolean {
  return claimProvisioner(pvc) === provisioner || pvc.metadata?.annotations?.[Annotations.migratedTo] === provisioner;
}

/** The claim carries volhook's provisioning protection: a disk of its may exist or still land. */
export function isProtectedClaim(pvc: ClaimLike): boolean {
  return pvc.metadata?.finalizers?.includes(Finalizers.claimProtection) ?? false;
}

/**
 * A protected claim that will not get its PV from volhook any more: it is being deleted, or
 * it was bound to another PV. Its disk, if one was made and no PV names it, must be deleted
 * before the protection goes — a decision that rests on a live read of the PV.
 */
export function claimReleasesDisk(pvc: ClaimLike): boolean {
  if (!isProtectedClaim(pvc)) return false;
  if (pvc.metadata?.deletionTimestamp) return true;
  const volumeName = pvc.spec?.volumeName;
  return !!volumeName && volumeName !== pvNameForClaim(pvc.metadata?.uid ?? '');
}
