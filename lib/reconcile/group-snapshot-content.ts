/**
 * A VolumeGroupSnapshotContent of our driver: the csi-snapshotter sidecar's group job
 * (external-snapshotter `pkg/sidecar-controller/groupsnapshot_helper.go`), against EC2, as pure
 * decisions over what was observed. Each returns one step; the shell (to come: the group
 * content's item, its forwarder watch and writes) observes, performs the step and asks again.
 *
 * - Create (`spec.source.volumeHandles`): the members must all be attached to one of the
 *   cluster's nodes (lib/reconcile/group-snapshot.ts), else the content is refused with a
 *   message and no EC2 mutation. Then write before act: the being-created mark, and only once it
 *   is seen applied one CreateSnapshots of the node's volumes less the root and the non-members.
 *   CreateSnapshots takes no ClientToken: every snapshot of the group carries the identity tags
 *   with the group content's name (`CSIVolumeSnapshotName`), so the group is looked up by that
 *   name before creating and on every retry and a lost answer never makes a second set.
 * - Record: per member, the oldest snapshot of its volume found by the name; the status as the
 *   sidecar writes it (the handle is the group content's name, the name the snapshots are found
 *   by); ready once every member's snapshot is `completed`. A younger duplicate this request
 *   made, or a snapshot of a volume that is not a member (attached between look and act), was
 *   never recorded: it is deleted at once.
 * - Delete (Delete policy, the sidecar's `shouldDeleteGroupSnapshotContent`): every snapshot of
 *   the group this cluster owns, recorded or found by the name; never another cluster's. Then
 *   the status is cleared and the finalizer removed. Retain: the finalizer only.
 * - Not implemented, refused with a message naming it: a pre-provisioned group content
 *   (`spec.source.groupSnapshotHandles`) and any VolumeGroupSnapshotClass parameter.
 */
import {
  GroupSnapshotAnnotations,
  GroupSnapshotFinalizers,
  type VolumeGroupSnapshotClass,
  type VolumeGroupSnapshotContent,
} from '../contract/group-snapshots.js';
import type { CreateSnapshotsRequest, Disk, Instance, Snapshot } from '../ec2/types.js';
import { groupInstance, groupRequest, type GroupMember, type GroupRefusal } from './group-snapshot.js';
import { isOwnedSnapshot, snapshotStatus } from './snapshot-content.js';
import { notOwnedWhy } from './tags.js';

/** The status the sidecar writes on a group content once its snapshots exist. */
export interface GroupStatus {
  volumeGroupSnapshotHandle: string;
  /** RFC 3339, to the second. */
  creationTime: string;
  readyToUse: boolean;
  volumeSnapshotInfoList: GroupMemberStatus[];
}

/** One member's snapshot in the group's status, as the sidecar writes it. */
export type GroupMemberStatus = {
  volumeHandle: string;
  snapshotHandle: string;
  /** Nanoseconds since the epoch, to the second. */
  creationTime: number;
  readyToUse: boolean;
  /** Bytes. */
  restoreSize: number;
};

export type GroupCreateStep =
  /** Nothing for the sidecar to do (another driver's content, ready already). */
  | { kind: 'none' }
  /** The content's final error: status error, a Warning, the being-created mark removed. */
  | GroupRefusal
  /** The class is not known (yet): ask again later, no write. */
  | { kind: 'wait'; message: string }
  /** The members share this instance: observe it (its volumes, its root) and ask again. */
  | { kind: 'observeNode'; instanceId: string }
  /** Write before act: the being-created mark first, seen applied before CreateSnapshots. */
  | { kind: 'mark' }
  | { kind: 'createSnapshots'; request: CreateSnapshotsRequest }
  /** A snapshot this request made that no one recorded, or of a non-member volume: delete it now. */
  | { kind: 'deleteSnapshot'; snapshotId: string; why: string }
  /** The status (written when `changed`), the mark removed; done when `ready`, else ask again. */
  | { kind: 'record'; status: GroupStatus; changed: boolean; ready: boolean };

export interface NodeObserved {
  instanceId: string;
  instance: Instance | undefined;
  /** The volumes attached to the instance, members or not. */
  attached: Disk[];
  rootVolumeId: string | undefined;
}

export interface GroupCreateObserved {
  /** The cluster's snapshots tagged with the group content's name, oldest first. */
  snapshots: Snapshot[];
  /** Each member's volume by ID; undefined when EC2 has none. */
  disks: ReadonlyMap<string, Disk | undefined>;
  /** The node the members share, once observed. */
  node?: NodeObserved;
  /** The snapshots this request's CreateSnapshots made (never recorded anywhere). */
  created?: readonly string[];
}

export interface GroupNames {
  clusterId: string;
  driver: string;
}

const refuse = (reason: string, message: string): GroupRefusal => ({ kind: 'refuse', reason, message });

/** Pure: whether the sidecar has anything to create or record for the content, and with which class. */
export function decideGroupContent(
  content: VolumeGroupSnapshotContent,
  groupClass: VolumeGroupSnapshotClass | null,
  names: GroupNames,
): { kind: 'none' } | GroupRefusal | { kind: 'wait'; message: string } | { kind: 'proceed'; volumeHandles: string[] } {
  if (content.spec.driver !== names.driver) return { kind: 'none' };
  // Marked: the group may still land, so it is looked up (and the mark removed) even now.
  const marked = GroupSnapshotAnnotations.beingCreated in (content.metadata.annotations ?? {});
  if (content.metadata.deletionTimestamp && !marked) return { kind: 'none' };
  if (content.status?.readyToUse === true && !marked) return { kind: 'none' };
  const { source } = content.spec;
  if (source.groupSnapshotHandles) {
    return refuse('NotImplemented', 'a pre-provisioned VolumeGroupSnapshotContent (spec.source.groupSnapshotHandles) is not supported by volhook yet; only dynamic group snapshots');
  }
  const volumeHandles = source.volumeHandles ?? [];
  if (volumeHandles.length === 0) return refuse('InvalidContent', 'the content names neither spec.source.volumeHandles nor spec.source.groupSnapshotHandles');
  // As the sidecar: a final error recorded is not tried again.
  if (content.status?.error?.message && !content.status.volumeGroupSnapshotHandle) return refuse('GroupSnapshotCreationFailed', content.status.error.message);
  const className = content.spec.volumeGroupSnapshotClassName;
  if (!className) return refuse('NoGroupSnapshotClass', `failed to take group snapshot ${content.metadata.name} without a group snapshot class`);
  if (!groupClass || groupClass.metadata.name !== className) return { kind: 'wait', message: `VolumeGroupSnapshotClass "${className}" of the content is not known (yet)` };
  if (groupClass.driver !== names.driver) {
    return refuse('InvalidGroupSnapshotClass', `VolumeGroupSnapshotClass "${className}" is for driver "${groupClass.driver}", not "${names.driver}"`);
  }
  const parameters = Object.keys(groupClass.parameters ?? {}).filter((key) => !key.startsWith('csi.storage.k8s.io/')).sort();
  if (parameters.length > 0) {
    return refuse('InvalidParameter', `VolumeGroupSnapshotClass "${className}" parameter ${parameters.map((p) => `"${p}"`).join(', ')} is not supported by volhook's group snapshots`);
  }
  return { kind: 'proceed', volumeHandles };
}

/**
 * Pure: the next step for a dynamic group content with nothing recorded yet. `members` are the
 * content's volume handles with the claims they stand for (as messages name them); `marked` is
 * whether the being-created mark is on the content; `tags` the snapshots' tags besides the
 * identity tags.
 */
export function decideGroupCreate(
  content: VolumeGroupSnapshotContent,
  members: readonly GroupMember[],
  marked: boolean,
  tags: Record<string, string>,
  observed: GroupCreateObserved,
  names: GroupNames,
): GroupCreateStep {
  if (observed.snapshots.length > 0) return decideFound(content, members, observed, names);
  const placement = groupInstance(members, observed.disks, names.clusterId);
  if (placement.kind === 'refuse') return placement;
  const { node } = observed;
  if (!node || node.instanceId !== placement.instanceId) return { kind: 'observeNode', instanceId: placement.instanceId };
  const plan = groupRequest(members, node.instance, node.attached, node.rootVolumeId, names.clusterId);
  if (plan.kind === 'refuse') return plan;
  if (!marked) return { kind: 'mark' };
  return { kind: 'createSnapshots', request: { name: content.metadata.name, instanceId: plan.instanceId, excludeDataVolumeIds: plan.excludeDataVolumeIds, tags } };
}

/** Pure: the group's snapshots were found by its name: clean up what no one recorded, then record. */
function decideFound(content: VolumeGroupSnapshotContent, members: readonly GroupMember[], observed: GroupCreateObserved, names: GroupNames): GroupCreateStep {
  const foreign = observed.snapshots.find((s) => !isOwnedSnapshot(s, names.clusterId));
  if (foreign) {
    return refuse('NotOwned', `snapshot ${foreign.snapshotId} named ${content.metadata.name} is not owned by cluster "${names.clusterId}" (${notOwnedWhy(foreign.tags, names.clusterId)}); volhook uses only its cluster's snapshots`);
  }
  const memberVolumes = new Set(members.map((m) => m.volumeId));
  const winners = new Map<string, Snapshot>();
  for (const s of observed.snapshots) if (memberVolumes.has(s.volumeId) && !winners.has(s.volumeId)) winners.set(s.volumeId, s);
  const created = new Set(observed.created ?? []);
  for (const s of observed.snapshots) {
    if (!memberVolumes.has(s.volumeId)) return { kind: 'deleteSnapshot', snapshotId: s.snapshotId, why: `snapshot ${s.snapshotId} is of volume ${s.volumeId}, not a member of the group` };
    if (created.has(s.snapshotId) && winners.get(s.volumeId) !== s) {
      return { kind: 'deleteSnapshot', snapshotId: s.snapshotId, why: `snapshot ${s.snapshotId} duplicates the group's older snapshot of volume ${s.volumeId}` };
    }
  }
  const missing = members.filter((m) => !winners.has(m.volumeId));
  if (missing.length > 0) {
    return refuse('IncompleteGroup', `the group's snapshots named ${content.metadata.name} lack the volume ${missing.map((m) => `${m.volumeId} (claim ${m.claim})`).join(', ')}: not recorded as a group`);
  }
  const failedOne = [...winners.values()].find((s) => s.state === 'error');
  if (failedOne) return refuse('SnapshotFailed', `snapshot ${failedOne.snapshotId} of volume ${failedOne.volumeId} failed${failedOne.stateMessage ? `: ${failedOne.stateMessage}` : ''}`);
  const status = groupStatus(content.metadata.name, members.map((m) => winners.get(m.volumeId)!));
  const current = content.status ?? {};
  const changed =
    current.volumeGroupSnapshotHandle !== status.volumeGroupSnapshotHandle ||
    current.readyToUse !== status.readyToUse ||
    current.creationTime !== status.creationTime ||
    !!current.error ||
    JSON.stringify(current.volumeSnapshotInfoList ?? []) !== JSON.stringify(status.volumeSnapshotInfoList);
  return { kind: 'record', status, changed, ready: status.readyToUse };
}

/**
 * Pure: the group content's status for its members' snapshots, in the members' order. Each
 * member's fields are those a VolumeSnapshotContent gets (`snapshotStatus`); the group's
 * creation time is its oldest snapshot's start, to the second (a metav1.Time).
 */
export function groupStatus(handle: string, snapshots: readonly Snapshot[]): GroupStatus {
  const infos = snapshots.map((s) => {
    const { snapshotHandle, creationTime, restoreSize, readyToUse } = snapshotStatus(s);
    return { volumeHandle: s.volumeId, snapshotHandle, creationTime, readyToUse, restoreSize };
  });
  const oldest = Math.min(...snapshots.map((s) => Math.floor(Date.parse(s.startTime) / 1000)));
  return {
    volumeGroupSnapshotHandle: handle,
    creationTime: new Date(oldest * 1000).toISOString().replace('.000Z', 'Z'),
    readyToUse: infos.length > 0 && infos.every((i) => i.readyToUse),
    volumeSnapshotInfoList: infos,
  };
}

export interface GroupDeleteObserved {
  /** Snapshots of the group (recorded in its status, or tagged with its name) that still exist and this cluster owns. */
  owned: Snapshot[];
  /** One of them another cluster owns, or nobody: never deleted. */
  foreign: Snapshot | undefined;
}

export type GroupDeleteStep =
  | { kind: 'deleteSnapshot'; snapshotId: string }
  | GroupRefusal
  /** Nothing left in EC2: clear the status (when it records any) and drop the bound finalizer. */
  | { kind: 'release'; clearStatus: boolean; dropFinalizer: boolean };

/** Pure: the next step for a group content the sidecar is to delete (`isGroupContentBeingDeleted`). */
export function decideGroupDelete(content: VolumeGroupSnapshotContent, observed: GroupDeleteObserved, names: GroupNames): GroupDeleteStep {
  const dropFinalizer = (content.metadata.finalizers ?? []).includes(GroupSnapshotFinalizers.contentBound);
  if (content.spec.deletionPolicy !== 'Delete') return { kind: 'release', clearStatus: false, dropFinalizer };
  if (observed.foreign) {
    return refuse('NotOwned', `snapshot ${observed.foreign.snapshotId} is not owned by cluster "${names.clusterId}" (${notOwnedWhy(observed.foreign.tags, names.clusterId)}); not deleting it`);
  }
  const [next] = observed.owned;
  if (next) return { kind: 'deleteSnapshot', snapshotId: next.snapshotId };
  const status = content.status;
  const clearStatus = !!status && (!!status.volumeGroupSnapshotHandle || status.readyToUse != null || !!status.creationTime || (status.volumeSnapshotInfoList?.length ?? 0) > 0);
  return { kind: 'release', clearStatus, dropFinalizer };
}

/** The snapshot IDs a group content records, to be looked up before deleting. */
export function recordedSnapshotIds(content: VolumeGroupSnapshotContent): string[] {
  return (content.status?.volumeSnapshotInfoList ?? []).flatMap((i) => (i.snapshotHandle ? [i.snapshotHandle] : []));
}
