/**
 * Rules about PersistentVolumes that the forwarder (over client-node objects) and the backend
 * (over the contract's zod types) must apply alike. They take the narrowest shape both satisfy.
 */
import { Annotations, EBS_DRIVER, IN_TREE_EBS_PLUGIN } from './wellknown.js';

export interface VolumeLike {
  metadata?: { annotations?: Record<string, string> };
  spec?: { persistentVolumeReclaimPolicy?: string; csi?: { driver?: string }; awsElasticBlockStore?: unknown };
}

/** Who volhook is in a cluster: the provisioner name StorageClasses use and the CSI driver PVs name. */
export interface Ownership {
  /** The provisioner name StorageClasses use (`ebs.csi.aws.com`). */
  provisioner: string;
  /** The CSI driver named in PVs and VolumeAttachments (`ebs.csi.aws.com`). */
  driver: string;
}

/**
 * The reclaim policy a PV gets when it names none. The API server defaults an unset policy to
 * Retain, so a PV that was not written by a provisioner is never deleted by default.
 */
export const DEFAULT_RECLAIM_POLICY = 'Retain';

/** The PV's reclaim policy; unset means {@link DEFAULT_RECLAIM_POLICY}. */
export function reclaimPolicy(pv: VolumeLike): string {
  return pv.spec?.persistentVolumeReclaimPolicy ?? DEFAULT_RECLAIM_POLICY;
}

/** The PV was provisioned by `provisioner` (annotation `pv.kubernetes.io/provisioned-by`). */
export function isProvisionedBy(pv: VolumeLike, provisioner: string): boolean {
  return pv.metadata?.annotations?.[Annotations.provisionedBy] === provisioner;
}

/**
 * The provisioner names whose PVs ours takes as its own: itself and, for the EBS CSI driver,
 * the in-tree plugin it took over by CSI migration (external-provisioner's "additional
 * provisioner names" with `--supports-migration-from-in-tree`).
 */
export function knownProvisioners(ownership: Ownership): string[] {
  return ownership.provisioner === EBS_DRIVER ? [ownership.provisioner, IN_TREE_EBS_PLUGIN] : [ownership.provisioner];
}

/** The PV has an in-tree EBS source, which the EBS CSI driver serves under CSI migration. */
export function isInTreeEbs(pv: VolumeLike): boolean {
  return pv.spec?.awsElasticBlockStore !== undefined && pv.spec.awsElasticBlockStore !== null;
}

/**
 * A dynamically provisioned PV of ours: `provisioned-by` one of our {@link knownProvisioners},
 * or migrated to our driver (`pv.kubernetes.io/migrated-to`, which the PV controller writes
 * on PVs the in-tree plugin provisioned). These get the provisioner finalizer while Bound
 * with the Delete policy.
 */
export function isDynamicallyOurs(pv: VolumeLike, ownership: Ownership): boolean {
  const annotations = pv.metadata?.annotations ?? {};
  const provisionedBy = annotations[Annotations.provisionedBy];
  return (provisionedBy !== undefined && knownProvisioners(ownership).includes(provisionedBy)) || isMigratedToUs(pv, ownership);
}

function isMigratedToUs(pv: VolumeLike, ownership: Ownership): boolean {
  const migratedTo = pv.metadata?.annotations?.[Annotations.migratedTo];
  return migratedTo !== undefined && (migratedTo === ownership.driver || knownProvisioners(ownership).includes(migratedTo));
}

/**
 * A PV whose disk is ours to delete when it is Released with the Delete policy —
 * external-provisioner's `isProvisionerForVolume`: with `provisioned-by`, one of our known
 * provisioners or migrated to us; without (statically created), a CSI source naming our
 * driver, or migrated to us. A static in-tree PV is never migrated (the PV controller marks
 * only provisioned ones), so its disk is never deleted.
 */
export function isReclaimedByUs(pv: VolumeLike, ownership: Ownership): boolean {
  if (pv.metadata?.annotations?.[Annotations.provisionedBy] !== undefined) return isDynamicallyOurs(pv, ownership);
  if (pv.spec?.csi) return pv.spec.csi.driver === ownership.driver;
  return isMigratedToUs(pv, ownership);
}

/**
 * A PV volhook looks after: one whose disk it reclaims ({@link isReclaimedByUs}), or one it
 * attaches — a CSI source naming our driver, or, for the EBS CSI driver, an in-tree EBS source
 * (external-attacher attaches those through CSI migration and keeps its finalizer on them).
 */
export function isOurVolume(pv: VolumeLike, ownership: Ownership): boolean {
  return (
    isReclaimedByUs(pv, ownership) ||
    pv.spec?.csi?.driver === ownership.driver ||
    (ownership.driver === EBS_DRIVER && isInTreeEbs(pv))
  );
}
