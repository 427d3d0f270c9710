/**
 * The EBS tags a new volume gets, and what tags say about ownership. The keys are the
 * contract's vocabulary (`TagKeys`): ownership is what keeps one cluster's forged
 * volumeHandle or node from ever touching another cluster's disks.
 */
import { identityTags, isReservedTagKey, tagOwnership, TagKeys, type TagOwnership } from '../contract/index.js';
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
  /** The claim's allowed `tag.volhook.io/` annotations (./claim-tags.ts), already without configured or reserved keys. */
  claimTags?: Record<string, string>;
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
  const tags = Object.fromEntries(Object.entries({ ...input.claimTags, ...configured }).filter(([key]) => !isReservedTagKey(key)));
  return {
    ...tags,
    ...input.driverTags,
    ...identityTags(input.clusterId, input.pvName),
    [TagKeys.pvcName]: input.pvcName,
    [TagKeys.pvcNamespace]: input.pvcNamespace,
    [TagKeys.pvName]: input.pvName,
  };
}

/**
 * Whether the volume is the cluster's at all ({@link tagOwnership} not `foreign`): tagged
 * `kubernetes.io/cluster/<id>=owned`, and no `volhook.io/cluster` naming another cluster. One
 * that is may still need adopting before volhook acts on it ({@link notAdoptedProblem}).
 */
export function isOwnedDisk(disk: Disk, clusterId: string): boolean {
  return tagOwnership(disk.tags, clusterId).kind !== 'foreign';
}

/**
 * Whether volhook may change the volume: every tag of `clusterTags` — the cluster's
 * (`kubernetes.io/cluster/<id>=owned`), `ebs.csi.aws.com/cluster=true` and
 * `volhook.io/cluster=<id>`, the tags the function's IAM role requires on every change of an
 * existing volume (attach, detach, modify, retag, snapshot, copy, delete). Every volume volhook
 * creates has them; `cluster adopt` adds them to the disks of older PVs and to volhook's own
 * disks made before volumes carried `volhook.io/cluster`.
 */
export function isAdoptedDisk(disk: Disk, clusterId: string): boolean {
  return tagOwnership(disk.tags, clusterId).kind === 'owned';
}

/** Why a resource is not the cluster's at all, as its tags say ("not tagged kubernetes.io/cluster/<id>=owned", "tagged volhook.io/cluster=<other>"); undefined when it is. */
export function notOwnedWhy(tags: Readonly<Record<string, string>>, clusterId: string): string | undefined {
  const ownership = tagOwnership(tags, clusterId);
  return ownership.kind === 'foreign' ? ownership.why : undefined;
}

/** The adopt run that adds the missing tags, as every refusal names it. */
export const adoptCommand = (clusterId: string) => `npm run cluster -- adopt ${clusterId} --apply`;

/**
 * Why volhook may not `act` on a volume ("attach it to node …") that is the cluster's but
 * needs adopting ({@link tagOwnership} `needs-adopt`), in the words of the objects it acts for;
 * undefined when it may. For a volume that is not the cluster's at all, each caller says so in
 * its own words.
 */
export function notAdoptedProblem(disk: Disk, clusterId: string, act: string): string | undefined {
  return adoptionProblem({ kind: 'volume', id: disk.volumeId }, tagOwnership(disk.tags, clusterId), clusterId, act);
}

/**
 * The refusal of a resource that needs adopting, undefined for any other. Each names the adopt
 * run, which adds what the resource lacks: one made by volhook before `volhook.io/cluster`
 * existed lacks only that; one made outside volhook lacks `ebs.csi.aws.com/cluster=true` too
 * (for such a snapshot, the CreateTags that adds them is named first).
 */
export function adoptionProblem(resource: { kind: 'volume' | 'snapshot'; id: string }, ownership: TagOwnership, clusterId: string, act: string): string | undefined {
  if (ownership.kind !== 'needs-adopt') return undefined;
  const lacking = Object.entries(ownership.lacks);
  const { kind, id } = resource;
  if (lacking.length === 1 && lacking[0]![0] === TagKeys.volhookCluster) {
    return (
      `${kind} ${id} was made by volhook before ${kind} tags carried ${TagKeys.volhookCluster}; ` +
      `run \`${adoptCommand(clusterId)}\` to tag it (nothing was done: volhook does not ${act} without ${TagKeys.volhookCluster}=${clusterId})`
    );
  }
  const tags = lacking.map(([key, value]) => `${key}=${value}`);
  const named = tags.length === 1 ? `the tag ${tags[0]}` : `the tags ${tags.slice(0, -1).join(', ')} and ${tags.at(-1)}`;
  if (kind === 'volume') {
    return (
      `volume ${id} is cluster "${clusterId}"'s (${TagKeys.cluster(clusterId)}=owned) but not adopted: it lacks ${named}, ` +
      `without which EC2 does not let volhook ${act}; adopt it with \`${adoptCommand(clusterId)}\``
    );
  }
  // A snapshot taken elsewhere, named by a pre-provisioned content: the one call that tags it.
  const createTags = lacking.map(([key, value]) => `Key=${key},Value=${value}`).join(' ');
  return (
    `snapshot ${id} is cluster "${clusterId}"'s but lacks ${named}, without which EC2 does not let volhook ${act}; ` +
    `tag it (\`aws ec2 create-tags --resources ${id} --tags ${createTags}\`, or \`${adoptCommand(clusterId)}\`)`
  );
}

/** Whether the instance is one of the cluster's nodes: tag `kubernetes.io/cluster/<id>` = owned | shared. */
export function isClusterInstance(instance: Instance, clusterId: string): boolean {
  const value = instance.tags[TagKeys.cluster(clusterId)];
  return value === 'owned' || value === 'shared';
}
