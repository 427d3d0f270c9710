/**
 * The EBS CSI node plugin's part of a resize, as the kubelet drives it (NodeExpandVolume): a
 * claim whose disk has grown (`allocatedResourceStatuses.storage: NodeResizePending`) and
 * whose volume is mounted by a Running pod gets its filesystem grown — here, nothing to grow
 * but the claim's status, as the kubelet's `MarkFSResizeFinished` writes it: the capacity is
 * the PV's, the resize conditions and the storage resize status are gone. Pure.
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from './objects.js';
import { isDeleting, podClaimNames } from './objects.js';

export const NODE_RESIZE_PENDING = 'NodeResizePending';
const RESIZE_CONDITIONS = ['Resizing', 'FileSystemResizePending', 'NodeResizeError'];

/** The claims a pod's node expansion waits on: those in NodeResizePending. */
export function awaitsNodeExpansion(claim: PersistentVolumeClaim): boolean {
  const statuses = claim.status?.allocatedResourceStatuses as Record<string, string> | undefined;
  return statuses?.storage === NODE_RESIZE_PENDING;
}

export interface NodeExpansionInput {
  claim: PersistentVolumeClaim;
  volume: PersistentVolume | undefined;
  /** Pods in the claim's namespace. */
  pods: readonly Pod[];
}

/** The claim's status after its filesystem grew, or undefined while there is nothing to do. */
export function nodeExpansion({ claim, volume, pods }: NodeExpansionInput): PersistentVolumeClaim['status'] | undefined {
  if (!awaitsNodeExpansion(claim) || !volume || claim.spec.volumeName !== volume.metadata.name) return undefined;
  const mounted = pods.some(
    (pod) => pod.status?.phase === 'Running' && !isDeleting(pod) && podClaimNames(pod).includes(claim.metadata.name),
  );
  if (!mounted) return undefined;
  const statuses = { ...((claim.status?.allocatedResourceStatuses ?? {}) as Record<string, string>) };
  delete statuses.storage;
  const status: NonNullable<PersistentVolumeClaim['status']> = {
    ...claim.status,
    capacity: { ...(claim.status?.capacity ?? {}), storage: String(volume.spec.capacity?.storage ?? '') },
    conditions: ((claim.status?.conditions ?? []) as { type?: string }[]).filter((c) => !RESIZE_CONDITIONS.includes(c.type ?? '')),
  };
  if (Object.keys(statuses).length > 0) status.allocatedResourceStatuses = statuses;
  else delete status.allocatedResourceStatuses;
  if ((status.conditions as unknown[]).length === 0) delete status.conditions;
  return status;
}
