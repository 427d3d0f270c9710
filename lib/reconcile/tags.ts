/**
 * The EBS tags a new volume gets, and what tags say about ownership. The keys are the
 * contract's vocabulary (`TagKeys`): ownership is what keeps one cluster's forged
 * volumeHandle or node from ever touching another cluster's disks.
 */
import { identityTags, isReservedTagKey, TagKeys } from '../contract/index.js';
import type { Disk, Instance } from '../ec2/types.js';

export interface VolumeTagsInput {
  clusterId: string;
  pvName: string;
  pvcName: string;
  pvcNamespace: string;
  /** From the StorageClass's `tagSpecification_N`. */
  classTags: Record<string, string>;
  /** The cluster registration's `extraTags`. */
  extraTags: Record<string, string>;
  /**
   * Tags the EBS CSI driver derives from StorageClass parameters (`ebs.csi.aws.com/IOPSPerGb`,
   * `ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify`): reserved keys, so volhook's to write.
   */
  driverTags?: Record<string, string>;
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
    ...input.driverTags,
    ...identityTags(input.clusterId, input.pvName),
    [TagKeys.pvcName]: input.pvcName,
    [TagKeys.pvcNamespace]: input.pvcNamespace,
    [TagKeys.pvName]: input.pvName,
  };
}

/** Whether the cluster created this volume: tag `kubernetes.io/cluster/<id>=owned`. */
export function isOwnedDisk(disk: Disk, clusterId: string): boolean {
  return disk.tags[TagKeys.cluster(clusterId)] === 'owned';
}

/**
 * Whether volhook may change the volume: the cluster's (`isOwnedDisk`) and tagged
 * `ebs.csi.aws.com/cluster=true`, the tag the function's IAM role requires on every change of
 * an existing volume (attach, detach, modify, retag, snapshot, copy, delete). Every volume
 * volhook creates has both; `cluster adopt` adds them to the disks of older PVs.
 */
export function isAdoptedDisk(disk: Disk, clusterId: string): boolean {
  return isOwnedDisk(disk, clusterId) && disk.tags[TagKeys.ebsCluster] === 'true';
}

/**
 * Why volhook may not `act` on a volume of its cluster ("attach it to node …"), in the words
 * of the objects it acts for, when the volume is owned but not adopted; undefined when it may.
 * For a volume that is not the cluster's at all, each caller says so in its own words.
 */
export function notAdoptedProblem(disk: Disk, clusterId: string, act: string): string | undefined {
  if (!isOwnedDisk(disk, clusterId) || isAdoptedDisk(disk, clusterId)) return undefined;
  return (
    `volume ${disk.volumeId} is cluster "${clusterId}"'s (${TagKeys.cluster(clusterId)}=owned) but not adopted: it lacks the tag ` +
    `${TagKeys.ebsCluster}=true, without which EC2 does not let volhook ${act}; ` +
    `adopt it with \`npm run cluster -- adopt ${clusterId} --apply\``
  );
}

/** Whether the instance is one of the cluster's nodes: tag `kubernetes.io/cluster/<id>` = owned | shared. */
export function isClusterInstance(instance: Instance, clusterId: string): boolean {
  const value = instance.tags[TagKeys.cluster(clusterId)];
  return value === 'owned' || value === 'shared';
}
