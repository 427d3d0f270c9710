/** Whether a snapshot is the cluster's, and whether volhook may act on it: read at the resource, before every mutation. */
import { tagOwnership } from '../contract/index.js';
import type { Snapshot } from '../ec2/types.js';
import { adoptionProblem } from './tags.js';

/**
 * Whether the snapshot is the cluster's at all, as for volumes (`isOwnedDisk`): tagged
 * `kubernetes.io/cluster/<id>=owned`, and no `volhook.io/cluster` naming another cluster.
 */
export function isOwnedSnapshot(snapshot: Snapshot, clusterId: string): boolean {
  return tagOwnership(snapshot.tags, clusterId).kind !== 'foreign';
}

/**
 * Why volhook may not `act` on a snapshot of its cluster: it lacks `volhook.io/cluster` (taken
 * before snapshots carried it) or `ebs.csi.aws.com/cluster=true` (the IAM role restores from,
 * deletes and fast-restores only snapshots tagged so; every snapshot volhook takes has it, one
 * made elsewhere and named by a pre-provisioned content may not) — `cluster adopt` adds them;
 * undefined when it may, or when the snapshot is not the cluster's at all.
 */
export function snapshotNotAdoptedProblem(snapshot: Snapshot, clusterId: string, act: string): string | undefined {
  return adoptionProblem({ kind: 'snapshot', id: snapshot.snapshotId }, tagOwnership(snapshot.tags, clusterId), clusterId, act);
}
