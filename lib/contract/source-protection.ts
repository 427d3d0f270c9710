/**
 * external-provisioner's protection of what a volume is made from: while a claim's volume may
 * still be made from a VolumeSnapshot (restore) or another claim (clone), that source carries a
 * finalizer, so deleting it leaves it Terminating until the volume exists. The names are
 * external-provisioner's (`pkg/controller/controller.go`, v6.1.1 for the snapshot's), so a
 * cluster handed back to it finds its own marks.
 *
 * One finalizer is shared by every claim made from the source: it goes when no claim of the
 * namespace may still make its volume from it — not when the first of them is done (the
 * snapshot's finalizer is removed by external-provisioner after each PV, another restore from
 * the same snapshot still under way), and not left behind when a claim is deleted first
 * (external-provisioner #1507). The forwarder (which claims hold the source) and the backend
 * (when to remove it) apply the rules below alike.
 */
import type { ClaimLike } from './claims.js';

export const SourceFinalizers = {
  /** On a VolumeSnapshot a claim is restored from. */
  snapshot: 'provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection',
  /** On a claim another claim is cloned from. */
  claim: 'provisioner.storage.kubernetes.io/cloning-protection',
} as const;

/** The finalizer a source of this kind carries. */
export function sourceFinalizer(kind: 'VolumeSnapshot' | 'PersistentVolumeClaim'): string {
  return kind === 'VolumeSnapshot' ? SourceFinalizers.snapshot : SourceFinalizers.claim;
}

/**
 * The claim may still make its volume from its source: it is not being deleted, it names no
 * volume and its PV (`pvExists`) does not exist yet — as external-provisioner's sweep keeps the
 * finalizer while a Pending claim refers to the snapshot. Whether it has begun (volhook's
 * provisioning protection on) does not matter: one about to begin, whose item showed the source
 * protected already, goes on to CreateVolume without writing the finalizer again, so the
 * protection must not go from under it.
 */
export function claimMayMakeVolume(pvc: ClaimLike, pvExists: boolean): boolean {
  return !pvc.metadata?.deletionTimestamp && !pvc.spec?.volumeName && !pvExists;
}

/**
 * The source's finalizer is to go: the source carries it, and neither this claim (`selfHolds`)
 * nor any other claim referencing it (`holders`, by name) may still make a volume from it.
 */
export function sourceReleasable(
  source: { metadata?: { finalizers?: string[] | null } } | null | undefined,
  kind: 'VolumeSnapshot' | 'PersistentVolumeClaim',
  holders: readonly string[],
  selfHolds: boolean,
): boolean {
  if (!source?.metadata?.finalizers?.includes(sourceFinalizer(kind))) return false;
  return !selfHolds && holders.length === 0;
}
