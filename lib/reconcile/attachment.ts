/** What attach and detach share: which volume, which instance, and whether both are ours. */
import { isProvisionedBy, type NodeInfo, type PersistentVolume, type VolumeAttachment } from '../contract/index.js';
import type { Disk, DiskAttachment, Instance } from '../ec2/types.js';
import { ebsVolumeIdOf, TranslationError } from '../migration/index.js';
import { nodeInstanceId } from './node.js';
import { isClusterInstance, isOwnedDisk } from './tags.js';

/**
 * The PV's EBS volume ID, when the PV is a volume of our driver: its CSI handle, or the volume
 * ID of an in-tree `awsElasticBlockStore` PV read as CSI migration reads it (`aws://<zone>/vol-…`
 * → `vol-…`). Undefined for any other PV, and for an in-tree one whose ID is malformed
 * ({@link volumeHandleProblem} says why).
 */
export function volumeHandleOf(pv: PersistentVolume, driverName: string): string | undefined {
  try {
    return ebsVolumeIdOf(pv, driverName);
  } catch (error) {
    if (error instanceof TranslationError) return undefined;
    throw error;
  }
}

/** Why the PV has no volume ID of our driver (for a PV {@link volumeHandleOf} gives none). */
export function volumeHandleProblem(pv: PersistentVolume, driverName: string): string {
  try {
    ebsVolumeIdOf(pv, driverName);
  } catch (error) {
    if (error instanceof TranslationError) return `PersistentVolume "${pv.metadata.name}": failed to translate in tree pv to CSI: ${error.message}`;
    throw error;
  }
  return `PersistentVolume "${pv.metadata.name}" has no ${driverName} volumeHandle`;
}

/**
 * The disk of a VolumeAttachment of an inline volume, as external-attacher reads it: the
 * `volumeHandle` of `spec.source.inlineVolumeSpec.csi` when that names our driver (the
 * attach/detach controller writes there the CSI translation of a pod's inline
 * `awsElasticBlockStore` volume: `aws://<zone>/vol-…` already read as `vol-…`). Undefined
 * otherwise ({@link inlineVolumeProblem} says why).
 */
export function inlineVolumeHandleOf(va: VolumeAttachment, driverName: string): string | undefined {
  const csi = va.spec.source.inlineVolumeSpec?.csi;
  return csi && csi.driver === driverName && csi.volumeHandle ? csi.volumeHandle : undefined;
}

/** Why an inline VolumeAttachment has no volume of our driver (for one {@link inlineVolumeHandleOf} gives none). */
export function inlineVolumeProblem(va: VolumeAttachment, driverName: string): string {
  const csi = va.spec.source.inlineVolumeSpec?.csi;
  if (!csi) return `the VolumeAttachment's inlineVolumeSpec has no csi source (an untranslated in-tree inlineVolumeSpec is not supported)`;
  if (csi.driver !== driverName) return `the VolumeAttachment's inlineVolumeSpec is of driver "${csi.driver}", not ${driverName}`;
  return `the VolumeAttachment's inlineVolumeSpec has no ${driverName} volumeHandle`;
}

/**
 * The disk a VolumeAttachment names: its PV's volume ID ({@link volumeHandleOf}), or for an
 * inline volume its inline spec's handle. Undefined when it names neither (or its PV is gone).
 */
export function attachmentVolumeIdOf(va: VolumeAttachment, pv: PersistentVolume | null, driverName: string): string | undefined {
  if (va.spec.source.persistentVolumeName) return pv ? volumeHandleOf(pv, driverName) : undefined;
  return inlineVolumeHandleOf(va, driverName);
}

/**
 * The name the PV's volume is tagged with when volhook provisioned it (`CSIVolumeName` is the
 * PV's name): the gateway looks the volume up with the request's claims by that name, and by
 * ID only if it is not there. Undefined for any other PV: looked up by ID alone.
 */
export function volumeNameOf(pv: PersistentVolume | null | undefined, provisionerName: string): string | undefined {
  return pv && isProvisionedBy(pv, provisionerName) ? pv.metadata.name : undefined;
}

export function instanceIdOf(node: NodeInfo | null): string | undefined {
  return node ? nodeInstanceId(node) : undefined;
}

/** The disk's attachment to `instanceId`, unless it is over (`detached`). */
export function attachmentOn(disk: Disk, instanceId: string): DiskAttachment | undefined {
  return disk.attachments.find((a) => a.instanceId === instanceId && a.state !== 'detached');
}

/**
 * Why this cluster may not attach `disk` to `instance` or detach it from there, if it may not:
 * the volume must be the cluster's (`isOwnedDisk`: tagged `kubernetes.io/cluster/<id>=owned`, no
 * `volhook.io/cluster` naming another) and the instance be one of the
 * cluster's. This is what keeps a forged volumeHandle or node from reaching another cluster.
 */
export function ownershipProblem(disk: Disk, instance: Instance, clusterId: string): string | undefined {
  if (!isOwnedDisk(disk, clusterId)) return `volume ${disk.volumeId} is not owned by cluster "${clusterId}"`;
  if (!isClusterInstance(instance, clusterId)) return `instance ${instance.instanceId} does not belong to cluster "${clusterId}"`;
  return undefined;
}
