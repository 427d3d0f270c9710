/**
 * The EBS tags that make a volume findable and owned. Ownership is what keeps one cluster's
 * forged volumeHandle or node from ever touching another cluster's disks.
 */
import type { Disk, Instance } from '../ec2/types.js';
import { isReservedTagKey } from '../storageclass/index.js';

export const TagKeys = {
  /** The CSI volume name, `pvc-<uid>`: how a retry finds the volume it created. */
  csiVolumeName: 'CSIVolumeName',
  /** What the IAM policy scopes CreateVolume and every mutating call to. */
  ebsCluster: 'ebs.csi.aws.com/cluster',
  /** `owned` on volumes this cluster created; `owned` or `shared` on its instances. */
  cluster: (clusterId: string) => `kubernetes.io/cluster/${clusterId}`,
  pvcName: 'kubernetes.io/created-for/pvc/name',
  pvcNamespace: 'kubernetes.io/created-for/pvc/namespace',
  pvName: 'kubernetes.io/created-for/pv/name',
} as const;

export interface VolumeTagsInput {
  clusterId: string;
  pvName: string;
  pvcName: string;
  pvcNamespace: string;
  /** From the StorageClass's `tagSpecification_N`. */
  classTags: Record<string, string>;
  /** The cluster registration's `extraTags`. */
  extraTags: Record<string, string>;
}

/**
 * Every tag a new volume is created with. The class's and the registration's tags come first
 * and lose any reserved key (`CSIVolumeName`, `kubernetes.io…`, `ebs.csi.aws.com/…`, `aws:`):
 * an extra tag `kubernetes.io/cluster/<other>=owned` would hand the volume to another
 * cluster, so reserved keys are volhook's alone, whatever the configuration says.
 */
export function volumeTags(input: VolumeTagsInput): Record<string, string> {
  const configured = { ...input.extraTags, ...input.classTags };
  const tags = Object.fromEntries(Object.entries(configured).filter(([key]) => !isReservedTagKey(key)));
  return {
    ...tags,
    [TagKeys.csiVolumeName]: input.pvName,
    [TagKeys.ebsCluster]: 'true',
    [TagKeys.cluster(input.clusterId)]: 'owned',
    [TagKeys.pvcName]: input.pvcName,
    [TagKeys.pvcNamespace]: input.pvcNamespace,
    [TagKeys.pvName]: input.pvName,
  };
}

/** Whether the cluster created this volume: tag `kubernetes.io/cluster/<id>=owned`. */
export function isOwnedDisk(disk: Disk, clusterId: string): boolean {
  return disk.tags[TagKeys.cluster(clusterId)] === 'owned';
}

/** Whether the instance is one of the cluster's nodes: tag `kubernetes.io/cluster/<id>` = owned | shared. */
export function isClusterInstance(instance: Instance, clusterId: string): boolean {
  const value = instance.tags[TagKeys.cluster(clusterId)];
  return value === 'owned' || value === 'shared';
}
