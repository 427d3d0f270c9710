/**
 * The common snapshot controller's group part (external-snapshotter v8.6
 * `pkg/common-controller/groupsnapshot_controller_helper.go`) for the local stack, as a pure
 * step per VolumeGroupSnapshot: its content from the selected claims' PVs
 * (`groupsnapcontent-<uid>`, the bound finalizer on it); once the sidecar (volhook) recorded the
 * group's snapshots, a VolumeSnapshotContent per member with the group-handle annotation and the
 * recorded handle, and its VolumeSnapshot (`snapshot-`/`snapcontent-` + sha256(uid + volume
 * handle), owned by the group, bound to the content); the group's status from its content's.
 *
 * Deleting a group (`processGroupSnapshotWithDeletionTimestamp`): nothing while a claim is being
 * restored from a member (a Warning says so); then the group content marked
 * being-deleted and, Delete policy, deleted; each member's content marked and deleted (Delete)
 * and its snapshot let go and deleted; the group's finalizer removed once its content is gone
 * (or at once, Retain).
 *
 * Not here (refused with a message): a pre-provisioned group
 * (`spec.source.volumeGroupSnapshotContentName`) and a default group class.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/types.js';
import type { PersistentVolume, PersistentVolumeClaim } from './objects.js';
import { matchesLabelSelector, type LabelSelector } from './selectors.js';
import { ANN_SNAPSHOT_BEING_DELETED, binaryQuantity, nanosToTime, SNAPSHOT_API_VERSION, type VolumeSnapshot, type VolumeSnapshotContent } from './snapshot-objects.js';
import { hasFinalizer, setAnnotation, setFinalizer } from './objects.js';
import { beingRestored } from './snapshot-lookups.js';

export const GROUP_SNAPSHOT_API_VERSION = 'groupsnapshot.storage.k8s.io/v1';
export const GROUP_CONTENT_BOUND_FINALIZER = 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshotcontent-bound-protection';
export const SNAPSHOT_IN_GROUP_FINALIZER = 'snapshot.storage.kubernetes.io/volumesnapshot-in-group-protection';
export const GROUP_HANDLE_ANNOTATION = 'groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle';
export const GROUP_BOUND_FINALIZER = 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-bound-protection';
export const ANN_GROUP_BEING_DELETED = 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-being-deleted';

export interface VolumeGroupSnapshot extends KubeObject {
  spec: { volumeGroupSnapshotClassName?: string; source: { selector?: LabelSelector; volumeGroupSnapshotContentName?: string } };
  status?: { boundVolumeGroupSnapshotContentName?: string; creationTime?: string; readyToUse?: boolean; error?: { time?: string; message?: string }; [field: string]: unknown };
}

export interface VolumeGroupSnapshotContent extends KubeObject {
  spec: {
    driver: string;
    deletionPolicy: 'Delete' | 'Retain';
    volumeGroupSnapshotClassName?: string;
    volumeGroupSnapshotRef: { kind?: string; apiVersion?: string; namespace?: string; name?: string; uid?: string };
    source: { volumeHandles?: string[] };
  };
  status?: {
    volumeGroupSnapshotHandle?: string;
    creationTime?: string;
    readyToUse?: boolean;
    error?: { time?: string; message?: string };
    volumeSnapshotInfoList?: { volumeHandle?: string; snapshotHandle?: string; creationTime?: number; readyToUse?: boolean; restoreSize?: number }[];
  };
}

export interface VolumeGroupSnapshotClass extends KubeObject {
  driver: string;
  deletionPolicy: 'Delete' | 'Retain';
}

export interface GroupWorld {
  groupClass(name: string): VolumeGroupSnapshotClass | undefined;
  groupContent(name: string): VolumeGroupSnapshotContent | undefined;
  claims(namespace: string): PersistentVolumeClaim[];
  volume(name: string): PersistentVolume | undefined;
  volumes(): PersistentVolume[];
  snapshot(namespace: string, name: string): VolumeSnapshot | undefined;
  /** The VolumeSnapshots of a namespace (a group's members are those it owns). */
  snapshots(namespace: string): VolumeSnapshot[];
  content(name: string): VolumeSnapshotContent | undefined;
  now(): string;
}

export type GroupWrite =
  | { op: 'create'; resource: 'volumegroupsnapshotcontents' | 'volumesnapshotcontents' | 'volumesnapshots'; object: KubeObject }
  | { op: 'update'; resource: 'volumegroupsnapshots' | 'volumegroupsnapshotcontents' | 'volumesnapshotcontents' | 'volumesnapshots'; current: KubeObject; desired: KubeObject }
  | { op: 'delete'; resource: 'volumegroupsnapshotcontents' | 'volumesnapshotcontents' | 'volumesnapshots'; name: string; namespace?: string; uid: string };

export interface GroupEvent {
  object: VolumeGroupSnapshot;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface GroupStep {
  writes: GroupWrite[];
  events: GroupEvent[];
}

export const groupContentName = (group: VolumeGroupSnapshot) => `groupsnapcontent-${group.metadata.uid}`;
const memberHash = (group: VolumeGroupSnapshot, volumeHandle: string) => createHash('sha256').update(`${group.metadata.uid}${volumeHandle}`).digest('hex');
export const memberSnapshotName = (group: VolumeGroupSnapshot, volumeHandle: string) => `snapshot-${memberHash(group, volumeHandle)}`;
export const memberContentName = (group: VolumeGroupSnapshot, volumeHandle: string) => `snapcontent-${memberHash(group, volumeHandle)}`;

/** The group's error status with a Warning, once per message. */
function fail(group: VolumeGroupSnapshot, reason: string, message: string, now: string): GroupStep {
  if (group.status?.error?.message === message) return { writes: [], events: [] };
  const desired = structuredClone(group);
  desired.status = { ...desired.status, readyToUse: false, error: { time: now, message } };
  return { writes: [{ op: 'update', resource: 'volumegroupsnapshots', current: group, desired }], events: [{ object: group, type: 'Warning', reason, message }] };
}

/** Pure: the next writes for one VolumeGroupSnapshot. */
export function syncGroupSnapshot(world: GroupWorld, group: VolumeGroupSnapshot): GroupStep {
  const now = world.now();
  if (group.metadata.deletionTimestamp) return deleteGroup(world, group);
  const { source } = group.spec;
  if (source.volumeGroupSnapshotContentName !== undefined) {
    return fail(group, 'GroupSnapshotContentCheckandUpdateFailed', 'a pre-provisioned VolumeGroupSnapshot (spec.source.volumeGroupSnapshotContentName) is not supported by the local snapshot controller', now);
  }
  const className = group.spec.volumeGroupSnapshotClassName;
  if (!className) return fail(group, 'SetDefaultGroupSnapshotClassFailed', 'the local snapshot controller has no default VolumeGroupSnapshotClass: name one in spec.volumeGroupSnapshotClassName', now);
  const groupClass = world.groupClass(className);
  if (!groupClass) return fail(group, 'GetGroupSnapshotClassFailed', `Failed to get group snapshot class with error volumegroupsnapshotclass.groupsnapshot.storage.k8s.io "${className}" not found`, now);

  const contentName = groupContentName(group);
  const content = world.groupContent(contentName);
  if (!content) {
    const members = selectedVolumes(world, group, groupClass.driver);
    if ('error' in members) return fail(group, 'GroupSnapshotContentCreationFailed', members.error, now);
    const object: VolumeGroupSnapshotContent = {
      apiVersion: GROUP_SNAPSHOT_API_VERSION,
      kind: 'VolumeGroupSnapshotContent',
      metadata: { name: contentName, finalizers: [GROUP_CONTENT_BOUND_FINALIZER] } as unknown as KubeObject['metadata'],
      spec: {
        driver: groupClass.driver,
        deletionPolicy: groupClass.deletionPolicy,
        volumeGroupSnapshotClassName: className,
        volumeGroupSnapshotRef: { kind: 'VolumeGroupSnapshot', apiVersion: GROUP_SNAPSHOT_API_VERSION, namespace: group.metadata.namespace, name: group.metadata.name, uid: group.metadata.uid },
        source: { volumeHandles: members.handles },
      },
    };
    return { writes: [{ op: 'create', resource: 'volumegroupsnapshotcontents', object }], events: [] };
  }

  const writes: GroupWrite[] = [];
  if (!hasFinalizer(group, GROUP_BOUND_FINALIZER)) {
    const desired = structuredClone(group);
    setFinalizer(desired, GROUP_BOUND_FINALIZER, true);
    return { writes: [{ op: 'update', resource: 'volumegroupsnapshots', current: group, desired }], events: [] };
  }
  const info = content.status?.volumeSnapshotInfoList ?? [];
  const handle = content.status?.volumeGroupSnapshotHandle;
  let membersReady = info.length > 0;
  if (handle) {
    for (const member of info) {
      if (!member.volumeHandle || !member.snapshotHandle) {
        membersReady = false;
        continue;
      }
      membersReady = memberWrites(world, group, content, handle, member, writes) && membersReady;
    }
  }
  const status = group.status ?? {};
  const desiredStatus = {
    ...status,
    boundVolumeGroupSnapshotContentName: contentName,
    readyToUse: content.status?.readyToUse === true && membersReady,
    ...(content.status?.creationTime && { creationTime: content.status.creationTime }),
    ...(content.status?.error ? { error: content.status.error } : {}),
  };
  if (JSON.stringify(desiredStatus) !== JSON.stringify(status)) {
    writes.push({ op: 'update', resource: 'volumegroupsnapshots', current: group, desired: { ...structuredClone(group), status: desiredStatus } });
  }
  return { writes, events: [] };
}

/** The claims the selector picks, each Bound to a PV of the class's driver; their volume handles in claim-name order. */
function selectedVolumes(world: GroupWorld, group: VolumeGroupSnapshot, driver: string): { handles: string[] } | { error: string } {
  const selector = group.spec.source.selector;
  if (!selector) return { error: 'the VolumeGroupSnapshot names neither spec.source.selector nor spec.source.volumeGroupSnapshotContentName' };
  const claims = world
    .claims(group.metadata.namespace ?? '')
    .filter((c) => matchesLabelSelector(selector, c.metadata.labels ?? {}))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  if (claims.length === 0) return { error: 'the selector of the VolumeGroupSnapshot selects no PersistentVolumeClaim' };
  const handles: string[] = [];
  for (const claim of claims) {
    const pv = claim.spec.volumeName ? world.volume(claim.spec.volumeName) : undefined;
    const csi = pv?.spec.csi;
    if (!pv || claim.status?.phase !== 'Bound') return { error: `PersistentVolumeClaim ${claim.metadata.name} is not bound to a PersistentVolume yet` };
    if (csi?.driver !== driver || !csi.volumeHandle) return { error: `the PersistentVolume of claim ${claim.metadata.name} is not a volume of driver ${driver}` };
    handles.push(csi.volumeHandle);
  }
  return { handles };
}

/** The member's content and snapshot, created, bound and given their status; whether the member is ready. */
function memberWrites(
  world: GroupWorld,
  group: VolumeGroupSnapshot,
  groupContent: VolumeGroupSnapshotContent,
  groupHandle: string,
  member: { volumeHandle?: string; snapshotHandle?: string; creationTime?: number; readyToUse?: boolean; restoreSize?: number },
  writes: GroupWrite[],
): boolean {
  const volumeHandle = member.volumeHandle!;
  const namespace = group.metadata.namespace ?? '';
  const snapshotName = memberSnapshotName(group, volumeHandle);
  const contentName = memberContentName(group, volumeHandle);
  const content = world.content(contentName);
  const snapshot = world.snapshot(namespace, snapshotName);
  if (!content) {
    writes.push({
      op: 'create',
      resource: 'volumesnapshotcontents',
      object: {
        apiVersion: SNAPSHOT_API_VERSION,
        kind: 'VolumeSnapshotContent',
        metadata: { name: contentName, annotations: { [GROUP_HANDLE_ANNOTATION]: groupHandle } } as unknown as KubeObject['metadata'],
        spec: {
          volumeSnapshotRef: { kind: 'VolumeSnapshot', name: snapshotName, namespace },
          deletionPolicy: groupContent.spec.deletionPolicy,
          driver: groupContent.spec.driver,
          source: { volumeHandle },
        },
      } as VolumeSnapshotContent,
    });
  }
  if (!snapshot) {
    const pv = world.volumes().find((v) => v.spec.csi?.volumeHandle === volumeHandle);
    writes.push({
      op: 'create',
      resource: 'volumesnapshots',
      object: {
        apiVersion: SNAPSHOT_API_VERSION,
        kind: 'VolumeSnapshot',
        metadata: {
          name: snapshotName,
          namespace,
          finalizers: [SNAPSHOT_IN_GROUP_FINALIZER],
          ownerReferences: [{ apiVersion: GROUP_SNAPSHOT_API_VERSION, kind: 'VolumeGroupSnapshot', name: group.metadata.name, uid: group.metadata.uid }],
        } as unknown as KubeObject['metadata'],
        spec: { source: { persistentVolumeClaimName: pv?.spec.claimRef?.name ?? '' } },
      } as VolumeSnapshot,
    });
  }
  if (!content || !snapshot) return false;
  // The content bound to its snapshot, and the handle the group recorded.
  const wantedStatus = {
    ...content.status,
    snapshotHandle: member.snapshotHandle,
    volumeGroupSnapshotHandle: groupHandle,
    ...(member.creationTime !== undefined && { creationTime: member.creationTime }),
    ...(member.restoreSize !== undefined && { restoreSize: member.restoreSize }),
    // Kept once the sidecar said it: it checks the snapshot and writes readyToUse itself.
    readyToUse: content.status?.readyToUse === true || member.readyToUse === true,
  };
  const bound = content.spec.volumeSnapshotRef.uid === snapshot.metadata.uid;
  if (!bound || JSON.stringify(wantedStatus) !== JSON.stringify(content.status ?? {})) {
    const desired = structuredClone(content);
    desired.spec.volumeSnapshotRef = { ...desired.spec.volumeSnapshotRef, uid: snapshot.metadata.uid };
    desired.status = wantedStatus;
    writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: content, desired });
  }
  const ready = content.status?.readyToUse === true;
  const snapshotStatus = {
    ...snapshot.status,
    boundVolumeSnapshotContentName: contentName,
    volumeGroupSnapshotName: group.metadata.name,
    readyToUse: ready,
    ...(typeof content.status?.restoreSize === 'number' && { restoreSize: binaryQuantity(content.status.restoreSize) }),
    ...(typeof content.status?.creationTime === 'number' && { creationTime: nanosToTime(content.status.creationTime) }),
  };
  if (JSON.stringify(snapshotStatus) !== JSON.stringify(snapshot.status ?? {})) {
    writes.push({ op: 'update', resource: 'volumesnapshots', current: snapshot, desired: { ...structuredClone(snapshot), status: snapshotStatus } });
  }
  return ready;
}


/** Pure: the next writes for a group being deleted. */
function deleteGroup(world: GroupWorld, group: VolumeGroupSnapshot): GroupStep {
  const writes: GroupWrite[] = [];
  const content = world.groupContent(group.status?.boundVolumeGroupSnapshotContentName ?? groupContentName(group));
  const ours = content && content.spec.volumeGroupSnapshotRef.uid === group.metadata.uid ? content : undefined;
  const deleteContent = ours?.spec.deletionPolicy === 'Delete';
  const namespace = group.metadata.namespace ?? '';
  const members = world.snapshots(namespace).filter((s) => (s.metadata.ownerReferences as { kind?: string; uid?: string }[] | undefined)?.some((o) => o.kind === 'VolumeGroupSnapshot' && o.uid === group.metadata.uid));
  // As for a single VolumeSnapshot (isVolumeBeingCreatedFromSnapshot): while a claim is being
  // restored from a member, nothing of the group is deleted — its content's deletion would take
  // every snapshot of the group with it, the one being restored from too.
  const restoring = members.filter((m) => beingRestored(world, m)).map((m) => m.metadata.name);
  if (restoring.length > 0) {
    // The members' status still follows the content (the restore waits for its member to be ready).
    const writes: GroupWrite[] = [];
    const handle = content?.status?.volumeGroupSnapshotHandle;
    if (ours && handle) {
      for (const info of ours.status?.volumeSnapshotInfoList ?? []) {
        const existing = info.volumeHandle && members.some((m) => m.metadata.name === memberSnapshotName(group, info.volumeHandle!));
        if (existing && info.snapshotHandle) memberWrites(world, group, ours, handle, info, writes);
      }
    }
    return { writes, events: [{ object: group, type: 'Warning', reason: 'GroupSnapshotDeletePending', message: `Group snapshot member ${restoring.join(', ')} is being used to restore a PVC` }] };
  }
  for (const member of members) {
    const memberContent = member.status?.boundVolumeSnapshotContentName ? world.content(member.status.boundVolumeSnapshotContentName) : undefined;
    if (memberContent && !memberContent.metadata.deletionTimestamp) {
      if (memberContent.metadata.annotations?.[ANN_SNAPSHOT_BEING_DELETED] === undefined) {
        const desired = structuredClone(memberContent);
        setAnnotation(desired, ANN_SNAPSHOT_BEING_DELETED, 'yes');
        writes.push({ op: 'update', resource: 'volumesnapshotcontents', current: memberContent, desired });
      }
      if (memberContent.spec.deletionPolicy === 'Delete') writes.push({ op: 'delete', resource: 'volumesnapshotcontents', name: memberContent.metadata.name, uid: memberContent.metadata.uid });
    }
    if (hasFinalizer(member, SNAPSHOT_IN_GROUP_FINALIZER)) {
      const desired = structuredClone(member);
      setFinalizer(desired, SNAPSHOT_IN_GROUP_FINALIZER, false);
      writes.push({ op: 'update', resource: 'volumesnapshots', current: member, desired });
    }
    if (!member.metadata.deletionTimestamp) writes.push({ op: 'delete', resource: 'volumesnapshots', name: member.metadata.name, namespace, uid: member.metadata.uid });
  }
  if (ours && !ours.metadata.deletionTimestamp) {
    if (ours.metadata.annotations?.[ANN_GROUP_BEING_DELETED] === undefined) {
      const desired = structuredClone(ours);
      setAnnotation(desired, ANN_GROUP_BEING_DELETED, 'yes');
      writes.push({ op: 'update', resource: 'volumegroupsnapshotcontents', current: ours, desired });
    }
    if (deleteContent) writes.push({ op: 'delete', resource: 'volumegroupsnapshotcontents', name: ours.metadata.name, uid: ours.metadata.uid });
  }
  // The group goes once its content is gone (Delete) and its members are; at once when Retain.
  const contentGone = !ours || !deleteContent;
  if (writes.length === 0 && contentGone && members.length === 0 && hasFinalizer(group, GROUP_BOUND_FINALIZER)) {
    const desired = structuredClone(group);
    setFinalizer(desired, GROUP_BOUND_FINALIZER, false);
    writes.push({ op: 'update', resource: 'volumegroupsnapshots', current: group, desired });
  }
  return { writes, events: [] };
}
