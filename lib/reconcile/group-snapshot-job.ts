/**
 * The shell of a VolumeGroupSnapshotContent's reconcile: it observes what the pure decisions of
 * lib/reconcile/group-snapshot-content.ts ask for (the group's snapshots by its name, the member
 * volumes, the node they share with its root and mapped volumes), performs the step they choose
 * (CreateSnapshots, DeleteSnapshot) and turns their answers into the sidecar's writes: the
 * being-created mark, the status, Events, the bound finalizer.
 */
import {
  GroupSnapshotAnnotations,
  GroupSnapshotFinalizers,
  isGroupContentBeingDeleted,
  isReservedTagKey,
  type VolumeGroupSnapshotContent,
  type VolumeGroupSnapshotContentItem,
  type Write,
} from '../contract/index.js';
import type { Disk, Snapshot } from '../ec2/types.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { EventReasons, groupContentEvent } from './events.js';
import {
  decideGroupContent,
  decideGroupCreate,
  decideGroupDelete,
  recordedSnapshotIds,
  type GroupCreateObserved,
  type GroupDeleteObserved,
  type GroupNames,
  type GroupStatus,
  type NodeObserved,
} from './group-snapshot-content.js';
import type { GroupMember } from './group-snapshot.js';
import { exclusively } from './in-flight.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled } from './plan.js';
import { isOwnedSnapshot } from './snapshot-content.js';
import { dropAnnotation, dropFinalizer, ensureAnnotation, kubeTime } from './writes.js';

type CreateAction = Extract<Ec2Action, { verb: 'createSnapshots' | 'deleteSnapshot' }>;
type DeleteAction = Extract<Ec2Action, { verb: 'deleteSnapshot' }>;
type StatusWrite = Extract<Write, { op: 'updateVolumeGroupSnapshotContentStatus' }>;

const groupRef = (content: VolumeGroupSnapshotContent) => ({ kind: 'VolumeGroupSnapshotContent' as const, name: content.metadata.name, uid: content.metadata.uid });

function statusWrite(content: VolumeGroupSnapshotContent, status: StatusWrite['status']): Write {
  return { op: 'updateVolumeGroupSnapshotContentStatus', name: content.metadata.name, uid: content.metadata.uid, status };
}

/** Pure: the content refused for good: its status error and a Warning (once per message), the being-created mark removed. */
export function refuseGroup(content: VolumeGroupSnapshotContent, reason: string, message: string, now: Date): Settled {
  const writes: Write[] = [];
  if (content.status?.error?.message !== message) {
    writes.push(statusWrite(content, { error: { time: kubeTime(now), message }, readyToUse: false }));
    writes.push(groupContentEvent(content, 'Warning', EventReasons.groupSnapshotCreationFailed, message));
  }
  writes.push(...dropAnnotation(content, groupRef(content), GroupSnapshotAnnotations.beingCreated));
  return failed(reason, message, Requeue.failedSlow, writes);
}

/** Pure: the status recorded (when it changed), the mark removed; done once every member's snapshot is ready. */
function recordGroup(content: VolumeGroupSnapshotContent, status: GroupStatus, changed: boolean): Settled {
  const writes: Write[] = [
    ...(changed ? [statusWrite(content, { ...status, ...(content.status?.error ? { error: null } : {}) })] : []),
    ...dropAnnotation(content, groupRef(content), GroupSnapshotAnnotations.beingCreated),
  ];
  if (status.readyToUse) return done(writes);
  const pending = status.volumeSnapshotInfoList.filter((i) => !i.readyToUse).map((i) => i.snapshotHandle);
  return requeue(Requeue.snapshotPending, `the group's snapshots ${pending.join(', ')} are not completed yet`, writes);
}

/** The members as messages name them: the claim of each volume, else its PV, else the volume. */
export function groupMembers(item: VolumeGroupSnapshotContentItem, volumeHandles: readonly string[]): GroupMember[] {
  return volumeHandles.map((volumeId) => {
    const known = item.members.find((m) => m.volumeHandle === volumeId);
    const claim = known?.claim ? `${known.claim.namespace}/${known.claim.name}` : `of PV ${known?.persistentVolume ?? `(none) for volume ${volumeId}`}`;
    return { claim, volumeId };
  });
}

export async function reconcileGroupSnapshotContent(item: VolumeGroupSnapshotContentItem, scope: Scope): Promise<Settled> {
  const { content } = item;
  const names: GroupNames = { clusterId: scope.clusterId, driver: scope.driverName };
  if (content.spec.driver !== names.driver) return done();
  const now = scope.now();
  if (isGroupContentBeingDeleted(content)) return reconcileGroupDeletion(content, scope, names);
  const decision = decideGroupContent(content, item.groupSnapshotClass, names);
  switch (decision.kind) {
    case 'none':
      return done();
    case 'refuse':
      return refuseGroup(content, decision.reason, decision.message, now);
    case 'wait':
      return requeue(Requeue.waitForCluster, decision.message);
    case 'proceed':
      break;
  }
  const members = groupMembers(item, decision.volumeHandles);
  const marked = GroupSnapshotAnnotations.beingCreated in (content.metadata.annotations ?? {});
  const name = content.metadata.name;
  const tags = Object.fromEntries(Object.entries(scope.registration.extraTags).filter(([key]) => !isReservedTagKey(key)));
  const decideStep = (observed: GroupCreateObserved): Plan<CreateAction> | { observeNode: string } => {
    const step = decideGroupCreate(content, members, marked, tags, observed, names);
    switch (step.kind) {
      case 'none':
        return done();
      case 'refuse':
        return refuseGroup(content, step.reason, step.message, now);
      case 'wait':
        return requeue(Requeue.waitForCluster, step.message);
      case 'observeNode':
        return { observeNode: step.instanceId };
      case 'mark':
        // Write before act: no CreateSnapshots until the content cannot be deleted unseen.
        return requeue(Requeue.recorded, `marking group content ${name} before creating its snapshots`, ensureAnnotation(content, groupRef(content), GroupSnapshotAnnotations.beingCreated, 'yes'));
      case 'createSnapshots':
        return act({ verb: 'createSnapshots', request: step.request });
      case 'deleteSnapshot':
        return act({ verb: 'deleteSnapshot', snapshotId: step.snapshotId });
      case 'record':
        return recordGroup(content, step.status, step.changed);
    }
  };
  const observeNode = async (instanceId: string): Promise<NodeObserved> => {
    const instance = await scope.ec2.getInstance(instanceId);
    const volumeIds = [...new Set((instance?.mappings ?? []).map((m) => m.volumeId))];
    const attached = (await Promise.all(volumeIds.map((id) => scope.ec2.getDisk(id)))).filter((d): d is Disk => d !== undefined);
    return { instanceId, instance, attached, rootVolumeId: instance?.rootVolumeId };
  };
  // The decision asks for the node once it knows which one: observing means reading it too.
  const complete = async (observed: GroupCreateObserved): Promise<GroupCreateObserved> => {
    const step = decideStep(observed);
    return 'observeNode' in step ? { ...observed, node: await observeNode(step.observeNode) } : observed;
  };
  const inProgress = () => requeue(Requeue.inTransition, `CreateSnapshots for ${name} is already in progress`);
  return exclusively(`${scope.clusterId}/${name}`, () => converge<GroupCreateObserved, CreateAction>({
    observe: async () => {
      const [snapshots, disks] = await Promise.all([
        scope.ec2.findSnapshotsByName(name),
        Promise.all(members.map(async (m) => [m.volumeId, await scope.ec2.getDisk(m.volumeId)] as const)),
      ]);
      return complete({ snapshots, disks: new Map(disks) });
    },
    decide: (observed) => {
      const step = decideStep(observed);
      if ('observeNode' in step) return requeue(Requeue.recorded, `observing instance ${step.observeNode} again`);
      return step;
    },
    perform: async (action, observed) => {
      switch (action.verb) {
        case 'createSnapshots': {
          const made = await scope.ec2.createSnapshots(action.request);
          const found = await scope.ec2.findSnapshotsByName(name);
          const all = [...found, ...made.filter((s) => !found.some((f) => f.snapshotId === s.snapshotId))];
          // Made just now only when it was not there before this request looked.
          const created = made.filter((s) => !observed.snapshots.some((o) => o.snapshotId === s.snapshotId)).map((s) => s.snapshotId);
          return { ...observed, snapshots: all, created };
        }
        case 'deleteSnapshot':
          await scope.ec2.deleteSnapshot(action.snapshotId);
          return { ...observed, snapshots: observed.snapshots.filter((s) => s.snapshotId !== action.snapshotId) };
      }
    },
    refused: (action, _error, verdict) => {
      if (verdict.outcome !== 'failed' || action.verb === 'deleteSnapshot') return { writes: [], verdict };
      return refuseGroup(content, verdict.reason, `Failed to create group snapshot: ${verdict.message}`, now);
    },
  }), inProgress);
}

async function reconcileGroupDeletion(content: VolumeGroupSnapshotContent, scope: Scope, names: GroupNames): Promise<Settled> {
  const dynamic = !!content.spec.source.volumeHandles && !content.spec.source.groupSnapshotHandles;
  const recorded = recordedSnapshotIds(content);
  const observe = async (): Promise<GroupDeleteObserved> => {
    const [byId, byName] = await Promise.all([
      Promise.all(recorded.map((id) => scope.ec2.getSnapshot(id))),
      // A dynamic group's snapshots are found by its name too: ones a lost answer never recorded.
      dynamic ? scope.ec2.findSnapshotsByName(content.metadata.name) : Promise.resolve([]),
    ]);
    const all = new Map<string, Snapshot>();
    for (const s of [...byId, ...byName]) if (s) all.set(s.snapshotId, s);
    const snapshots = [...all.values()];
    return { owned: snapshots.filter((s) => isOwnedSnapshot(s, names.clusterId)), foreign: snapshots.find((s) => !isOwnedSnapshot(s, names.clusterId)) };
  };
  return converge<GroupDeleteObserved, DeleteAction>({
    observe,
    decide: (observed) => {
      const step = decideGroupDelete(content, observed, names);
      switch (step.kind) {
        case 'deleteSnapshot':
          return act({ verb: 'deleteSnapshot', snapshotId: step.snapshotId });
        case 'refuse':
          return failed(step.reason, step.message, Requeue.failedSlow, [groupContentEvent(content, 'Warning', EventReasons.groupSnapshotDeleteError, step.message)]);
        case 'release':
          // As the sidecar: the status cleared first, then the finalizer that held the content.
          return done([
            ...(step.clearStatus ? [statusWrite(content, { volumeGroupSnapshotHandle: null, creationTime: null, readyToUse: null, volumeSnapshotInfoList: null })] : []),
            ...(step.dropFinalizer ? dropFinalizer(content, groupRef(content), GroupSnapshotFinalizers.contentBound) : []),
          ]);
      }
    },
    perform: async (action, observed) => {
      await scope.ec2.deleteSnapshot(action.snapshotId);
      return { ...observed, owned: observed.owned.filter((s) => s.snapshotId !== action.snapshotId) };
    },
    refused: (_action, _error, verdict) =>
      verdict.outcome === 'done'
        ? { writes: [], verdict }
        : { writes: [groupContentEvent(content, 'Warning', EventReasons.groupSnapshotDeleteError, `Failed to delete group snapshot: ${verdict.message}`)], verdict },
  });
}
