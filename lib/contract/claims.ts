/**
 * Rules about claims that the forwarder (over client-node objects) and the backend (over the
 * contract's zod types) must apply alike. They take the narrowest shape both satisfy.
 */
import { ceilGiB, parseQuantity } from './quantity.js';
import { Annotations, Finalizers, pvNameForClaim } from './wellknown.js';

export interface ClaimLike {
  metadata?: {
    uid?: string;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: unknown;
  };
  spec?: {
    volumeName?: string | null;
    storageClassName?: string | null;
    volumeAttributesClassName?: string | null;
    resources?: { requests?: { storage?: unknown } | null } | null;
  };
  status?: {
    phase?: string | null;
    capacity?: { storage?: unknown } | null;
    conditions?: readonly { type?: string }[] | null;
    currentVolumeAttributesClassName?: string | null;
    modifyVolumeStatus?: unknown;
    allocatedResourceStatuses?: Record<string, string> | null;
  } | null;
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

/**
 * The PV controller has finished binding the claim: its phase is Bound. It binds in two writes —
 * `spec.volumeName` first, then the status (phase, capacity, and the PV's VolumeAttributesClass
 * as `currentVolumeAttributesClassName`) — so a claim that names its volume but is not Bound yet
 * says nothing about what its volume has. external-resizer's resize and modify controllers act
 * only on Bound claims for the same reason.
 */
export function isBoundClaim(pvc: ClaimLike): boolean {
  return pvc.status?.phase === 'Bound';
}

/**
 * A bound claim asks something of its volume: another VolumeAttributesClass than it has (or
 * a change of class is under way), a resize is under way, or its request and its PV's
 * capacity (`pvCapacity`, when known) differ in whole GiB — bigger to grow, smaller to be
 * refused with an Event. Bound claims for which this is false are not sent: a volume that is
 * as its claim wants costs nothing. A claim not Bound yet (`isBoundClaim`) asks nothing yet.
 */
export function claimWantsVolumeChange(pvc: ClaimLike, pvCapacity: string | undefined): boolean {
  if (!isBoundClaim(pvc)) return false;
  const status = pvc.status ?? {};
  if ((pvc.spec?.volumeAttributesClassName ?? '') !== (status.currentVolumeAttributesClassName ?? '')) return true;
  if (status.modifyVolumeStatus) return true;
  const resize = status.allocatedResourceStatuses?.storage;
  if (resize === 'ControllerResizeInProgress' || resize === 'ControllerResizeInfeasible') return true;
  if (pvCapacity === undefined) return false;
  if (claimResizeUnrecorded(pvc, pvCapacity)) return true;
  const requested = pvc.spec?.resources?.requests?.storage;
  try {
    return ceilGiB(parseQuantity(String(requested))) !== ceilGiB(parseQuantity(pvCapacity));
  } catch {
    // A request that is no quantity: the backend refuses it with an Event.
    return true;
  }
}

/**
 * A resize whose end the claim was never told: it asks more than its status says it has, its PV
 * (`pvCapacity`) has that much already, and nothing says the node is at it (no resize status,
 * no FileSystemResizePending condition). The status writes of the request that grew the disk
 * were lost with its answer, and those of the one that recorded the PV's new capacity: left so,
 * the kubelet never grows the filesystem, and no other rule offers the claim again. What is
 * left is the status write that ends the controller's part (NodeResizePending, or the
 * capacity of a Block volume). external-resizer never meets this: it writes its Resizing
 * condition before it acts, where volhook's answer carries it with the act.
 */
export function claimResizeUnrecorded(pvc: ClaimLike, pvCapacity: string | undefined): boolean {
  const status = pvc.status ?? {};
  if (status.allocatedResourceStatuses?.storage) return false;
  if (status.conditions?.some((c) => c.type === 'FileSystemResizePending')) return false;
  const requested = pvc.spec?.resources?.requests?.storage;
  const has = status.capacity?.storage;
  if (pvCapacity === undefined || requested === undefined || has === undefined) return false;
  try {
    const wanted = ceilGiB(parseQuantity(String(requested)));
    return wanted > ceilGiB(parseQuantity(String(has))) && ceilGiB(parseQuantity(pvCapacity)) >= wanted;
  } catch {
    return false;
  }
}
