/** What attach and detach share: which volume, which instance, and whether both are ours. */
import type { NodeInfo, PersistentVolume } from '../contract/index.js';
import type { Disk, DiskAttachment, Instance } from '../ec2/types.js';
import { nodeInstanceId } from './node.js';
import { isClusterInstance, isOwnedDisk } from './tags.js';

/** The PV's EBS volume ID, when the PV is a volume of our driver. */
export function volumeHandleOf(pv: PersistentVolume, driverName: string): string | undefined {
  return pv.spec.csi?.driver === driverName ? pv.spec.csi.volumeHandle || undefined : undefined;
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
 * the volume must be tagged `kubernetes.io/cluster/<id>=owned` and the instance be one of the
 * cluster's. This is what keeps a forged volumeHandle or node from reaching another cluster.
 */
export function ownershipProblem(disk: Disk, instance: Instance, clusterId: string): string | undefined {
  if (!isOwnedDisk(disk, clusterId)) return `volume ${disk.volumeId} is not owned by cluster "${clusterId}"`;
  if (!isClusterInstance(instance, clusterId)) return `instance ${instance.instanceId} does not belong to cluster "${clusterId}"`;
  return undefined;
}
