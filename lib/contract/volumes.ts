/**
 * Rules about PersistentVolumes that the forwarder (over client-node objects) and the backend
 * (over the contract's zod types) must apply alike. They take the narrowest shape both satisfy.
 */
import { Annotations } from './wellknown.js';

export interface VolumeLike {
  metadata?: { annotations?: Record<string, string> };
  spec?: { persistentVolumeReclaimPolicy?: string; csi?: { driver?: string } };
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

/** A volume we provisioned, or one naming our driver (statically provisioned). */
export function isOurVolume(pv: VolumeLike, ownership: Ownership): boolean {
  return isProvisionedBy(pv, ownership.provisioner) || pv.spec?.csi?.driver === ownership.driver;
}
