/**
 * A VolumeSnapshotContent of our driver: the csi-snapshotter sidecar's job
 * (external-snapshotter `pkg/sidecar-controller`), against EC2.
 *
 * - Dynamic (`spec.source.volumeHandle`): the being-created annotation is written (and seen
 *   applied) before CreateSnapshot — write before act, so the content is not deleted while a
 *   snapshot may still land. CreateSnapshot has no ClientToken: the snapshot is looked up by its
 *   name tag (`CSIVolumeSnapshotName` = the content's name, owned by this cluster) before
 *   creating and on every retry, so a lost answer never makes a second one. Two requests that
 *   created at once both see both snapshots: the oldest is the content's, and the request that
 *   made a younger one deletes it at once (it was never recorded anywhere). The status is then
 *   written as the sidecar writes it, and the annotation removed.
 * - Pre-provisioned (`spec.source.snapshotHandle`): the snapshot must exist and be this
 *   cluster's, else the content is refused with the reason.
 * - A member of a group snapshot (the common controller's group-handle annotation): no
 *   CreateSnapshot ever; once the controller recorded its snapshot handle, checked as a
 *   pre-provisioned one's (and of the content's volume).
 * - Deletion (the sidecar's `shouldDelete`): Delete → DeleteSnapshot of the content's snapshots
 *   that this cluster owns (never another's), then the status is cleared and the bound
 *   finalizer removed; Retain → the finalizer only, EC2 untouched.
 */
import {
  isContentBeingDeleted,
  isOurContent,
  isReservedTagKey,
  SnapshotAnnotations,
  snapshotCopyOf,
  SNAPSHOT_COPY_ANNOTATION,
  SnapshotFinalizers,
  type SnapshotCopyRecord,
  type VolumeSnapshotContent,
  type VolumeSnapshotContentItem,
  type Write,
} from '../contract/index.js';
import { Ec2Error, isGone, type Disk, type Snapshot } from '../ec2/types.js';
import { copyFailed, copyIntent, decideCopy, refusedCopy, splitCopies, type CopyAction, type CopyObserved } from './snapshot-copy.js';
import { ParameterError, snapshotSpecFor, type SnapshotSpec } from '../storageclass/index.js';
import type { Scope } from './context.js';
import { converge } from './converge.js';
import { exclusively } from './in-flight.js';
import { contentEvent, EventReasons } from './events.js';
import { Requeue } from './outcomes.js';
import { act, done, failed, requeue, type Ec2Action, type Plan, type Settled, type Verdict } from './plan.js';
import { isOwnedDisk, notAdoptedProblem, notOwnedWhy } from './tags.js';
import { contentRef, dropAnnotation, dropFinalizer, ensureAnnotation, kubeTime } from './writes.js';

type CreateAction = Extract<Ec2Action, { verb: 'createSnapshot' | 'deleteSnapshot' | 'enableFastSnapshotRestores' }>;
type DeleteAction = Extract<Ec2Action, { verb: 'deleteSnapshot' | 'deleteSnapshotIn' }>;

const GiB = 2 ** 30;

import { isOwnedSnapshot, snapshotNotAdoptedProblem } from './snapshot-ownership.js';

export { isOwnedSnapshot, snapshotNotAdoptedProblem };

/**
 * The status fields the sidecar writes for a snapshot: `creationTime` in nanoseconds (to the
 * second, which a JSON number holds exactly), `restoreSize` in bytes, `readyToUse` once EC2
 * says `completed`.
 */
export function snapshotStatus(snapshot: Snapshot) {
  return {
    snapshotHandle: snapshot.snapshotId,
    creationTime: Math.floor(Date.parse(snapshot.startTime) / 1000) * 1e9,
    restoreSize: snapshot.sizeGiB * GiB,
    readyToUse: snapshot.state === 'completed',
  };
}

function statusWrite(content: VolumeSnapshotContent, status: Extract<Write, { op: 'updateVolumeSnapshotContentStatus' }>['status']): Write {
  return { op: 'updateVolumeSnapshotContentStatus', name: content.metadata.name, uid: content.metadata.uid, status };
}

interface Names {
  clusterId: string;
  now: Date;
}

/** Pure: the content refused, its status and an Event saying why; the being-created mark goes (a final answer). */
function refuse(content: VolumeSnapshotContent, reason: string, message: string, names: Names, eventReason: string = EventReasons.snapshotCreationFailed): Settled {
  const writes: Write[] = [];
  if (content.status?.error?.message !== message) {
    writes.push(statusWrite(content, { error: { time: kubeTime(names.now), message }, readyToUse: false }));
    writes.push(contentEvent(content, 'Warning', eventReason, message));
  }
  writes.push(...dropAnnotation(content, contentRef(content), SnapshotAnnotations.beingCreated));
  return failed(reason, message, Requeue.failedSlow, writes);
}

/** Pure: the status for `snapshot`, the being-created mark removed; done once ready. */
function record(content: VolumeSnapshotContent, snapshot: Snapshot): Settled {
  const status = snapshotStatus(snapshot);
  const current = content.status ?? {};
  const unchanged =
    current.snapshotHandle === status.snapshotHandle &&
    current.readyToUse === status.readyToUse &&
    current.creationTime === status.creationTime &&
    current.restoreSize === status.restoreSize &&
    !current.error;
  const writes: Write[] = [
    ...(unchanged ? [] : [statusWrite(content, { ...status, ...(status.readyToUse && current.error ? { error: null } : {}) })]),
    ...dropAnnotation(content, contentRef(content), SnapshotAnnotations.beingCreated),
  ];
  if (status.readyToUse) return done(writes);
  return requeue(Requeue.snapshotPending, `snapshot ${snapshot.snapshotId} is ${snapshot.state}${snapshot.progress ? ` (${snapshot.progress})` : ''}`, writes);
}

export interface CreateObserved {
  /** The snapshots tagged with the content's name, oldest first. */
  snapshots: Snapshot[];
  /** The source volume; undefined when EC2 has none. */
  volume: Disk | undefined;
  /** A snapshot this request created (so never recorded anywhere yet). */
  created?: string;
  fastRestoreEnabled?: boolean;
}

/** Pure: the next step for a dynamic content with no snapshot recorded. */
export function decideCreate(content: VolumeSnapshotContent, spec: SnapshotSpec, request: { name: string; volumeId: string; tags: Record<string, string> }, observed: CreateObserved, names: Names): Plan<CreateAction> {
  const [winner] = observed.snapshots;
  if (!winner) {
    const { volume } = observed;
    if (!volume || isGone(volume)) return refuse(content, 'VolumeNotFound', `failed to take snapshot of the volume ${request.volumeId}: the volume does not exist`, names);
    if (!isOwnedDisk(volume, names.clusterId)) {
      return refuse(content, 'NotOwned', `failed to take snapshot of the volume ${request.volumeId}: it is not owned by cluster "${names.clusterId}"`, names);
    }
    const unadopted = notAdoptedProblem(volume, names.clusterId, `take a snapshot of it for VolumeSnapshotContent "${content.metadata.name}"`);
    if (unadopted) return refuse(content, 'NotAdopted', `failed to take snapshot of the volume ${request.volumeId}: ${unadopted}`, names);
    return act({ verb: 'createSnapshot', request });
  }
  // A younger duplicate this request made while another request made the oldest: delete it.
  if (observed.created && observed.created !== winner.snapshotId) return act({ verb: 'deleteSnapshot', snapshotId: observed.created });
  // Found by its name, so no second one is taken; but one volhook may not act on is not recorded either.
  if (!isOwnedSnapshot(winner, names.clusterId)) {
    return refuse(content, 'NotOwned', `snapshot ${winner.snapshotId} named ${request.name} is not owned by cluster "${names.clusterId}" (${notOwnedWhy(winner.tags, names.clusterId)}); volhook uses only its cluster's snapshots`, names);
  }
  const unadopted = snapshotNotAdoptedProblem(winner, names.clusterId, `record it for VolumeSnapshotContent "${content.metadata.name}"`);
  // Not the content's final error: once adopted, the next reconcile records the snapshot.
  if (unadopted) return failed('NotAdopted', unadopted, Requeue.failedSlow, [contentEvent(content, 'Warning', EventReasons.snapshotCreationFailed, unadopted)]);
  if (winner.volumeId !== request.volumeId) {
    return refuse(content, 'AlreadyExists', `snapshot ${request.name} already exists for a different volume (${winner.volumeId})`, names);
  }
  if (winner.state === 'error') {
    return refuse(content, 'SnapshotFailed', `snapshot ${winner.snapshotId} of volume ${request.volumeId} failed${winner.stateMessage ? `: ${winner.stateMessage}` : ''}`, names);
  }
  if (spec.fastSnapshotRestoreZones.length > 0 && !observed.fastRestoreEnabled) {
    return act({ verb: 'enableFastSnapshotRestores', snapshotId: winner.snapshotId, zones: spec.fastSnapshotRestoreZones });
  }
  return record(content, winner);
}

export interface DeleteObserved {
  /** Snapshots of the content that still exist and this cluster owns. */
  owned: Snapshot[];
  /** A snapshot of the content (recorded, or tagged with its name) another cluster owns, or nobody: never deleted. */
  foreign: Snapshot | undefined;
  /** Its cross-Region copy's Region and what is there of it, when it has one: deleted first, each checked as the snapshot is. */
  copies?: { region: string; owned: Snapshot[]; foreign: Snapshot | undefined };
}

/** Pure: the next step for a content whose snapshot is to be deleted (Delete policy): its copy first, then the snapshot. */
export function decideDelete(content: VolumeSnapshotContent, { owned, foreign, copies }: DeleteObserved, names: Names): Plan<DeleteAction> {
  if (copies?.foreign) {
    const message = `the copy ${copies.foreign.snapshotId} in ${copies.region} is not owned by cluster "${names.clusterId}"; not deleting it`;
    return failed('NotOwned', message, Requeue.failedSlow, [contentEvent(content, 'Warning', EventReasons.snapshotDeleteError, message)]);
  }
  const [copy] = copies?.owned ?? [];
  const copyUnadopted = copy && snapshotNotAdoptedProblem(copy, names.clusterId, 'delete it');
  if (copyUnadopted) return failed('NotAdopted', copyUnadopted, Requeue.failedSlow, [contentEvent(content, 'Warning', EventReasons.snapshotDeleteError, copyUnadopted)]);
  if (copy && copies) return act({ verb: 'deleteSnapshotIn', region: copies.region, snapshotId: copy.snapshotId });
  if (foreign) {
    const message = `snapshot ${foreign.snapshotId} is not owned by cluster "${names.clusterId}"; not deleting it`;
    return failed('NotOwned', message, Requeue.failedSlow, [contentEvent(content, 'Warning', EventReasons.snapshotDeleteError, message)]);
  }
  const [next] = owned;
  const unadopted = next && snapshotNotAdoptedProblem(next, names.clusterId, 'delete it');
  if (unadopted) return failed('NotAdopted', unadopted, Requeue.failedSlow, [contentEvent(content, 'Warning', EventReasons.snapshotDeleteError, unadopted)]);
  if (next) return act({ verb: 'deleteSnapshot', snapshotId: next.snapshotId });
  const ref = contentRef(content);
  const status = content.status;
  const recorded = status && (status.snapshotHandle || status.readyToUse !== undefined || status.creationTime || status.restoreSize);
  // As the sidecar: the status cleared first, then the finalizer that held the content.
  return done([
    ...(recorded ? [statusWrite(content, { snapshotHandle: null, readyToUse: null, creationTime: null, restoreSize: null })] : []),
    ...dropFinalizer(content, ref, SnapshotFinalizers.contentBound),
  ]);
}

export async function reconcileSnapshotContent(item: VolumeSnapshotContentItem, scope: Scope): Promise<Settled> {
  const { content } = item;
  if (!isOurContent(content, scope.driverName)) return done();
  const names: Names = { clusterId: scope.clusterId, now: scope.now() };
  if (isContentBeingDeleted(content)) return reconcileDeletion(content, scope, names);
  const annotations = content.metadata.annotations ?? {};
  // Deleted without the common controller's mark: not the sidecar's to act on, unless a
  // CreateSnapshot may still land (then it is found and recorded first).
  if (content.metadata.deletionTimestamp && !(SnapshotAnnotations.beingCreated in annotations)) return done();
  const { source } = content.spec;
  if (content.status?.readyToUse === true) {
    const dynamic = !!source.volumeHandle && !source.snapshotHandle && !(SnapshotAnnotations.groupSnapshotHandle in annotations);
    return dynamic ? reconcileCopy(item, scope, names) : done();
  }
  if (source.snapshotHandle) return reconcilePreProvisioned(content, source.snapshotHandle, scope, names);
  if (SnapshotAnnotations.groupSnapshotHandle in annotations) return reconcileGroupMember(content, scope, names);
  if (!source.volumeHandle) return refuse(content, 'InvalidContent', 'the content names neither spec.source.volumeHandle nor spec.source.snapshotHandle', names);
  // The sidecar does not try again once it recorded a final error.
  if (content.status?.error?.message && !content.status.snapshotHandle) {
    // The mark goes with a final answer; should its removal have been lost, it goes now.
    const writes = dropAnnotation(content, contentRef(content), SnapshotAnnotations.beingCreated);
    return failed('SnapshotCreationFailed', content.status.error.message, Requeue.failedSlow, writes);
  }
  return reconcileDynamic(item, source.volumeHandle, scope, names);
}

async function reconcileDynamic(item: VolumeSnapshotContentItem, volumeId: string, scope: Scope, names: Names): Promise<Settled> {
  const { content, snapshotClass } = item;
  const className = content.spec.volumeSnapshotClassName;
  if (!className) return refuse(content, 'NoSnapshotClass', `failed to take snapshot ${content.metadata.name} without a snapshot class`, names);
  if (!snapshotClass || snapshotClass.metadata.name !== className) {
    return requeue(Requeue.waitForCluster, `VolumeSnapshotClass "${className}" of the content is not known (yet)`);
  }
  if (snapshotClass.driver !== scope.driverName) {
    return refuse(content, 'InvalidSnapshotClass', `VolumeSnapshotClass "${className}" is for driver "${snapshotClass.driver}", not "${scope.driverName}"`, names);
  }
  let spec: SnapshotSpec;
  try {
    spec = snapshotSpecFor({
      parameters: snapshotClass.parameters,
      volumeSnapshotName: content.spec.volumeSnapshotRef.name ?? '',
      volumeSnapshotNamespace: content.spec.volumeSnapshotRef.namespace ?? '',
      volumeSnapshotContentName: content.metadata.name,
    });
  } catch (error) {
    if (error instanceof ParameterError) return refuse(content, 'InvalidParameter', `invalid parameter ${error.message}`, names);
    throw error;
  }
  if (spec.fastSnapshotRestoreZones.length > 0) {
    const known = new Set((await scope.ec2.zones()).map((z) => z.name));
    const unknown = spec.fastSnapshotRestoreZones.find((zone) => !known.has(zone));
    if (unknown) return refuse(content, 'InvalidParameter', `Availability zone ${unknown} is not supported for fast snapshot restore`, names);
  }
  const ref = contentRef(content);
  if (!(SnapshotAnnotations.beingCreated in (content.metadata.annotations ?? {}))) {
    // Write before act: no CreateSnapshot until the content cannot be deleted unseen.
    return requeue(Requeue.recorded, `marking content ${content.metadata.name} before creating its snapshot`, [
      ...ensureAnnotation(content, ref, SnapshotAnnotations.beingCreated, 'yes'),
      ...copyIntent(content, spec.copy),
    ]);
  }
  const name = content.metadata.name;
  const request = { name, volumeId, tags: snapshotTags(spec.tags, scope.registration.extraTags) };
  const inProgress = () => requeue(Requeue.inTransition, `CreateSnapshot for ${name} is already in progress`);
  const settled = await exclusively(`${scope.clusterId}/${name}`, () => converge<CreateObserved, CreateAction>({
    observe: async () => {
      const [snapshots, volume] = await Promise.all([scope.ec2.findSnapshotsByName(name), scope.ec2.getDisk(volumeId)]);
      return { snapshots, volume };
    },
    decide: (observed) => decideCreate(content, spec, request, observed, names),
    perform: async (action, observed) => {
      switch (action.verb) {
        case 'createSnapshot': {
          const created = await scope.ec2.createSnapshot(action.request);
          const snapshots = await scope.ec2.findSnapshotsByName(name);
          const all = snapshots.some((s) => s.snapshotId === created.snapshotId) ? snapshots : [...snapshots, created];
          // Created just now only when it was not there before this request looked.
          const fresh = !observed.snapshots.some((s) => s.snapshotId === created.snapshotId);
          return { ...observed, snapshots: all, ...(fresh && { created: created.snapshotId }) };
        }
        case 'deleteSnapshot': {
          await scope.ec2.deleteSnapshot(action.snapshotId);
          const { created: _, ...rest } = observed;
          return { ...rest, snapshots: observed.snapshots.filter((s) => s.snapshotId !== action.snapshotId) };
        }
        case 'enableFastSnapshotRestores':
          await scope.ec2.enableFastSnapshotRestores(action.snapshotId, action.zones);
          return { ...observed, fastRestoreEnabled: true };
      }
    },
    refused: (action, error, verdict) => refusedCreate(content, action, error, verdict, names),
  }), inProgress);
  // Ready, with a copy to make: the next reconcile (seeing the status applied) makes it.
  if (spec.copy && settled.verdict.outcome === 'done') {
    return { writes: [...settled.writes, ...copyIntent(content, spec.copy)], verdict: { outcome: 'requeue', requeueAfterSeconds: Requeue.recorded, message: `snapshot ready; copying it to ${spec.copy.region}` } };
  }
  return settled;
}

/** The class's snapshot spec for a content, or the ParameterError's message. */
function classSpec(item: VolumeSnapshotContentItem): SnapshotSpec | string | undefined {
  const { content, snapshotClass } = item;
  if (!snapshotClass || snapshotClass.metadata.name !== content.spec.volumeSnapshotClassName) return undefined;
  try {
    return snapshotSpecFor({
      parameters: snapshotClass.parameters,
      volumeSnapshotName: content.spec.volumeSnapshotRef.name ?? '',
      volumeSnapshotNamespace: content.spec.volumeSnapshotRef.namespace ?? '',
      volumeSnapshotContentName: content.metadata.name,
    });
  } catch (error) {
    if (error instanceof ParameterError) return `invalid parameter ${error.message}`;
    throw error;
  }
}

/** A ready dynamic content: its cross-Region copy, when its class asks for one (snapshot-copy.ts). */
async function reconcileCopy(item: VolumeSnapshotContentItem, scope: Scope, names: Names): Promise<Settled> {
  const { content } = item;
  const record = snapshotCopyOf(content);
  if (record?.state === 'completed' || record?.state === 'failed') return done();
  const spec = classSpec(item);
  const raw = content.metadata.annotations?.[SNAPSHOT_COPY_ANNOTATION];
  if (raw !== undefined && !record) return copyFailed(content, 'unknown', `the annotation ${SNAPSHOT_COPY_ANNOTATION} is not a copy record: ${raw}`);
  if (typeof spec === 'string') return record ? copyFailed(content, record.region, spec) : done();
  if (!spec?.copy) {
    if (!record) return done();
    // The copy is under way but its class is not known (yet): its key may be the class's.
    return requeue(Requeue.waitForCluster, `VolumeSnapshotClass "${content.spec.volumeSnapshotClassName ?? ''}" of the content is not known (yet); the copy to ${record.region} waits`);
  }
  const wanted = spec.copy;
  const snapshotId = content.status?.snapshotHandle;
  if (!snapshotId) return done();
  const region = record?.region ?? wanted.region;
  const copyNames = { clusterId: scope.clusterId, region: scope.registration.region };
  const inRegion = scope.ec2.snapshotsIn(region);
  const inProgress = () => requeue(Requeue.inTransition, `CopySnapshot for ${content.metadata.name} is already in progress`);
  return exclusively(`${scope.clusterId}/${content.metadata.name}/copy`, () => converge<CopyObserved, CopyAction>({
    observe: async () => {
      const lookUp = async (): Promise<Snapshot[] | Ec2Error> => {
        if (!record || record.state === 'waiting') return [];
        try {
          return await inRegion.findSnapshotsByName(content.metadata.name);
        } catch (error) {
          // Refused in that Region (IAM, a Region the account cannot use): the copy's answer, not a retry.
          if (error instanceof Ec2Error && error.kind !== 'transient') return error;
          throw error;
        }
      };
      const [source, copies] = await Promise.all([scope.ec2.getSnapshot(snapshotId), lookUp()]);
      if (!source) throw new Ec2Error('notFound', 'InvalidSnapshot.NotFound', `snapshot ${snapshotId} of content ${content.metadata.name} is gone; nothing to copy`);
      return copies instanceof Ec2Error ? { source, copies: [], refused: copies.message } : { source, copies };
    },
    decide: (observed) => decideCopy(content, wanted, observed, copyNames),
    perform: async (action, observed) => {
      switch (action.verb) {
        case 'copySnapshot': {
          const made = await scope.ec2.snapshotsIn(action.region).copySnapshot(action.request);
          const copies = await scope.ec2.snapshotsIn(action.region).findSnapshotsByName(action.request.name);
          const all = copies.some((s) => s.snapshotId === made.snapshotId) ? copies : [...copies, made];
          const fresh = !observed.copies.some((s) => s.snapshotId === made.snapshotId);
          return { ...observed, copies: all, ...(fresh && { created: made.snapshotId }) };
        }
        case 'deleteSnapshotIn': {
          await scope.ec2.snapshotsIn(action.region).deleteSnapshot(action.snapshotId);
          const { created: _, ...rest } = observed;
          return { ...rest, copies: observed.copies.filter((s) => s.snapshotId !== action.snapshotId) };
        }
      }
    },
    refused: (action, error, verdict) => refusedCopy(content, action, error, verdict),
  }), inProgress);
}

/** Pure: EC2 refused a step (a transient error never gets here: it is a requeue). */
function refusedCreate(content: VolumeSnapshotContent, action: CreateAction, _error: Ec2Error, verdict: Verdict, names: Names): Settled {
  if (verdict.outcome !== 'failed') return { writes: [], verdict };
  if (action.verb === 'deleteSnapshot') return { writes: [], verdict };
  const what = action.verb === 'createSnapshot' ? 'failed to take snapshot of the volume' : 'failed to enable fast snapshot restores for';
  const target = action.verb === 'createSnapshot' ? action.request.volumeId : action.snapshotId;
  return refuse(content, verdict.reason, `${what} ${target}: ${verdict.message}`, names);
}

/**
 * A member of a group snapshot (the sidecar's `groupSnapshotMember`): never a CreateSnapshot —
 * the snapshot was cut with the group. Until the common controller records its snapshot handle
 * there is nothing to do; then the snapshot is checked as a pre-provisioned one's is, and must be
 * of the content's volume.
 */
async function reconcileGroupMember(content: VolumeSnapshotContent, scope: Scope, names: Names): Promise<Settled> {
  const handle = content.status?.snapshotHandle;
  const group = content.metadata.annotations?.[SnapshotAnnotations.groupSnapshotHandle];
  if (!handle) return requeue(Requeue.waitForCluster, `content ${content.metadata.name} is a member of group snapshot ${group}: its snapshot handle is not recorded yet`);
  return reconcilePreProvisioned(content, handle, scope, names, content.spec.source.volumeHandle ?? undefined);
}

async function reconcilePreProvisioned(content: VolumeSnapshotContent, snapshotId: string, scope: Scope, names: Names, volumeId?: string): Promise<Settled> {
  const check = EventReasons.snapshotContentCheckFailed;
  const snapshot = await scope.ec2.getSnapshot(snapshotId);
  if (!snapshot) return refuse(content, 'SnapshotNotFound', `snapshot ${snapshotId} does not exist`, names, check);
  if (!isOwnedSnapshot(snapshot, scope.clusterId)) {
    return refuse(content, 'NotOwned', `snapshot ${snapshotId} is not owned by cluster "${scope.clusterId}" (${notOwnedWhy(snapshot.tags, scope.clusterId)}); volhook uses only its cluster's snapshots`, names, check);
  }
  const unadopted = snapshotNotAdoptedProblem(snapshot, scope.clusterId, 'restore volumes from it');
  if (unadopted) return refuse(content, 'NotAdopted', unadopted, names, check);
  if (snapshot.state === 'error') return refuse(content, 'SnapshotFailed', `snapshot ${snapshotId} failed${snapshot.stateMessage ? `: ${snapshot.stateMessage}` : ''}`, names, check);
  if (volumeId !== undefined && snapshot.volumeId !== volumeId) {
    return refuse(content, 'SnapshotMismatch', `snapshot ${snapshotId} is of volume ${snapshot.volumeId}, not of the content's volume ${volumeId}`, names, check);
  }
  return record(content, snapshot);
}

async function reconcileDeletion(content: VolumeSnapshotContent, scope: Scope, names: Names): Promise<Settled> {
  const ref = contentRef(content);
  // Retain: the snapshot and its copy are the user's.
  if (content.spec.deletionPolicy !== 'Delete') return done(dropFinalizer(content, ref, SnapshotFinalizers.contentBound));
  const recorded = content.status?.snapshotHandle ?? undefined;
  const dynamic = !!content.spec.source.volumeHandle && !content.spec.source.snapshotHandle;
  // The copy's Region is on the content from before CopySnapshot could be sent (write before act).
  // A copy never sent (`waiting`), or refused before one was made, has nothing to look for.
  const copyRecord = dynamic ? copyMayExist(snapshotCopyOf(content)) : undefined;
  const observe = async (): Promise<DeleteObserved> => {
    const inRegion = copyRecord && scope.ec2.snapshotsIn(copyRecord.region);
    const [byId, byName, copyById, copiesByName] = await Promise.all([
      recorded ? scope.ec2.getSnapshot(recorded) : Promise.resolve(undefined),
      // A dynamic content's snapshot is found by its name too: one a lost answer never recorded.
      dynamic ? scope.ec2.findSnapshotsByName(content.metadata.name) : Promise.resolve([]),
      inRegion && copyRecord?.snapshotId ? inRegion.getSnapshot(copyRecord.snapshotId) : Promise.resolve(undefined),
      inRegion ? inRegion.findSnapshotsByName(content.metadata.name) : Promise.resolve([]),
    ]);
    const all = [...(byId ? [byId] : []), ...byName.filter((s) => s.snapshotId !== byId?.snapshotId)];
    const foreign = all.find((s) => !isOwnedSnapshot(s, scope.clusterId));
    const owned = all.filter((s) => isOwnedSnapshot(s, scope.clusterId));
    if (!copyRecord) return { owned, foreign };
    const copies = [...(copyById ? [copyById] : []), ...copiesByName.filter((s) => s.snapshotId !== copyById?.snapshotId)];
    return { owned, foreign, copies: { region: copyRecord.region, ...splitCopies(copies, scope.clusterId) } };
  };
  return converge<DeleteObserved, DeleteAction>({
    observe,
    decide: (observed) => decideDelete(content, observed, names),
    perform: async (action, observed) => {
      if (action.verb === 'deleteSnapshotIn') {
        await scope.ec2.snapshotsIn(action.region).deleteSnapshot(action.snapshotId);
        const copies = observed.copies && { ...observed.copies, owned: observed.copies.owned.filter((s) => s.snapshotId !== action.snapshotId) };
        return { ...observed, ...(copies && { copies }) };
      }
      await scope.ec2.deleteSnapshot(action.snapshotId);
      return { ...observed, owned: observed.owned.filter((s) => s.snapshotId !== action.snapshotId) };
    },
    refused: (_action, _error, verdict) =>
      verdict.outcome === 'done' ? { writes: [], verdict } : { writes: [contentEvent(content, 'Warning', EventReasons.snapshotDeleteError, `Failed to delete snapshot: ${verdict.message}`)], verdict },
  });
}

function copyMayExist(record: SnapshotCopyRecord | undefined): SnapshotCopyRecord | undefined {
  if (!record || record.state === 'waiting' || (record.state === 'failed' && !record.snapshotId)) return undefined;
  return record;
}

/** The class's and the registration's tags, reserved keys dropped from the registration's (the class's are refused earlier). */
function snapshotTags(classTags: Record<string, string>, extraTags: Record<string, string>): Record<string, string> {
  const extra = Object.fromEntries(Object.entries(extraTags).filter(([key]) => !isReservedTagKey(key)));
  return { ...extra, ...classTags };
}
