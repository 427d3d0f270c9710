/**
 * The rule of a group snapshot (VolumeGroupSnapshot): one EC2 CreateSnapshots, which takes a
 * crash-consistent set of the volumes attached to ONE instance. A group whose volumes are not
 * all attached to one of the cluster's nodes is refused, with a message that says so, before
 * any EC2 call: volhook never takes a set of independent snapshots and calls it a group.
 *
 * Pure decisions; the reconcile that observes the disks and the instance and calls EC2 is their
 * shell.
 */
import type { Disk, Instance } from '../ec2/types.js';
import { isClusterInstance, notAdoptedProblem, notOwnedWhy } from './tags.js';

/** "You can specify up to 40 volume IDs per request" (InstanceSpecification.ExcludeDataVolumeIds). */
export const MAX_EXCLUDED_DATA_VOLUMES = 40;

/** One member of the group: the claim it stands for (as messages name it) and its volume. */
export interface GroupMember {
  claim: string;
  volumeId: string;
}

export type GroupRefusal = { kind: 'refuse'; reason: string; message: string };

const refuse = (reason: string, message: string): GroupRefusal => ({ kind: 'refuse', reason, message });
const NONE_TAKEN = 'no snapshot was taken';

/**
 * Pure: the one instance every member's volume is attached to (`attached`), or why there is
 * none. A multi-attach volume counts for each instance it is attached to.
 */
export function groupInstance(members: readonly GroupMember[], disks: ReadonlyMap<string, Disk | undefined>, clusterId: string): { kind: 'instance'; instanceId: string } | GroupRefusal {
  if (members.length === 0) return refuse('EmptyGroup', `the group selects no claims: ${NONE_TAKEN}`);
  const byInstance = new Map<string, string[]>();
  const unattached: string[] = [];
  for (const member of members) {
    const disk = disks.get(member.volumeId);
    if (!disk || disk.state === 'deleting' || disk.state === 'deleted') {
      return refuse('VolumeNotFound', `the volume ${member.volumeId} of claim ${member.claim} does not exist: ${NONE_TAKEN}`);
    }
    const foreign = notOwnedWhy(disk.tags, clusterId);
    if (foreign) return refuse('NotOwned', `the volume ${member.volumeId} of claim ${member.claim} is not cluster "${clusterId}"'s (${foreign}): ${NONE_TAKEN}`);
    const unadopted = notAdoptedProblem(disk, clusterId, 'snapshot it');
    if (unadopted) return refuse('NotAdopted', unadopted);
    const instances = disk.attachments.filter((a) => a.state === 'attached').map((a) => a.instanceId);
    if (instances.length === 0) unattached.push(member.claim);
    for (const instanceId of instances) byInstance.set(instanceId, [...(byInstance.get(instanceId) ?? []), member.claim]);
  }
  if (unattached.length > 0) {
    return refuse(
      'NotAttached',
      `the volumes of ${list(unattached)} are not attached to any node; EC2 takes a crash-consistent group (CreateSnapshots) only of the volumes attached to one instance, so every claim of the group must be in use on one node: ${NONE_TAKEN}`,
    );
  }
  const common = [...byInstance].filter(([, claims]) => claims.length === members.length).map(([id]) => id).sort();
  if (common.length === 0) {
    const where = [...byInstance].map(([id, claims]) => `${id} (${list(claims)})`).join(', ');
    return refuse(
      'NotOneNode',
      `the claims of the group are attached to different nodes: ${where}; EC2 takes a crash-consistent group (CreateSnapshots) only of the volumes attached to one instance, and volhook does not take independent snapshots and call them a group: ${NONE_TAKEN}`,
    );
  }
  return { kind: 'instance', instanceId: common[0]! };
}

/**
 * Pure: the CreateSnapshots request for the group on `instance`: the root volume left out
 * (ExcludeBootVolume), every other volume attached there that is not a member in
 * ExcludeDataVolumeIds; or why it cannot be made (an instance not the cluster's node, more other
 * volumes than EC2 lets a request exclude).
 */
export function groupRequest(
  members: readonly GroupMember[],
  instance: Instance | undefined,
  attachedThere: readonly Disk[],
  rootVolumeId: string | undefined,
  clusterId: string,
): { kind: 'create'; instanceId: string; excludeDataVolumeIds: string[] } | GroupRefusal {
  if (!instance) return refuse('NodeGone', `the instance the group's volumes are attached to no longer exists: ${NONE_TAKEN}`);
  if (!isClusterInstance(instance, clusterId)) {
    return refuse('NotClusterNode', `instance ${instance.instanceId} is not a node of cluster "${clusterId}": ${NONE_TAKEN}`);
  }
  const wanted = new Set(members.map((m) => m.volumeId));
  const exclude = attachedThere
    .filter((d) => !wanted.has(d.volumeId) && d.volumeId !== rootVolumeId && d.attachments.some((a) => a.instanceId === instance.instanceId))
    .map((d) => d.volumeId)
    .sort();
  if (exclude.length > MAX_EXCLUDED_DATA_VOLUMES) {
    return refuse(
      'TooManyOtherVolumes',
      `instance ${instance.instanceId} has ${exclude.length} other data volumes attached, more than the ${MAX_EXCLUDED_DATA_VOLUMES} one CreateSnapshots may exclude: ${NONE_TAKEN}`,
    );
  }
  return { kind: 'create', instanceId: instance.instanceId, excludeDataVolumeIds: exclude };
}

function list(claims: readonly string[]): string {
  const quoted = claims.map((c) => `claim ${c}`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}
