/**
 * The EBS tag vocabulary: the keys volhook writes on volumes and reads on volumes and
 * instances, and the keys no configuration may set. Ownership tags are what keep one
 * cluster's forged volumeHandle or node from ever touching another cluster's disks.
 */

export const TagKeys = {
  /** The CSI volume name, `pvc-<uid>`: how a retry finds the volume it created. */
  csiVolumeName: 'CSIVolumeName',
  /** The snapshot's name (the VolumeSnapshotContent's): how a retry finds the snapshot it created. */
  csiVolumeSnapshotName: 'CSIVolumeSnapshotName',
  /** What the IAM policy scopes CreateVolume and every mutating call to. */
  ebsCluster: 'ebs.csi.aws.com/cluster',
  /**
   * The cluster's name as the EBS CSI driver (v1.58 on) writes it from `--k8s-tag-cluster-id`:
   * what AWS's cluster-scoped managed policy for the driver fences every call by. volhook writes
   * the cluster id, so a cluster handed back to the driver (`cluster release`) under that policy
   * can still act on the disks and snapshots volhook made.
   */
  ebsClusterName: 'ebs.csi.aws.com/cluster-name',
  /** `owned` on volumes this cluster created; `owned` or `shared` on its instances. */
  cluster: (clusterId: string) => `kubernetes.io/cluster/${clusterId}`,
  pvcName: 'kubernetes.io/created-for/pvc/name',
  pvcNamespace: 'kubernetes.io/created-for/pvc/namespace',
  pvName: 'kubernetes.io/created-for/pv/name',
  /**
   * The cluster id in a tag *value*, which IAM can compare with the session's
   * `aws:PrincipalTag/volhook-cluster` (a condition key cannot hold a variable, so
   * `kubernetes.io/cluster/<id>` cannot be fenced by IAM). On every disk and snapshot volhook
   * creates or adopts; the EC2 role's policy allows nothing on a resource without it.
   */
  volhookCluster: 'volhook.io/cluster',
} as const;

/**
 * The tags of each cluster's STS session (sts:TagSession), which the EC2 role's policy reads
 * as `aws:PrincipalTag/<key>`: the cluster id, and the value its nodes carry under the
 * deployment's node tag key (only when the registration names one).
 */
export const SessionTagKeys = {
  cluster: 'volhook-cluster',
  nodes: 'volhook-nodes',
} as const;

/**
 * The instance tag a deployment's EC2 role fences AttachVolume/DetachVolume by (comparing it with
 * the session's `volhook-nodes`), unless `VOLHOOK_NODE_TAG_KEY` names another: EKS tags every
 * node it launches with the cluster's name under this key.
 */
export const DEFAULT_NODE_TAG_KEY = 'eks:cluster-name';

/**
 * The tags a volume is found and owned by: the two that the look-up by name filters on, the
 * one the IAM policy requires on CreateVolume, and the cluster id IAM compares with the
 * session's. Every volume volhook creates has them, whatever else it is tagged with.
 */
export function identityTags(clusterId: string, volumeName: string): Record<string, string> {
  return {
    [TagKeys.csiVolumeName]: volumeName,
    ...clusterTags(clusterId),
    ...handBackTags(clusterId),
  };
}

/**
 * The tags a snapshot is found and owned by, as for volumes: its name, the cluster's
 * ownership, the tag the IAM policy requires on CreateSnapshot and DeleteSnapshot, and the
 * cluster id IAM compares with the session's.
 */
export function snapshotIdentityTags(clusterId: string, snapshotName: string): Record<string, string> {
  return {
    [TagKeys.csiVolumeSnapshotName]: snapshotName,
    ...clusterTags(clusterId),
    ...handBackTags(clusterId),
  };
}

/**
 * The tags the EBS CSI driver needs to act on a disk or snapshot once the cluster is handed back
 * to it under AWS's cluster-scoped policy: `ebs.csi.aws.com/cluster-name=<cluster id>`. On every
 * disk and snapshot volhook creates, and added by `cluster adopt`; volhook itself never requires
 * it ({@link tagOwnership} does not read it), so disks made before it was written are not refused.
 */
export function handBackTags(clusterId: string): Record<string, string> {
  return { [TagKeys.ebsClusterName]: clusterId };
}

/**
 * The identity tags that are the same on every disk and snapshot of a cluster, whatever its
 * name: ownership, the IAM scope, the cluster id in a value. What {@link tagOwnership} requires
 * and `cluster adopt` adds.
 */
export function clusterTags(clusterId: string): Record<string, string> {
  return {
    [TagKeys.ebsCluster]: 'true',
    [TagKeys.cluster(clusterId)]: 'owned',
    [TagKeys.volhookCluster]: clusterId,
  };
}

/**
 * What a disk's or snapshot's tags say about cluster `clusterId`'s hold on it:
 * - `owned`: every tag of {@link clusterTags}, exactly — volhook may act on it;
 * - `needs-adopt`: the cluster's (`kubernetes.io/cluster/<id>=owned`, no other cluster named
 *   in `volhook.io/cluster`) but short of a tag `cluster adopt` adds — `volhook.io/cluster` on
 *   one made (or adopted) before volumes carried it, `ebs.csi.aws.com/cluster=true` on one made
 *   outside volhook. Found by the look-ups (they filter on the Kubernetes tag), never acted on:
 *   IAM would refuse it, and acting on it would be acting on a guess;
 * - `foreign`: not the cluster's — no `kubernetes.io/cluster/<id>=owned`, or a
 *   `volhook.io/cluster` naming anything but the id.
 * `volhook.io/cluster` is read in any case (IAM matches tag keys case-insensitively, so a
 * `Volhook.io/Cluster=<other>` beside the right one could be what IAM compares): any spelling
 * with another value makes the resource foreign, and only the exact key counts as carrying it.
 */
export type TagOwnership =
  | { kind: 'owned' }
  | { kind: 'needs-adopt'; lacks: Record<string, string> }
  | { kind: 'foreign'; why: string };

export function tagOwnership(tags: Readonly<Record<string, string>>, clusterId: string): TagOwnership {
  const volhookKey = TagKeys.volhookCluster.toLowerCase();
  const claimed = Object.entries(tags).find(([key, value]) => key.toLowerCase() === volhookKey && value !== clusterId);
  if (claimed) return { kind: 'foreign', why: `tagged ${claimed[0]}=${claimed[1]}` };
  if (tags[TagKeys.cluster(clusterId)] !== 'owned') return { kind: 'foreign', why: `not tagged ${TagKeys.cluster(clusterId)}=owned` };
  const wanted = clusterTags(clusterId);
  const lacks = Object.fromEntries(Object.entries(wanted).filter(([key, value]) => tags[key] !== value));
  return Object.keys(lacks).length === 0 ? { kind: 'owned' } : { kind: 'needs-adopt', lacks };
}

/**
 * Tag keys no StorageClass, registration or CLI option may set, because volhook (or AWS)
 * owns them:
 * - `CSIVolumeName` finds a volume again after a retry; `CSIVolumeSnapshotName` does the same
 *   for snapshots (the reference driver reserves both).
 * - `ebs.csi.aws.com/…` holds `ebs.csi.aws.com/cluster=true`, the tag the IAM policy scopes
 *   every mutating call to, and `ebs.csi.aws.com/cluster-name`, the one AWS's cluster-scoped
 *   policy for the driver fences by; letting a class set either would let it widen or break
 *   that scope.
 * - `kubernetes.io…` carries cluster ownership and the created-for PVC/PV names.
 * - `volhook.io/…` holds `volhook.io/cluster=<id>`, what IAM fences each cluster's session by.
 * - `aws:` is refused by EC2 itself.
 * Compared case-insensitively: IAM matches tag keys case-insensitively, so a look-alike key
 * in another case would collide in exactly the place that matters.
 */
export const RESERVED_TAG_KEYS = {
  exact: ['CSIVolumeName', 'CSIVolumeSnapshotName'],
  prefixes: ['kubernetes.io', 'ebs.csi.aws.com/', 'volhook.io/', 'aws:'],
} as const;

/** EC2's limits on a tag, in Unicode characters. */
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 256;

/** The reserved keys as a message names them: `CSIVolumeName, …, aws:*`. */
export const RESERVED_TAG_KEYS_TEXT = [...RESERVED_TAG_KEYS.exact, ...RESERVED_TAG_KEYS.prefixes.map((p) => `${p}*`)].join(', ');

/** Whether a tag with this key may not be configured (see {@link RESERVED_TAG_KEYS}). */
export function isReservedTagKey(key: string): boolean {
  const lower = key.toLowerCase();
  return (
    RESERVED_TAG_KEYS.exact.some((reserved) => reserved.toLowerCase() === lower) ||
    RESERVED_TAG_KEYS.prefixes.some((prefix) => lower.startsWith(prefix.toLowerCase()))
  );
}
